// A hostile agent cannot crash the challenger or leave an order without a verdict: huge error texts
// from every RPC (startSession as a Status, a plain exception or a disconnect; round; finish; abort)
// and a huge device note are cut where they enter (failure.h PeerText), and every session ends in
// a signed verdict and receipt in the ledger, in process (pipe) and in wave runs over TCP (serve).
// threat-model: T-HOSTILE-AGENT
#include <gtest/gtest.h>
#include <kj/async-io.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

#include "challenger/fleet/plan_builder.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_record_sink.h"
#include "challenger/session/session_plan.h"
#include "challenger/session/session_runner.h"
#include "challenger/session/wave_sync.h"
#include "proto/codec.h"
#include "proto/signing.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

using proto::FailureReason;
using proto::LedgerRecordKind;
using testing::AgentLog;
using testing::Cheat;
using testing::Deviation;
using testing::DeviationKind;

// A short-capacity report whose note is 512 KiB of the huge text (a fill report is at most 1 MiB,
// proto/codec.h: the note stays well under that).
Deviation HugeNote() {
  return testing::ShortCapacity(testing::HugeAgentText(size_t{5} << 20).substr(0, size_t{512} << 10));
}

// What the huge text's first bytes ("agent text\n\x01\xff") become once sanitized.
const std::string kSanitizedStart = "agent text\\x0a\\x01\xef\xbf\xbd";

TEST(PeerTextTest, ShortTextIsKeptAndControlsAndBadUtf8AreReplaced) {
  EXPECT_EQ(PeerText("busy: test refusal"), "busy: test refusal");
  EXPECT_EQ(PeerText(""), "");
  EXPECT_EQ(PeerText("a\nb\tc\x7f"), "a\\x0ab\\x09c\\x7f");
  EXPECT_EQ(PeerText("caf\xc3\xa9 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xf0\x9f\x98\x80");  // valid UTF-8 stays
  EXPECT_EQ(PeerText("\xc2\x85"), "\\u0085");                                           // C1 control
  EXPECT_EQ(PeerText("x\xffy"), "x\xef\xbf\xbdy");                                      // stray byte
  EXPECT_EQ(PeerText("\xc0\x80"), "\xef\xbf\xbd\xef\xbf\xbd");                          // overlong NUL
  EXPECT_EQ(PeerText("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");          // surrogate
  EXPECT_EQ(PeerText("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");                          // truncated sequence
  EXPECT_EQ(PeerText(std::string("a\0b", 3)), "a\\x00b");
}

TEST(PeerTextTest, LongTextIsCutWithANotice) {
  const std::string text(5 << 20, 'x');
  const std::string cut = PeerText(text);
  EXPECT_LE(cut.size(), kMaxPeerTextBytes);
  EXPECT_GT(cut.size(), kMaxPeerTextBytes - 40);
  const size_t kept = cut.find("\xe2\x80\xa6 (");
  ASSERT_NE(kept, std::string::npos) << cut;
  EXPECT_EQ(cut.substr(0, kept), std::string(kept, 'x'));
  EXPECT_EQ(cut.substr(kept), "\xe2\x80\xa6 (" + std::to_string(text.size() - kept) + " bytes cut)");
  // Exactly at the limit: kept whole; one byte more: cut.
  EXPECT_EQ(PeerText(std::string(1024, 'y')), std::string(1024, 'y'));
  EXPECT_NE(PeerText(std::string(1025, 'y')).find("bytes cut)"), std::string::npos);
  // Other limits, and the minimum of 64.
  EXPECT_LE(PeerText(text, 4096).size(), 4096u);
  EXPECT_LE(PeerText(text, 1).size(), 64u);
}

TEST(PeerTextTest, CutsOnCharacterBoundariesAndIsIdempotent) {
  std::string accents;
  for (int i = 0; i < 1000; ++i) accents += "\xc3\xa9";  // 2000 bytes of U+00E9
  std::string controls(3000, '\n');                      // each grows to 4 bytes
  for (const std::string& text : {accents, controls, testing::HugeAgentText(100'000), std::string("short")}) {
    const std::string once = PeerText(text);
    EXPECT_LE(once.size(), kMaxPeerTextBytes);
    EXPECT_EQ(PeerText(once), once);                        // valid, safe, within the limit
    EXPECT_EQ(PeerText(once, kMaxFailureTextBytes), once);  // a larger limit changes nothing
  }
  const std::string cut = PeerText(accents);
  const size_t notice = cut.find("\xe2\x80\xa6");
  ASSERT_NE(notice, std::string::npos);
  EXPECT_EQ(notice % 2, 0u);  // whole characters only
  EXPECT_NE(cut.find("(" + std::to_string(accents.size() - notice) + " bytes cut)"), std::string::npos) << cut;
}

TEST(PeerTextTest, HexIsCut) {
  const std::vector<uint8_t> digest(32, 0xab), huge(1 << 20, 0xcd);
  std::string want;
  for (int i = 0; i < 32; ++i) want += "ab";
  EXPECT_EQ(PeerHex(digest.data(), digest.size()), want);
  const std::string shown = PeerHex(huge.data(), huge.size());
  EXPECT_LT(shown.size(), 200u);
  EXPECT_NE(shown.find("(1048576 bytes)"), std::string::npos) << shown;
}

TEST(PeerTextTest, FailureTextsAreBounded) {
  const SessionFailure f = SessionFailure::Of(FailureReason::PROTOCOL_ERROR, std::string(1 << 20, 'z'));
  EXPECT_LE(f.text.size(), kMaxFailureTextBytes);
  EXPECT_NE(f.text.find("bytes cut)"), std::string::npos);
}

class HostileAgentTest : public ::testing::Test {
 protected:
  HostileAgentTest() : io_(kj::setupAsyncIo()) {}
  ~HostileAgentTest() noexcept override {}

  SessionOutcome Run(Deviation cheat, const Profile& profile, RecordSink* records = nullptr) {
    auto plan = BuildPlan(inventory_, "node-a", profile, LoneSessionWaveContext(inventory_, "node-a"), clock_);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    std::unique_ptr<testing::PipeConnector> pipe;
    cheat.disconnect = [&pipe] { pipe->Cut(); };
    log_ = AgentLog{};
    auto agent = testing::TestAgent(std::move(cheat), &log_, &clock_, testing::TestKey(0x33), authority_.public_key,
                                    challenger_.public_key);
    pipe = std::make_unique<testing::PipeConnector>(io_, kj::mv(agent));
    SessionEnv env;
    env.clock = &clock_;
    env.timer = &io_.provider->getTimer();
    env.wait_scope = &io_.waitScope;
    env.records = records != nullptr ? records : &sink_;
    env.threads = 2;
    SessionRunner runner(*plan, SessionKeys{authority_, challenger_}, env);
    auto outcome = runner.Run(*pipe);
    EXPECT_TRUE(outcome.ok()) << outcome.status().ToString();
    return std::move(outcome).value();
  }

  // The verdict verifies, is small, and carries the failure exactly as the outcome has it.
  void ExpectCutFailureInVerdict(const SessionOutcome& outcome, FailureReason reason) {
    ASSERT_FALSE(outcome.pass);
    EXPECT_EQ(outcome.failure.reason, reason) << outcome.failure.Describe();
    EXPECT_LE(outcome.failure.text.size(), kMaxFailureTextBytes);
    EXPECT_NE(outcome.failure.text.find(kSanitizedStart), std::string::npos) << outcome.failure.text;
    EXPECT_NE(outcome.failure.text.find("bytes cut)"), std::string::npos) << outcome.failure.text;
    EXPECT_EQ(PeerText(outcome.failure.text, kMaxFailureTextBytes), outcome.failure.text);
    EXPECT_LT(outcome.verdict.payload.size(), size_t{64} << 10);
    auto verdict = proto::VerifyAndParse<proto::Verdict>(outcome.verdict, challenger_.public_key);
    ASSERT_TRUE(verdict.ok()) << verdict.status().ToString();
    EXPECT_FALSE(verdict->root().getPass());
    EXPECT_EQ(verdict->root().getFailure().getReason(), reason);
    EXPECT_EQ(std::string(verdict->root().getFailure().getText().cStr()), outcome.failure.text);
    EXPECT_TRUE(outcome.ledger.ok()) << outcome.ledger.ToString();
    ASSERT_TRUE(outcome.receipt.has_value());
    ASSERT_TRUE(outcome.verdict_sequence.has_value());
  }

  std::vector<LedgerRecordKind> Kinds() const {
    std::vector<LedgerRecordKind> kinds;
    for (const auto& r : sink_.records()) kinds.push_back(r.kind);
    return kinds;
  }

  kj::AsyncIoContext io_;
  FakeClock clock_;
  const proto::KeyPair authority_ = testing::TestKey(0x11);
  const proto::KeyPair challenger_ = testing::TestKey(0x22);
  const Inventory inventory_ = testing::TestInventory();
  testing::MemoryRecordSink sink_;
  AgentLog log_;
};

// The tester's repro: startSession fails with a 5 MiB error. Before: CHECK failure (SIGABRT).
TEST_F(HostileAgentTest, HugeRefusalIsCutAndRecorded) {
  SessionOutcome outcome = Run(Cheat(DeviationKind::kHugeRefusal), testing::TestProfile());
  ExpectCutFailureInVerdict(outcome, FailureReason::ORDER_REFUSED);
  EXPECT_EQ(outcome.failure.text.rfind("startSession: FAILED_PRECONDITION: " + kSanitizedStart, 0), 0u)
      << outcome.failure.text;
  EXPECT_EQ(Kinds(), (std::vector<LedgerRecordKind>{LedgerRecordKind::ORDER, LedgerRecordKind::ROUND_LOG,
                                                    LedgerRecordKind::VERDICT, LedgerRecordKind::RECEIPT}));
  // A refused order leaves the agent holding nothing: no abort is sent (it would only be logged as
  // ignored on the agent's side).
  EXPECT_EQ(log_.aborts, 0);
}

TEST_F(HostileAgentTest, HugePlainExceptionIsProtocolError) {
  SessionOutcome outcome = Run(Cheat(DeviationKind::kHugeException), testing::TestProfile());
  ExpectCutFailureInVerdict(outcome, FailureReason::PROTOCOL_ERROR);
  EXPECT_EQ(outcome.failure.text.rfind("startSession: ", 0), 0u) << outcome.failure.text;
}

TEST_F(HostileAgentTest, HugeDisconnectDescriptionIsCut) {
  SessionOutcome outcome = Run(Cheat(DeviationKind::kHugeDisconnect), testing::TestProfile());
  ExpectCutFailureInVerdict(outcome, FailureReason::DISCONNECTED);
  EXPECT_EQ(log_.aborts, 0);  // the connection counts as lost: nothing to abort over
}

TEST_F(HostileAgentTest, HugeRoundAndAbortErrorsAreCut) {
  SessionOutcome outcome = Run(Cheat(DeviationKind::kHugeRoundError), testing::TestProfile());
  ExpectCutFailureInVerdict(outcome, FailureReason::AGENT_ABORTED);
  EXPECT_TRUE(outcome.failure.has_round);
  EXPECT_EQ(outcome.failure.round, 2u);
  EXPECT_EQ(outcome.rounds.size(), 3u);
  EXPECT_EQ(log_.aborts, 1);  // and its huge error only reached the log, cut
  EXPECT_EQ(Kinds().back(), LedgerRecordKind::RECEIPT);
}

TEST_F(HostileAgentTest, HugeFinishErrorSupersedesThePass) {
  SessionOutcome outcome = Run(Cheat(DeviationKind::kHugeFinishError), testing::TestProfile());
  ExpectCutFailureInVerdict(outcome, FailureReason::AGENT_ABORTED);
  EXPECT_EQ(outcome.failure.text.rfind("finish: INTERNAL: " + kSanitizedStart, 0), 0u) << outcome.failure.text;
  ASSERT_TRUE(outcome.superseded_verdict.has_value());
  auto first = proto::VerifyAndParse<proto::Verdict>(*outcome.superseded_verdict, challenger_.public_key);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->root().getPass());
  EXPECT_EQ(Kinds(), (std::vector<LedgerRecordKind>{LedgerRecordKind::ORDER, LedgerRecordKind::DEVICE_FILL_NOTICE,
                                                    LedgerRecordKind::DEVICE_FILL_NOTICE, LedgerRecordKind::FILL_REPORT,
                                                    LedgerRecordKind::ROUND_LOG, LedgerRecordKind::VERDICT,
                                                    LedgerRecordKind::VERDICT, LedgerRecordKind::RECEIPT}));
}

TEST_F(HostileAgentTest, HugeDeviceNoteIsCut) {
  SessionOutcome outcome = Run(HugeNote(), testing::TestProfile());
  ExpectCutFailureInVerdict(outcome, FailureReason::SHORT_CAPACITY);
  EXPECT_EQ(outcome.failure.device, "GPU-test-0");
  EXPECT_NE(outcome.failure.text.find("agent's note: " + kSanitizedStart), std::string::npos);
  // The note's own cut (1 KiB) leaves the whole failure text well under its limit.
  EXPECT_LT(outcome.failure.text.size(), kMaxPeerTextBytes + 512);
}

// The largest verdict the limits allow still signs: 4096 rounds, 256 devices with 256-byte names,
// the longest failure text.
TEST(VerdictSizeTest, LargestAllowedVerdictSigns) {
  Inventory inventory;
  InventoryNode node;
  node.name = std::string(kMaxInventoryNameBytes, 'n');
  node.address = "127.0.0.1:7700";
  node.public_key = testing::TestKeyPublic(0x33);
  for (size_t i = 0; i < kMaxDevicesPerNode; ++i) {
    std::string selector = std::to_string(i);
    selector.resize(kMaxInventoryNameBytes, 's');
    node.devices.push_back({selector, std::string(kMaxInventoryNameBytes, 'm'), uint64_t{64} * 32 * 4});
  }
  inventory.nodes.push_back(node);
  inventory.reserve_bytes_by_model[std::string(kMaxInventoryNameBytes, 'm')] = 0;
  Profile profile = testing::TestProfile();
  profile.rounds = kMaxProfileRounds;
  profile.labels_per_round = 4;  // 1024 labels per round, 2^22 per session
  FakeClock clock;
  auto plan = BuildPlan(inventory, node.name, profile, {}, clock);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(SignOrder(*plan, SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}).ok());

  VerdictFacts facts;
  facts.plan = &*plan;
  facts.failure = SessionFailure::Of(FailureReason::PROTOCOL_ERROR, std::string(1 << 20, 'f'));
  facts.failure.device = plan->devices.back().selector;
  for (uint32_t r = 0; r < profile.rounds; ++r) facts.rounds.push_back({r, UINT64_MAX, UINT32_MAX, true, true});
  facts.chunks_checked.assign(plan->devices.size(), 4);
  facts.bytes_held.assign(plan->devices.size(), UINT64_MAX);
  const VerdictSummary summary = SummarizeVerdict(facts);
  auto signed_verdict = SignVerdict(facts, summary, testing::TestKey(0x22));
  ASSERT_TRUE(signed_verdict.ok()) << signed_verdict.status().ToString();
  EXPECT_LT(signed_verdict->payload.size(), proto::kMaxVerdictBytes / 4);
}

// Every hostile session's records go into a real ledger, which verifies afterwards.
TEST_F(HostileAgentTest, RealLedgerTakesEveryHostileSession) {
  char path[] = "/tmp/wp-hostile-ledger-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::remove(path);
  {
    auto ledger = Ledger::Open(path, challenger_, clock_);
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    LedgerRecordSink sink(ledger->get());
    size_t entries = 0, verdicts = 0;
    for (const Deviation& cheat : {Cheat(DeviationKind::kHugeRefusal), Cheat(DeviationKind::kHugeException),
                                   Cheat(DeviationKind::kHugeDisconnect), Cheat(DeviationKind::kHugeRoundError),
                                   Cheat(DeviationKind::kHugeFinishError), HugeNote()}) {
      SessionOutcome outcome = Run(cheat, testing::TestProfile(), &sink);
      EXPECT_FALSE(outcome.pass);
      EXPECT_TRUE(outcome.ledger.ok()) << static_cast<int>(cheat.kind) << ": " << outcome.ledger.ToString();
      EXPECT_TRUE(outcome.verdict_sequence.has_value()) << static_cast<int>(cheat.kind);
      entries += outcome.ledger_sequences.size();
      verdicts += outcome.verdict_sequence.has_value();
    }
    EXPECT_EQ(verdicts, 6u);
    auto head = (*ledger)->Verify(challenger_.public_key);
    ASSERT_TRUE(head.ok()) << head.status().ToString();
    EXPECT_EQ(head->entry_count, entries);
  }
  std::remove(path);
  std::remove((std::string(path) + "-wal").c_str());
  std::remove((std::string(path) + "-shm").c_str());
}

// serve's wave runs over TCP: a hostile node fails with a cut text; the other node's session runs
// to its end (its wave is then not held).
Profile TcpProfile() {
  Profile p = testing::TestProfile();
  p.rounds = 8;
  p.round_deadline_us = 500'000;  // loopback on a shared machine: generous
  return p;
}

void ExpectWaveSurvives(DeviationKind hostile, FailureReason reason) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33));
  auto b = testing::ServeTestAgent(testing::TestKey(0x44), Cheat(hostile));
  const Inventory inventory = testing::TestInventoryAt(*a, *b);
  testing::MemoryRecordSink sink;
  const TcpSessionOptions options = testing::TcpTestOptions();
  auto results = RunWave(inventory, inventory.waves[0], TcpProfile(),
                         SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0].outcome.ok()) << results[0].outcome.status().ToString();
  ASSERT_TRUE(results[1].outcome.ok()) << results[1].outcome.status().ToString();
  const SessionOutcome& good = *results[0].outcome;
  const SessionOutcome& bad = *results[1].outcome;
  EXPECT_TRUE(good.pass) << good.failure.Describe();
  EXPECT_GE(good.rounds.size(), 9u);  // 8 proof rounds, then holding rounds until the wave is done
  EXPECT_EQ(bad.failure.reason, reason) << bad.failure.Describe();
  EXPECT_LE(bad.failure.text.size(), kMaxFailureTextBytes);
  EXPECT_NE(bad.failure.text.find("bytes cut)"), std::string::npos) << bad.failure.text;
  for (const AssumptionResult& r : good.summary.assumptions) {
    if (r.name == kWaveComplete) EXPECT_FALSE(r.held) << r.detail;
  }
  int verdicts = 0, receipts = 0;
  for (const auto& r : sink.records()) {
    verdicts += r.kind == LedgerRecordKind::VERDICT;
    receipts += r.kind == LedgerRecordKind::RECEIPT;
  }
  EXPECT_EQ(verdicts, 2);
  EXPECT_EQ(receipts, 2);
}

TEST(HostileWaveTest, HugeRefusalInAWaveRun) {
  ExpectWaveSurvives(DeviationKind::kHugeRefusal, FailureReason::ORDER_REFUSED);
}

TEST(HostileWaveTest, HugeRoundErrorInAWaveRun) {
  ExpectWaveSurvives(DeviationKind::kHugeRoundError, FailureReason::AGENT_ABORTED);
}

// A member whose session never reaches the runner (here: no plan-time error, but a session that
// ends at once) still lets the others past the wave's barriers: WaveSync::Leave.
TEST(WaveSyncTest, LeaveReleasesTheOthers) {
  WaveSync sync({"a", "b"});
  std::vector<std::string> not_held;
  std::thread a([&] {
    sync.ArriveReady("a", true);
    sync.ReportFilled("a", true);
    sync.ReportProofDone("a", true);
    not_held = sync.ArriveReleasing("a", true);
  });
  sync.Leave("b");  // b arrived nowhere
  a.join();
  EXPECT_EQ(not_held, std::vector<std::string>{"b"});
  sync.Leave("b");  // again: no-op
}

// The wave is done only when every member reported its fill and its proof rounds; a failed member
// counts as done at once, so the others stop waiting for it.
// threat-model: T-WAVE-SHELL-GAME
TEST(WaveSyncTest, DoneNeedsEveryMembersFillAndProof) {
  WaveSync sync({"a", "b", "c"});
  std::thread ready_b([&] { sync.ArriveReady("b", true); });
  std::thread ready_c([&] { sync.ArriveReady("c", false); });
  sync.ArriveReady("a", true);
  ready_b.join();
  ready_c.join();
  EXPECT_FALSE(sync.AllFilled());
  sync.ReportFilled("a", true);
  EXPECT_FALSE(sync.AllFilled());  // b has not reported; c failed (counts as reported)
  sync.ReportFilled("b", true);
  EXPECT_TRUE(sync.AllFilled());
  EXPECT_FALSE(sync.WaveDone());
  sync.ReportProofDone("a", true);
  EXPECT_FALSE(sync.WaveDone());
  sync.ReportProofDone("b", false);
  EXPECT_TRUE(sync.WaveDone());
  std::vector<std::string> seen_by_a;
  std::thread release_b([&] { sync.ArriveReleasing("b", false); });
  std::thread release_c([&] { sync.Leave("c"); });
  seen_by_a = sync.ArriveReleasing("a", true);
  release_b.join();
  release_c.join();
  EXPECT_EQ(seen_by_a, (std::vector<std::string>{"b", "c"}));
}

}  // namespace
}  // namespace wipeproof
