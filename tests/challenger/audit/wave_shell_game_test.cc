// The wave shell game (issue 11 §2, threat-model "A wave is challenged together"): a node that has
// answered the rounds it expects drops its labels to take a neighbour's checkpoint while the
// neighbour, still filling, relabels the memory it freed. Rounds are never disclosed, and the proof
// rounds (q_d labels per device, the only rounds the bound counts) go to every member only once
// every member has reported its fill: before that a filled node gets holding rounds (q_d / 8). A node
// that drops a fraction f of its chunks before its neighbour's fill therefore meets all R proof
// rounds over dropped memory, and passes them with probability (1 - f)^(R * q * D). Over real
// loopback TCP and TLS, with the system clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "adversary/relay_agent.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/audit/wave_audit.h"
#include "challenger/session/wave_verdict.h"
#include "proto/codec.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

using testing::Deviation;
using testing::DeviationKind;

constexpr uint32_t kProofRounds = 8;
constexpr double kDropped = 0.9;  // of each device's chunks, after the proof rounds

Profile ShellGameProfile() {
  Profile p = testing::TestProfile();
  p.rounds = kProofRounds;
  p.round_deadline_us = 500'000;  // loopback on a shared machine: generous
  return p;
}

adversary::RelayDelays SlowFill() {
  adversary::RelayDelays delays;
  delays.fill_us = 300'000;
  return delays;
}

// node-b: honest, its fill 300 ms late by default (still filling while node-a has filled).
std::unique_ptr<adversary::LoopbackAgentServer> ServeSlowNeighbour(adversary::RelayDelays delays = SlowFill()) {
  return std::make_unique<adversary::LoopbackAgentServer>(
      [delays](kj::Timer& timer) -> kj::Own<proto::ProverAgent::Server> {
        return kj::heap<adversary::RelayAgent>(
            proto::ProverAgent::Client(testing::TestAgent({}, nullptr, nullptr, testing::TestKey(0x44))), delays,
            &timer);
      },
      testing::TestKey(0x44), testing::TestCertificate(0x22));
}

struct WaveRun {
  SessionOutcome a, b;
  bool wave_pass = false;
  std::vector<testing::StoredRecord> records;  // the ledger's records, in order
};

WaveRun RunOnce(const Deviation& a_deviation, adversary::RelayDelays b_delays = SlowFill()) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33), a_deviation);
  auto b = ServeSlowNeighbour(b_delays);
  const Inventory inventory = testing::TestInventoryAt(*a, *b);
  testing::MemoryRecordSink sink;
  const TcpSessionOptions options = testing::TcpTestOptions();
  std::optional<proto::SignedEnvelope> wave_verdict;
  auto results = RunWave(inventory, inventory.waves[0], ShellGameProfile(),
                         SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options, &wave_verdict);
  WaveRun run;
  EXPECT_EQ(results.size(), 2u);
  if (results.size() != 2 || !results[0].outcome.ok() || !results[1].outcome.ok()) {
    ADD_FAILURE() << "a wave member had no session";
    return run;
  }
  run.a = *results[0].outcome;
  run.b = *results[1].outcome;
  run.records = sink.records();
  if (wave_verdict) {
    auto parsed = proto::VerifyAndParse<proto::WaveVerdict>(*wave_verdict, testing::TestKey(0x22).public_key);
    run.wave_pass = parsed.ok() && parsed->root().getPass();
  }
  return run;
}

// threat-model: T-WAVE-SHELL-GAME
TEST(WaveShellGameTest, TheHonestSlowWavePassesAndProvesOnlyAfterTheLastFill) {
  for (int i = 0; i < 3; ++i) {
    WaveRun run = RunOnce({});
    EXPECT_TRUE(run.a.pass) << run.a.failure.Describe();
    EXPECT_TRUE(run.b.pass) << run.b.failure.Describe();
    EXPECT_TRUE(run.wave_pass);
    // node-a filled first: it was probed by holding rounds while node-b filled, and its proof rounds
    // (all it the bound counts) left only after node-b's fill report. Both orders left together, so
    // the two sessions' clocks start within a few milliseconds of each other.
    ASSERT_FALSE(run.a.rounds.empty());
    EXPECT_FALSE(run.a.rounds[0].proof) << "node-a's first round is the holding round of its notice";
    uint32_t proof_rounds = 0;
    for (const RoundRecord& r : run.a.rounds) {
      if (!r.proof) continue;
      ++proof_rounds;
      EXPECT_GE(r.sent_after_order_us + 50'000, run.b.fill_us)
          << "node-a's proof round " << r.round << " left before node-b reported filled";
    }
    EXPECT_EQ(proof_rounds, kProofRounds);
  }
}

// The audit of the wave verdict (wave_audit.h) over the ledger's records.
WaveAudit AuditWave(const std::vector<testing::StoredRecord>& records) {
  std::vector<VerifiedEntry> entries;
  for (size_t i = 0; i < records.size(); ++i) {
    VerifiedEntry e;
    e.sequence = i;
    e.kind = records[i].kind;
    e.record = records[i].bytes;
    e.session_id = records[i].session_id;
    entries.push_back(std::move(e));
  }
  std::map<proto::Bytes, std::vector<const VerifiedEntry*>> sessions;
  const VerifiedEntry* wave = nullptr;
  for (const VerifiedEntry& e : entries) {
    if (e.kind == proto::LedgerRecordKind::WAVE_VERDICT) wave = &e;
    if (!e.session_id.empty()) sessions[e.session_id].push_back(&e);
  }
  if (wave == nullptr) {
    WaveAudit none;
    none.status = NotFoundError("no wave verdict");
    return none;
  }
  return AuditWaveVerdict(*wave, sessions, testing::TestKey(0x22).public_key);
}

enum class Placed { kWaveClock, kWallClockOnly, kWaveClockOnly };

// The challenger re-signs `node`'s verdict with `edit` applied and the wave verdict over its new
// digest with `edit_wave` applied (given the digests' list index of `node`).
std::vector<testing::StoredRecord> ResignMember(
    std::vector<testing::StoredRecord> records, const std::string& node,
    const std::function<void(proto::Verdict::Builder)>& edit,
    const std::function<void(proto::WaveVerdict::Builder, unsigned member)>& edit_wave) {
  const proto::KeyPair challenger = testing::TestKey(0x22);
  proto::Bytes old_payload, new_payload;
  for (testing::StoredRecord& r : records) {
    if (r.kind != proto::LedgerRecordKind::VERDICT) continue;
    auto envelope = proto::DecodeEnvelope(proto::AsView(r.bytes));
    auto verdict = proto::VerifyAndParse<proto::Verdict>(*envelope, challenger.public_key);
    if (!verdict.ok() || std::string(verdict->root().getNodeName().cStr()) != node) continue;
    capnp::MallocMessageBuilder forged;
    forged.setRoot(verdict->root());
    auto v = forged.getRoot<proto::Verdict>();
    edit(v);
    auto signed_verdict = proto::SignMessage(v.asReader(), challenger);
    old_payload = envelope->payload;
    new_payload = signed_verdict->payload;
    r.bytes = proto::EncodeEnvelope(*signed_verdict);
  }
  for (testing::StoredRecord& r : records) {
    if (r.kind != proto::LedgerRecordKind::WAVE_VERDICT) continue;
    auto envelope = proto::DecodeEnvelope(proto::AsView(r.bytes));
    auto wave = proto::VerifyAndParse<proto::WaveVerdict>(*envelope, challenger.public_key);
    capnp::MallocMessageBuilder forged;
    forged.setRoot(wave->root());
    auto w = forged.getRoot<proto::WaveVerdict>();
    const proto::Digest old_digest = proto::Blake2b256(proto::AsView(old_payload));
    const proto::Digest new_digest = proto::Blake2b256(proto::AsView(new_payload));
    for (unsigned i = 0; i < w.getVerdictDigests().size(); ++i) {
      auto d = w.getVerdictDigests()[i];
      if (d.size() == old_digest.size() && std::equal(d.begin(), d.end(), old_digest.begin())) {
        w.getVerdictDigests().set(i, capnp::Data::Reader(new_digest.data(), new_digest.size()));
      }
    }
    for (unsigned i = 0; i < w.getNodeNames().size(); ++i) {
      if (std::string(w.getNodeNames()[i].cStr()) == node) edit_wave(w, i);
    }
    r.bytes = proto::EncodeEnvelope(*proto::SignMessage(w.asReader(), challenger));
  }
  return records;
}

// The challenger re-signs `node`'s verdict with its order sent `delta_us` later (its whole timeline
// moved, so its own session stays consistent) and the wave verdict over the new digest, with the
// member's order moved as much on the wave clock (orderSentAfterWaveUs, from the new earliest) or,
// kWallClockOnly, without orderSentAfterWaveUs, as a wave verdict written before it existed;
// kWaveClockOnly: its order moved on the wave clock alone (the verdict, with the order's time the
// node-signed transcript names, left as it is).
std::vector<testing::StoredRecord> MoveMember(std::vector<testing::StoredRecord> records, const std::string& node,
                                              int64_t delta_us, Placed placed) {
  return ResignMember(
      std::move(records), node,
      [&](proto::Verdict::Builder v) {
        if (placed != Placed::kWaveClockOnly) v.setOrderSentAtUnixUs(v.getOrderSentAtUnixUs() + delta_us);
      },
      [&](proto::WaveVerdict::Builder w, unsigned member) {
        std::vector<int64_t> at;
        for (unsigned i = 0; i < w.getOrderSentAfterWaveUs().size(); ++i) {
          at.push_back(static_cast<int64_t>(w.getOrderSentAfterWaveUs()[i]) + (i == member ? delta_us : 0));
        }
        if (placed == Placed::kWallClockOnly || at.empty()) {
          w.disownOrderSentAfterWaveUs();
        } else {
          const int64_t origin = *std::min_element(at.begin(), at.end());
          for (unsigned i = 0; i < at.size(); ++i)
            w.getOrderSentAfterWaveUs().set(i, static_cast<uint64_t>(at[i] - origin));
        }
      });
}

// An auditor re-checks the wave claim from the records: each member's first proof round after the
// last member's fill, every member's order placed on the wave's one monotonic clock
// (orderSentAfterWaveUs). node-a's timeline moved 400 ms earlier (its proof rounds now before
// node-b's fill, 300 ms late) fails the audit on either clock; 20 ms earlier passes only the wall
// clock's check of wave verdicts written before orderSentAfterWaveUs (50 ms tolerance).
// threat-model: T-WAVE-TIMELINE
TEST(WaveShellGameTest, TheAuditPlacesEveryMembersProofRoundsAfterTheLastFill) {
  WaveRun run = RunOnce({});
  ASSERT_TRUE(run.a.pass) << run.a.failure.Describe();
  ASSERT_TRUE(run.b.pass) << run.b.failure.Describe();
  ASSERT_TRUE(run.wave_pass);
  WaveAudit audit = AuditWave(run.records);
  EXPECT_TRUE(audit.status.ok()) << audit.status.ToString();
  EXPECT_EQ(audit.clock, kWaveClockName);
  WaveAudit old = AuditWave(MoveMember(run.records, "node-a", 0, Placed::kWallClockOnly));
  EXPECT_TRUE(old.status.ok()) << old.status.ToString();
  EXPECT_EQ(old.clock, kWallClockName);
  EXPECT_TRUE(AuditWave(MoveMember(run.records, "node-a", -20'000, Placed::kWallClockOnly)).status.ok());
  for (Placed placed : {Placed::kWaveClock, Placed::kWallClockOnly}) {
    Status forged = AuditWave(MoveMember(run.records, "node-a", -400'000, placed)).status;
    EXPECT_EQ(forged.code(), StatusCode::kDataLoss) << forged.ToString();
    EXPECT_NE(forged.message().find("member node-a: its first proof round"), std::string::npos) << forged.ToString();
    EXPECT_NE(forged.message().find("before member node-b was filled"), std::string::npos) << forged.ToString();
  }
  // Times no clock reaches (2^61 us) are refused, not added up past INT64_MAX.
  Status far = AuditWave(MoveMember(run.records, "node-a", int64_t{1} << 61, Placed::kWallClockOnly)).status;
  EXPECT_NE(far.message().find("member node-a: its verdict states a time beyond 2^60 us"), std::string::npos)
      << far.ToString();
  far = AuditWave(MoveMember(run.records, "node-a", int64_t{1} << 61, Placed::kWaveClock)).status;
  EXPECT_NE(far.message().find("orderSentAfterWaveUs is out of range"), std::string::npos) << far.ToString();
}

// On the wave clock the tolerance is its granularity (1 ms), not 50 ms + 0.1% of the fill: node-a's
// first proof round placed exactly 5 ms before node-b's last fill fails with orderSentAfterWaveUs,
// and the same placement passes the wall-clock check that wave verdicts written before it get.
// threat-model: T-WAVE-TIMELINE
TEST(WaveShellGameTest, OnTheWaveClockAProofRoundFiveMillisecondsBeforeAFillFails) {
  WaveRun run = RunOnce({});
  ASSERT_TRUE(run.a.pass) << run.a.failure.Describe();
  ASSERT_TRUE(run.b.pass) << run.b.failure.Describe();
  ASSERT_GE(run.a.order_sent_monotonic_us, 0);
  ASSERT_GE(run.b.order_sent_monotonic_us, 0);
  auto b = proto::VerifyAndParse<proto::Verdict>(run.b.verdict, testing::TestKey(0x22).public_key);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  int64_t b_filled = static_cast<int64_t>(b->root().getFillMicros());
  for (auto d : b->root().getDevices()) b_filled = std::max(b_filled, static_cast<int64_t>(d.getFilledAfterUs()));
  int64_t a_first_proof = -1;
  for (const RoundRecord& r : run.a.rounds) {
    if (r.proof) {
      a_first_proof = static_cast<int64_t>(r.sent_after_order_us);
      break;
    }
  }
  ASSERT_GE(a_first_proof, 0);
  // How far node-a's first proof round followed node-b's last fill on the wave clock, as recorded.
  const int64_t gap = (run.a.order_sent_monotonic_us + a_first_proof) - (run.b.order_sent_monotonic_us + b_filled);
  ASSERT_GE(gap, -kWaveClockToleranceUs);
  const int64_t move = -5'000 - gap;  // node-a's first proof round now 5 ms before node-b's last fill
  WaveAudit wave_clock = AuditWave(MoveMember(run.records, "node-a", move, Placed::kWaveClock));
  EXPECT_EQ(wave_clock.status.code(), StatusCode::kDataLoss) << wave_clock.status.ToString();
  EXPECT_EQ(wave_clock.clock, kWaveClockName);
  EXPECT_NE(wave_clock.status.message().find("was sent 5000 us before member node-b was filled on the wave clock "
                                             "(allowed: 1000 us)"),
            std::string::npos)
      << wave_clock.status.ToString();
  WaveAudit wall_clock = AuditWave(MoveMember(run.records, "node-a", move, Placed::kWallClockOnly));
  EXPECT_TRUE(wall_clock.status.ok()) << wall_clock.status.ToString();
  EXPECT_EQ(wall_clock.clock, kWallClockName);
}

// A neighbour that reports its fill at once but sends its device's notice 300 ms later (that
// device could still hold node-a's checkpoint): node-b is not filled for the wave before that
// notice, so node-a's proof rounds wait for it.
// threat-model: T-WAVE-SHELL-GAME
TEST(WaveShellGameTest, ProofRoundsWaitForTheNeighboursLastNoticeNotItsReport) {
  adversary::RelayDelays late_notice;
  late_notice.notice_extra_device = 0;
  late_notice.notice_extra_us = 300'000;
  WaveRun run = RunOnce({}, late_notice);
  ASSERT_TRUE(run.a.pass) << run.a.failure.Describe();
  ASSERT_TRUE(run.b.pass) << run.b.failure.Describe();
  auto b_verdict = proto::VerifyAndParse<proto::Verdict>(run.b.verdict, testing::TestKey(0x22).public_key);
  ASSERT_TRUE(b_verdict.ok()) << b_verdict.status().ToString();
  ASSERT_EQ(b_verdict->root().getDevices().size(), 1u);  // node-b plans host memory only
  const uint64_t b_last_notice = b_verdict->root().getDevices()[0].getFilledAfterUs();
  EXPECT_GE(b_last_notice, 300'000u);
  EXPECT_LT(run.b.fill_us + 200'000, b_last_notice) << "node-b's report came well before its last notice";
  uint32_t proof_rounds = 0;
  for (const RoundRecord& r : run.a.rounds) {
    if (!r.proof) continue;
    ++proof_rounds;
    EXPECT_GE(r.sent_after_order_us + 50'000, b_last_notice)
        << "node-a's proof round " << r.round << " left at " << r.sent_after_order_us
        << " us, before node-b's last fill notice at " << b_last_notice << " us (report at " << run.b.fill_us << " us)";
  }
  EXPECT_EQ(proof_rounds, kProofRounds);
}

// threat-model: T-WAVE-SHELL-GAME
TEST(WaveShellGameTest, ANodeThatDropsItsLabelsAfterTheProofRoundsIsCaught) {
  Deviation drop = testing::Cheat(DeviationKind::kDropAfterRounds);
  drop.round = kProofRounds;  // what a v1 order disclosed as the round count
  drop.hidden_fraction = kDropped;
  constexpr int kRuns = 12;
  int caught = 0;
  for (int i = 0; i < kRuns; ++i) {
    WaveRun run = RunOnce(drop);
    EXPECT_TRUE(run.b.pass) << run.b.failure.Describe();
    EXPECT_FALSE(run.wave_pass);
    if (!run.a.pass) {
      EXPECT_EQ(run.a.failure.reason, proto::FailureReason::WRONG_LABEL) << run.a.failure.Describe();
      // Caught in a round after the ones it expected.
      EXPECT_GE(run.a.failure.round, kProofRounds) << run.a.failure.Describe();
      ++caught;
    }
  }
  // Its holding rounds came first, so it drops before or during its proof rounds: at least one
  // proof round (2 x 32 labels) meets dropped memory, (1 - 0.9)^64 to pass it. Every run is caught.
  EXPECT_EQ(caught, kRuns);
}

// A small drop while the neighbour fills (5% of node-a's chunks, from its first holding round on):
// the proof rounds all come after node-b's fill, so all R = 8 of them meet it, each with q = 32
// labels on each of node-a's 2 devices: it passes with probability 0.95^512 ~ 4e-12. (Were the
// proof rounds sent at the notice, as before, a node dropping after them would meet only holding
// rounds of 2 x 4 labels while its neighbour fills.)
// threat-model: T-WAVE-SHELL-GAME
TEST(WaveShellGameTest, ASmallDropWhileTheNeighbourFillsIsCaughtByTheProofRounds) {
  Deviation drop = testing::Cheat(DeviationKind::kDropAfterRounds);
  drop.round = 1;  // right after the round of its fill notice
  drop.hidden_fraction = 0.05;
  const double predicted_escape = std::pow(1 - drop.hidden_fraction, kProofRounds * 32 * 2);
  ASSERT_LT(predicted_escape, 1e-10);
  constexpr int kRuns = 8;
  for (int i = 0; i < kRuns; ++i) {
    WaveRun run = RunOnce(drop);
    EXPECT_TRUE(run.b.pass) << run.b.failure.Describe();
    EXPECT_FALSE(run.wave_pass);
    ASSERT_FALSE(run.a.pass) << "escaped in run " << i;
    EXPECT_EQ(run.a.failure.reason, proto::FailureReason::WRONG_LABEL) << run.a.failure.Describe();
    // Caught by a proof round, or earlier by a holding round (2 x 4 labels: passed 66% of the time).
    ASSERT_LT(run.a.failure.round, run.a.rounds.size());
  }
}

// The wave clock (orderSentAfterWaveUs) is the challenger's word alone; the wall clock
// (orderSentAtUnixUs) is named by the node-signed transcript and bounded by the authority-signed
// order. A wave verdict that moves node-a's order 150 ms later on the wave clock only (its proof
// rounds still after node-b's fill there, 300 ms late) disagrees with the wall clock and fails;
// moved 20 ms it agrees (within 50 ms) and passes.
// threat-model: T-WAVE-TIMELINE
TEST(WaveShellGameTest, TheWaveClockMustAgreeWithTheWallClock) {
  WaveRun run = RunOnce({});
  ASSERT_TRUE(run.a.pass) << run.a.failure.Describe();
  ASSERT_TRUE(run.b.pass) << run.b.failure.Describe();
  WaveAudit moved = AuditWave(MoveMember(run.records, "node-a", 150'000, Placed::kWaveClockOnly));
  EXPECT_EQ(moved.status.code(), StatusCode::kDataLoss) << moved.status.ToString();
  EXPECT_NE(moved.status.message().find(" us on the wall clock (orderSentAtUnixUs): the clocks disagree by "),
            std::string::npos)
      << moved.status.ToString();
  EXPECT_NE(moved.status.message().find("(allowed: 50000 us)"), std::string::npos) << moved.status.ToString();
  WaveAudit slight = AuditWave(MoveMember(run.records, "node-a", 20'000, Placed::kWaveClockOnly));
  EXPECT_TRUE(slight.status.ok()) << slight.status.ToString();
  EXPECT_EQ(slight.clock, kWaveClockName);
}

// A wave verdict replayed (or re-signed) to list a member session another wave verdict lists: an
// honest challenger runs each member session in one wave run.
// threat-model: T-WAVE-TIMELINE
TEST(WaveShellGameTest, AMemberSessionListedByTwoWaveVerdictsFails) {
  WaveRun run = RunOnce({});
  ASSERT_TRUE(run.wave_pass);
  WaveAudit first = AuditWave(run.records);
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  ASSERT_EQ(first.member_sessions.size(), 2u);
  std::map<proto::Bytes, uint64_t> listed;
  EXPECT_TRUE(CheckListedOnce(first, &listed).ok());
  EXPECT_TRUE(CheckListedOnce(first, &listed).ok()) << "the same wave verdict, seen again";
  WaveAudit replayed = first;
  replayed.sequence = first.sequence + 7;
  Status twice = CheckListedOnce(replayed, &listed);
  EXPECT_EQ(twice.code(), StatusCode::kDataLoss) << twice.ToString();
  EXPECT_NE(twice.message().find("is listed by wave verdict (ledger entry " + std::to_string(first.sequence) + ") too"),
            std::string::npos)
      << twice.ToString();
}

// The reported fill-end lag needs the verdict's fill time: a member whose verdict states none
// (fillMicros 0: it failed before its report reached the challenger) is named, not given a lag of
// minus its Unix time; and the spread says the clock it was computed on even when a member failed
// and nothing was placed.
TEST(WaveShellGameTest, FillEndLagsSkipMembersWithoutAFillTime) {
  WaveRun run = RunOnce({});
  ASSERT_TRUE(run.wave_pass);
  WaveAudit honest = AuditWave(run.records);
  ASSERT_EQ(honest.fill_end_lag_us.size(), 2u);
  EXPECT_EQ(honest.fill_end_spread_clock, kWaveClockName);
  WaveAudit no_fill = AuditWave(ResignMember(
      run.records, "node-b", [](proto::Verdict::Builder v) { v.setFillMicros(0); },
      [](proto::WaveVerdict::Builder, unsigned) {}));
  ASSERT_EQ(no_fill.fill_end_lag_us.size(), 1u);
  EXPECT_EQ(no_fill.fill_end_lag_us[0].first, "node-a");
  EXPECT_EQ(no_fill.no_fill_time, std::vector<std::string>{"node-b"});
  EXPECT_FALSE(no_fill.fill_end_spread_us.has_value());
  WaveAudit failed = AuditWave(ResignMember(
      run.records, "node-b",
      [](proto::Verdict::Builder v) {
        v.setPass(false);
        v.initFailure().setReason(proto::FailureReason::WRONG_LABEL);
      },
      [](proto::WaveVerdict::Builder w, unsigned) { w.setPass(false); }));
  EXPECT_TRUE(failed.clock.empty()) << "a failed member: nothing placed";
  ASSERT_EQ(failed.fill_end_lag_us.size(), 2u) << failed.status.ToString();
  ASSERT_TRUE(failed.fill_end_spread_us.has_value());
  EXPECT_EQ(failed.fill_end_spread_clock, kWaveClockName);
}

}  // namespace
}  // namespace wipeproof
