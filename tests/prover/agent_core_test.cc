// AgentCore (prover/agent/agent_core.h) without RPC, on a fake clock: an honest session end to end
// against what a challenger computes, and every refusal path with its reason and no memory held.
#include "prover/agent/agent_core.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "common/hex.h"
#include "kernels/gpu/emulated_runtime.h"
#include "proto/transcript.h"
#include "prover/backends/gpu/gpu_backend.h"
#include "tests/prover/agent_test_util.h"

namespace wipeproof {
namespace {

using agent_test::FillGate;
using agent_test::kGpuId;

using agent_test::LiveBytes;
using agent_test::OrderSpec;
using agent_test::SessionIdOf;
using agent_test::SignedOrder;
using agent_test::SignedVerdict;

constexpr ConnectionId kOwner = 1;
// The key the tests' connections are authenticated as: the challenger every test order names.
const PeerKeyId kAsChallenger = proto::KeyIdOf(agent_test::ChallengerKey().public_key);
constexpr int64_t kWaitUs = 20'000'000;

::testing::AssertionResult HasError(const Status& status, StatusCode code, const std::string& text) {
  if (status.code() == code && status.message().find(text) != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "got " << status.ToString() << ", want " << StatusCodeName(code)
                                       << " containing \"" << text << "\"";
}

using agent_test::Round;

class AgentCoreTest : public ::testing::Test {
 protected:
  void SetUp() override { base_live_ = LiveBytes(); }
  void TearDown() override {
    core_.reset();
    EXPECT_EQ(LiveBytes(), base_live_) << "device memory still held after the agent stopped";
  }

  AgentCore& Make(BackendSet backends, AgentConfig config = agent_test::TestConfig()) {
    core_ = std::make_unique<AgentCore>(std::move(config), std::move(backends), clock_);
    return *core_;
  }
  AgentCore& MakeHost(const FillGate* gate = nullptr) { return Make(agent_test::HostBackends(gate)); }

  // Idle and nothing held.
  void ExpectNothingHeld() {
    ASSERT_TRUE(core_->WaitUntilIdle(kWaitUs));
    AgentStatusSnapshot status = core_->GetStatus();
    EXPECT_EQ(status.phase, proto::AgentPhase::IDLE);
    EXPECT_TRUE(status.session_id.empty());
    EXPECT_EQ(status.bytes_acquired, 0u);
    EXPECT_EQ(LiveBytes(), base_live_);
  }

  Status AnswerRound(Round& round, const proto::Bytes& session_id, uint32_t index,
                     const std::vector<std::pair<uint16_t, std::vector<uint64_t>>>& devices,
                     ConnectionId from = kOwner) {
    auto request = round.Build(session_id, index, devices);
    return core_->AnswerRound(from, request.asReader(), round.response.initRoot<proto::RoundAnswer>());
  }

  // Waits (real time) until the core reports `phase`.
  bool WaitForPhase(proto::AgentPhase phase) {
    for (int i = 0; i < 20000; ++i) {
      if (core_->GetStatus().phase == phase) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

  FakeClock clock_;
  std::unique_ptr<AgentCore> core_;
  uint64_t base_live_ = 0;
};

// ----------------------------------------------------------------------------------------------
// The honest session.

TEST_F(AgentCoreTest, HonestSessionEndToEnd) {
  AgentCore& core = MakeHost();
  OrderSpec spec;
  const proto::SignedEnvelope order = SignedOrder(spec, clock_);
  auto report_env = core.StartSession(order, kOwner, kAsChallenger);
  ASSERT_TRUE(report_env.ok()) << report_env.status().ToString();

  // The report verifies under the node key and says what was planned.
  auto report = proto::VerifyAndParse<proto::FillReport>(*report_env, agent_test::NodeKey().public_key);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const proto::Digest order_digest = proto::Blake2b256(proto::AsView(order.payload));
  EXPECT_TRUE(report->root().getOrderDigest() == proto::AsView(order_digest));
  EXPECT_TRUE(report->root().getSessionId() == proto::AsView(spec.session_id));
  ASSERT_EQ(report->root().getDevices().size(), 1u);
  auto fill = report->root().getDevices()[0];
  EXPECT_EQ(std::string(fill.getSelector().cStr()), "host");
  EXPECT_EQ(fill.getLabelCount(), 65536u);
  EXPECT_EQ(fill.getBytesHeld(), 65536u * 32);
  EXPECT_EQ(fill.getTotalBytes(), uint64_t{1} << 30);
  EXPECT_EQ(fill.getReserveBytes(), (uint64_t{1} << 30) - 65536u * 32);

  AgentStatusSnapshot ready = core.GetStatus();
  EXPECT_EQ(ready.phase, proto::AgentPhase::READY);
  EXPECT_GE(ready.bytes_acquired, 2 * kMiB);
  ASSERT_EQ(ready.devices.size(), 1u);
  EXPECT_EQ(ready.devices[0].labels_filled, 65536u);

  // The challenger's side of the transcript.
  proto::TranscriptHasher challenger;
  ASSERT_TRUE(challenger.AddOrder(proto::AsView(order.payload)).ok());
  ASSERT_TRUE(challenger.AddReport(proto::AsView(report_env->payload)).ok());
  // The device's fill notice: already filled, so the callback runs at once with the signed notice.
  StatusOr<proto::SignedEnvelope> notice_env = InternalError("never called");
  core.AwaitDeviceFilled(kOwner, proto::AsView(spec.session_id), 0,
                         [&](StatusOr<proto::SignedEnvelope> n) { notice_env = std::move(n); });
  ASSERT_TRUE(notice_env.ok()) << notice_env.status().ToString();
  auto notice = proto::VerifyAndParse<proto::DeviceFillNotice>(*notice_env, agent_test::NodeKey().public_key);
  ASSERT_TRUE(notice.ok()) << notice.status().ToString();
  EXPECT_TRUE(notice->root().getOrderDigest() == proto::AsView(order_digest));
  EXPECT_EQ(notice->root().getDeviceIndex(), 0u);
  EXPECT_EQ(notice->root().getFill().getLabelCount(), 65536u);
  ASSERT_TRUE(challenger.AddNotice(0, proto::AsView(notice_env->payload)).ok());
  // Another device index is out of range; another owner is refused.
  StatusOr<proto::SignedEnvelope> out_of_range = InternalError("never called");
  core.AwaitDeviceFilled(kOwner, proto::AsView(spec.session_id), 1,
                         [&](StatusOr<proto::SignedEnvelope> n) { out_of_range = std::move(n); });
  EXPECT_EQ(out_of_range.status().code(), StatusCode::kInvalidArgument);
  StatusOr<proto::SignedEnvelope> stranger = InternalError("never called");
  core.AwaitDeviceFilled(kOwner + 1, proto::AsView(spec.session_id), 0,
                         [&](StatusOr<proto::SignedEnvelope> n) { stranger = std::move(n); });
  EXPECT_EQ(stranger.status().code(), StatusCode::kPermissionDenied);
  const std::vector<uint8_t> expected = agent_test::ExpectedLabels(256, 0, 65536);
  for (uint32_t r = 0; r < 3; ++r) {
    std::vector<uint64_t> indices;
    for (uint64_t c = 0; c < 8; ++c) indices.push_back(c * 256 * 31 + 17 * r + c);  // distinct chunks
    Round round;
    ASSERT_TRUE(AnswerRound(round, spec.session_id, r, {{0, indices}}).ok());
    auto answer = round.answer().asReader();
    EXPECT_TRUE(answer.getSessionId() == proto::AsView(spec.session_id));
    EXPECT_EQ(answer.getRoundIndex(), r);
    ASSERT_EQ(answer.getLabels().size(), indices.size() * 32);
    for (size_t i = 0; i < indices.size(); ++i) {
      EXPECT_EQ(0, std::memcmp(answer.getLabels().begin() + 32 * i, expected.data() + 32 * indices[i], 32))
          << "label " << indices[i];
    }
    ASSERT_TRUE(challenger.AddRound(round.request.getRoot<proto::ChallengeRound>().asReader(), answer).ok());
  }
  EXPECT_EQ(core.GetStatus().rounds_answered, 3u);

  const proto::SignedEnvelope verdict = SignedVerdict(order, true);
  auto transcript_env = core.Finish(kOwner, verdict);
  ASSERT_TRUE(transcript_env.ok()) << transcript_env.status().ToString();
  auto transcript = proto::VerifyAndParse<proto::TranscriptDigest>(*transcript_env, agent_test::NodeKey().public_key);
  ASSERT_TRUE(transcript.ok()) << transcript.status().ToString();
  auto digest = challenger.Finish();
  ASSERT_TRUE(digest.ok());
  EXPECT_TRUE(transcript->root().getDigest() == proto::AsView(*digest));
  EXPECT_EQ(transcript->root().getRoundCount(), 3u);
  const proto::Digest verdict_digest = proto::Blake2b256(proto::AsView(verdict.payload));
  EXPECT_TRUE(transcript->root().getVerdictDigest() == proto::AsView(verdict_digest));
  EXPECT_TRUE(transcript->root().getSessionId() == proto::AsView(spec.session_id));

  ExpectNothingHeld();
  AgentStatusSnapshot after = core.GetStatus();
  EXPECT_EQ(after.sessions_completed, 1u);
  EXPECT_EQ(after.last_error, "");

  // A fresh order runs after the first: the agent is reusable.
  OrderSpec next;
  next.session_id = SessionIdOf(2);
  ASSERT_TRUE(core.StartSession(SignedOrder(next, clock_), kOwner, kAsChallenger).ok());
  // A fill notice asked for another session names why that one ended only when it is the session
  // that ended last; a session id never seen gets no other session's story.
  auto notice_status = [&](const proto::Bytes& id) {
    Status out = InternalError("never called");
    core.AwaitDeviceFilled(kOwner, proto::AsView(id), 0, [&](StatusOr<proto::SignedEnvelope> n) { out = n.status(); });
    return out;
  };
  const Status stranger_id = notice_status(SessionIdOf(7));
  EXPECT_EQ(stranger_id.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(stranger_id.message(), "no session " + HexEncode(SessionIdOf(7)) + " running");
  const Status first_id = notice_status(spec.session_id);
  EXPECT_EQ(first_id.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(first_id.message().find(" finished)"), std::string::npos) << first_id.message();
  EXPECT_TRUE(core.Abort(kOwner, proto::AsView(next.session_id), "test done").ok());
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, FillsHostAndGpuTogether) {
  agent_test::FakeDeviceOptions gpu;
  AgentCore& core = Make(agent_test::HostAndGpuBackends(gpu));
  OrderSpec spec;
  spec.devices = {{kGpuId, 0, 32768, 4}, {"host", 65536, 32768, 4}};
  const proto::SignedEnvelope order = SignedOrder(spec, clock_);
  auto report = core.StartSession(order, kOwner, kAsChallenger);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  auto parsed = proto::ParseMessage<proto::FillReport>(proto::AsView(report->payload));
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->root().getDevices().size(), 2u);
  EXPECT_EQ(std::string(parsed->root().getDevices()[0].getSelector().cStr()), kGpuId);
  EXPECT_EQ(parsed->root().getDevices()[1].getFirstLabel(), 65536u);

  const auto gpu_labels = agent_test::ExpectedLabels(256, 0, 32768);
  const auto host_labels = agent_test::ExpectedLabels(256, 65536, 32768);
  Round round;
  ASSERT_TRUE(AnswerRound(round, spec.session_id, 0, {{1, {65536 + 5, 65536 + 300}}, {0, {7, 32767}}}).ok());
  auto labels = round.answer().asReader().getLabels();
  ASSERT_EQ(labels.size(), 4u * 32);
  EXPECT_EQ(0, std::memcmp(labels.begin(), host_labels.data() + 32 * 5, 32));
  EXPECT_EQ(0, std::memcmp(labels.begin() + 32, host_labels.data() + 32 * 300, 32));
  EXPECT_EQ(0, std::memcmp(labels.begin() + 64, gpu_labels.data() + 32 * 7, 32));
  EXPECT_EQ(0, std::memcmp(labels.begin() + 96, gpu_labels.data() + 32 * 32767, 32));
  ASSERT_TRUE(core.Finish(kOwner, SignedVerdict(order, true)).ok());
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, FinishAfterAFailedRoundStillSignsTheTranscript) {
  AgentCore& core = MakeHost();
  OrderSpec spec;
  const uint32_t rounds = 5;
  const proto::SignedEnvelope order = SignedOrder(spec, clock_);
  ASSERT_TRUE(core.StartSession(order, kOwner, kAsChallenger).ok());
  Round round;
  ASSERT_TRUE(AnswerRound(round, spec.session_id, 0, {{0, {1, 2, 3}}}).ok());
  auto transcript = core.Finish(kOwner, SignedVerdict(order, false));
  ASSERT_TRUE(transcript.ok()) << transcript.status().ToString();
  auto parsed = proto::ParseMessage<proto::TranscriptDigest>(proto::AsView(transcript->payload));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->root().getRoundCount(), 1u);
  ExpectNothingHeld();
}

// ----------------------------------------------------------------------------------------------
// Refused orders: each with its reason, nothing held, the agent still usable.

// threat-model: T-ORDER-REPLAYED
TEST_F(AgentCoreTest, ReplayedSessionIdIsRefused) {
  AgentCore& core = MakeHost();
  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);
  ASSERT_TRUE(core.StartSession(order, kOwner, kAsChallenger).ok());
  ASSERT_TRUE(core.Finish(kOwner, SignedVerdict(order, true)).ok());
  EXPECT_TRUE(HasError(core.StartSession(order, kOwner, kAsChallenger).status(), StatusCode::kAlreadyExists,
                       "already ordered"));
  // The same id in a freshly signed order is a replay too.
  clock_.Advance(1'000'000);
  EXPECT_TRUE(HasError(core.StartSession(SignedOrder(OrderSpec(), clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kAlreadyExists, "replayed order refused"));
  EXPECT_NE(core.GetStatus().last_error.find("already ordered"), std::string::npos);
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, RefusedOrderCannotBeReplayedEither) {
  AgentCore& core = MakeHost();
  OrderSpec spec;
  spec.devices = {{"GPU-nope", 0, 1024, 1}};
  const proto::SignedEnvelope order = SignedOrder(spec, clock_);
  EXPECT_EQ(core.StartSession(order, kOwner, kAsChallenger).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(core.StartSession(order, kOwner, kAsChallenger).status().code(), StatusCode::kAlreadyExists);
  ExpectNothingHeld();
}

// threat-model: T-ORDER-REPLAYED
TEST_F(AgentCoreTest, ExpiredOrderIsRefused) {
  AgentCore& core = MakeHost();
  OrderSpec spec;
  spec.valid_for_us = 10'000'000;
  const proto::SignedEnvelope order = SignedOrder(spec, clock_);
  clock_.Advance(10'000'000 + kDefaultClockSkewUs);  // expiry + the allowed skew
  EXPECT_TRUE(HasError(core.StartSession(order, kOwner, kAsChallenger).status(), StatusCode::kDeadlineExceeded,
                       "order expired"));
  ExpectNothingHeld();

  // Inside the skew allowance it is still accepted.
  OrderSpec fresh;
  fresh.session_id = SessionIdOf(2);
  fresh.valid_for_us = 10'000'000;
  const proto::SignedEnvelope late = SignedOrder(fresh, clock_);
  clock_.Advance(10'000'000 + kDefaultClockSkewUs - 1);
  EXPECT_TRUE(core.StartSession(late, kOwner, kAsChallenger).ok());
  EXPECT_TRUE(core.Abort(kOwner, proto::AsView(fresh.session_id), "test done").ok());
  ExpectNothingHeld();
}

// threat-model: T-ORDER-REPLAYED
TEST_F(AgentCoreTest, OrderFromTheFutureIsRefused) {
  AgentCore& core = MakeHost();
  OrderSpec spec;
  spec.issued_at_unix_us = clock_.UnixMicros() + kDefaultClockSkewUs + 1;
  EXPECT_TRUE(HasError(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kFailedPrecondition, "in the future"));
  ExpectNothingHeld();
  spec.session_id = SessionIdOf(2);
  spec.issued_at_unix_us = clock_.UnixMicros() + kDefaultClockSkewUs;  // at the limit: accepted
  EXPECT_TRUE(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).ok());
  EXPECT_TRUE(core.Abort(kOwner, proto::AsView(spec.session_id), "test done").ok());
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, OrderIssuedBeforeTheAgentStartedIsRefused) {
  OrderSpec spec;
  spec.valid_for_us = 3'600'000'000;
  const proto::SignedEnvelope old_order = SignedOrder(spec, clock_);
  clock_.Advance(kDefaultClockSkewUs + 1);  // the agent (re)starts later
  AgentCore& core = MakeHost();
  EXPECT_TRUE(HasError(core.StartSession(old_order, kOwner, kAsChallenger).status(), StatusCode::kFailedPrecondition,
                       "before this agent started"));
  ExpectNothingHeld();
}

// The replay the start check exists for: an order seen, then the agent restarts (its replay set,
// in memory, is gone). No clock-skew allowance may apply here, or an order seen within the skew
// before the restart would be accepted again after it.
// threat-model: T-ORDER-REPLAYED
TEST_F(AgentCoreTest, OrderSeenBeforeARestartIsRefusedAfterIt) {
  MakeHost();
  clock_.Advance(10'000'000);
  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);  // issued 10 s after the first start
  ASSERT_TRUE(core_->StartSession(order, kOwner, kAsChallenger).ok());
  ASSERT_TRUE(core_->Finish(kOwner, SignedVerdict(order, true)).ok());
  EXPECT_EQ(core_->StartSession(order, kOwner, kAsChallenger).status().code(), StatusCode::kAlreadyExists);

  clock_.Advance(1'000'000);  // well inside the default skew (5 min)
  const int64_t restart_us = clock_.UnixMicros();
  MakeHost();  // the agent restarts: a new core, an empty replay set
  Status replayed = core_->StartSession(order, kOwner, kAsChallenger).status();
  EXPECT_TRUE(HasError(replayed, StatusCode::kFailedPrecondition, "order issued before this agent started at "));
  EXPECT_TRUE(HasError(replayed, StatusCode::kFailedPrecondition, "the challenger must issue a fresh order"));
  EXPECT_NE(replayed.message().find("Unix us " + std::to_string(restart_us)), std::string::npos) << replayed.ToString();
  EXPECT_NE(replayed.message().find("is 1000000 us earlier"), std::string::npos) << replayed.ToString();
  ExpectNothingHeld();
}

// The price of refusing without an allowance: after a restart, a challenger whose clock lags the
// node's by X has its fresh orders refused until X has passed; then they are accepted.
TEST_F(AgentCoreTest, LaggingChallengerClockIsRefusedOnlyUntilItPassesTheAgentStart) {
  constexpr int64_t kLagUs = 30'000'000;
  MakeHost();
  const int64_t start_us = clock_.UnixMicros();
  FakeClock challenger(start_us - kLagUs);
  OrderSpec spec;
  spec.session_id = SessionIdOf(1);
  EXPECT_TRUE(HasError(core_->StartSession(SignedOrder(spec, challenger), kOwner, kAsChallenger).status(),
                       StatusCode::kFailedPrecondition, "before this agent started"));
  clock_.Advance(kLagUs - 1);
  challenger.Advance(kLagUs - 1);
  spec.session_id = SessionIdOf(2);
  EXPECT_TRUE(HasError(core_->StartSession(SignedOrder(spec, challenger), kOwner, kAsChallenger).status(),
                       StatusCode::kFailedPrecondition, "is 1 us earlier"));
  clock_.Advance(1);
  challenger.Advance(1);  // its clock reads the agent's start time now: accepted
  spec.session_id = SessionIdOf(3);
  ASSERT_TRUE(core_->StartSession(SignedOrder(spec, challenger), kOwner, kAsChallenger).ok());
  EXPECT_TRUE(core_->Abort(kOwner, proto::AsView(spec.session_id), "test done").ok());
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, LongLivedOrderIsRefused) {
  AgentCore& core = MakeHost();
  OrderSpec spec;
  spec.valid_for_us = kDefaultMaxOrderLifetimeUs + 1;
  EXPECT_TRUE(HasError(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kInvalidArgument, "more than this agent's limit"));
  ExpectNothingHeld();
}

// threat-model: T-ORDER-FORGED
TEST_F(AgentCoreTest, WronglySignedOrderIsRefused) {
  AgentCore& core = MakeHost();
  // Signed by the authority's key itself: orders are the challenger's (under its delegation).
  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_, agent_test::AuthorityKey());
  EXPECT_EQ(core.StartSession(order, kOwner, kAsChallenger).status().code(), StatusCode::kPermissionDenied);
  // The right key id with a signature by another key.
  proto::SignedEnvelope forged = order;
  forged.signer_key_id = proto::KeyIdOf(agent_test::ChallengerKey().public_key);
  EXPECT_TRUE(HasError(core.StartSession(forged, kOwner, kAsChallenger).status(), StatusCode::kPermissionDenied,
                       "signature does not verify"));
  ExpectNothingHeld();
}

// A delegation as the authority's `delegate` writes one (or a forger would), for the tests below.
proto::Bytes MakeDelegation(const proto::KeyPair& signer, const proto::PublicKey& challenger, int64_t not_before,
                            int64_t not_after, bool allow_unsigned) {
  capnp::MallocMessageBuilder m;
  auto d = m.initRoot<proto::Delegation>();
  d.setChallengerPublicKey(proto::AsView(challenger));
  d.setNotBeforeUnixUs(not_before);
  d.setNotAfterUnixUs(not_after);
  d.setAllowUnsignedProfiles(allow_unsigned);
  if (!allow_unsigned) {  // one signed profile, which the test orders do not carry
    auto p = d.initProfiles(1)[0];
    p.setName("rack-fpga");
    p.setAdversaryClass("fpga-asic");
    p.setTMinPs(5000);
    p.setSafetyFactor(2);
    p.setAuthorityKeyId(proto::AsView(proto::KeyIdOf(signer.public_key)));
    p.setDocumentDigest(proto::AsView(proto::Blake2b256(proto::AsView(challenger))));
  }
  auto envelope = proto::SignMessage(d.asReader(), signer);
  EXPECT_TRUE(envelope.ok());
  return proto::EncodeEnvelope(*envelope);
}

// The challenger key signs orders, but only under the authority's delegation: one signed by another
// key, to another challenger, out of its period, or not covering the order's (unsigned, made-up)
// profile is refused, before the order's id is remembered.
// threat-model: T-DELEGATION
TEST_F(AgentCoreTest, OrdersOutsideTheAuthoritysDelegationAreRefused) {
  AgentCore& core = MakeHost();
  const proto::KeyPair& authority = agent_test::AuthorityKey();
  const proto::PublicKey challenger = agent_test::ChallengerKey().public_key;
  const int64_t now = clock_.UnixMicros();
  const struct {
    proto::Bytes delegation;
    const char* why;
  } refused[] = {
      {MakeDelegation(agent_test::NodeKey(), challenger, 0, INT64_MAX, true), "does not verify under the authority key"},
      {MakeDelegation(authority, agent_test::NodeKey().public_key, 0, INT64_MAX, true), "is not for the challenger key"},
      {MakeDelegation(authority, challenger, 0, now - 10 * 60'000'000LL, true), "outside the delegation"},
      {MakeDelegation(authority, challenger, now + 10 * 60'000'000LL, INT64_MAX, true), "outside the delegation"},
      {MakeDelegation(authority, challenger, 0, INT64_MAX, false), "is not signed by the authority"},
  };
  for (const auto& c : refused) {
    OrderSpec spec;
    spec.delegation = c.delegation;
    EXPECT_TRUE(HasError(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).status(),
                         StatusCode::kPermissionDenied, c.why))
        << c.why;
  }
  ExpectNothingHeld();
  // The same session id under the right delegation: accepted (the refusals remembered nothing).
  EXPECT_TRUE(core.StartSession(SignedOrder(OrderSpec(), clock_), kOwner, kAsChallenger).ok());
  EXPECT_TRUE(core.Abort(kOwner, proto::AsView(SessionIdOf(1)), "test done").ok());
  ExpectNothingHeld();
}

// threat-model: T-ORDER-FORGED
TEST_F(AgentCoreTest, TamperedOrderFailsTheSignatureBeforeParsing) {
  AgentCore& core = MakeHost();
  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);
  // A flipped bit in the body, and a payload cut short (which would not even parse): both fail as
  // signature failures, so nothing looked at the bytes first.
  proto::SignedEnvelope flipped = order;
  flipped.payload[flipped.payload.size() / 2] ^= 0x01;
  EXPECT_TRUE(HasError(core.StartSession(flipped, kOwner, kAsChallenger).status(), StatusCode::kPermissionDenied,
                       "signature does not verify"));
  proto::SignedEnvelope cut = order;
  cut.payload.resize(cut.payload.size() - 8);
  EXPECT_TRUE(HasError(core.StartSession(cut, kOwner, kAsChallenger).status(), StatusCode::kPermissionDenied,
                       "signature does not verify"));
  // The untampered order is still fresh: tampered copies did not burn its id.
  EXPECT_TRUE(core.StartSession(order, kOwner, kAsChallenger).ok());
  EXPECT_TRUE(core.Abort(kOwner, proto::AsView(SessionIdOf(1)), "test done").ok());
  ExpectNothingHeld();
}

// A copy of a valid order (orders are no secret: the ledger keeps them) delivered by a third party,
// on a connection authenticated as another key or not authenticated at all, is refused before any
// memory is taken and without burning its session id: the challenger it names can still deliver it.
// threat-model: T-COPIED-ORDER
TEST_F(AgentCoreTest, OrderOnAConnectionNotAuthenticatedAsItsChallengerIsRefused) {
  AgentCore& core = MakeHost();
  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);
  const proto::KeyId third_party = proto::KeyIdOf(proto::GenerateKeyPair().public_key);
  const std::string names = "the order names challenger key id " + proto::KeyIdHex(*kAsChallenger) +
                            " and is accepted only on a connection authenticated as that key";
  EXPECT_TRUE(HasError(core.StartSession(order, 2, third_party).status(), StatusCode::kPermissionDenied,
                       names + "; this connection is authenticated as key id " + proto::KeyIdHex(third_party)));
  EXPECT_TRUE(HasError(core.AdmitSession(order, 3, std::nullopt).status(), StatusCode::kPermissionDenied,
                       names + "; this connection is not authenticated"));
  ExpectNothingHeld();
  EXPECT_NE(core.GetStatus().last_error.find("this connection is not authenticated"), std::string::npos);
  EXPECT_EQ(core.GetStatus().sessions_completed, 0u);
  // The challenger's own delivery of the same order is accepted: the replays did not burn its id.
  ASSERT_TRUE(core.StartSession(order, kOwner, kAsChallenger).ok());
  EXPECT_TRUE(core.Abort(kOwner, proto::AsView(SessionIdOf(1)), "test done").ok());
  ExpectNothingHeld();
}

// threat-model: T-ORDER-FORGED
TEST_F(AgentCoreTest, OrderForAnotherNodeIsRefused) {
  AgentCore& core = MakeHost();
  OrderSpec spec;
  spec.node_name = "node-b";
  EXPECT_TRUE(HasError(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kPermissionDenied, "order is for node 'node-b'"));
  OrderSpec key;
  key.session_id = SessionIdOf(2);
  key.wrong_node_key = true;
  EXPECT_TRUE(HasError(core.StartSession(SignedOrder(key, clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kPermissionDenied, "node key id"));
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, PlanNamingAnUnknownDeviceIsRefused) {
  AgentCore& core = MakeHost();
  OrderSpec spec;
  spec.devices = {{"host", 0, 1024, 1}, {"GPU-missing", 4096, 1024, 1}};
  EXPECT_TRUE(HasError(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kNotFound, "no device 'GPU-missing'"));
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, PlanOmittingADeviceIsRefused) {
  agent_test::FakeDeviceOptions gpu;
  AgentCore& core = Make(agent_test::HostAndGpuBackends(gpu));
  EXPECT_TRUE(HasError(core.StartSession(SignedOrder(OrderSpec(), clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kInvalidArgument, std::string("plan omits device '") + kGpuId));
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, PlanNamingADeviceTwiceIsRefused) {
  AgentCore& core = MakeHost();
  OrderSpec spec;
  spec.devices = {{"host", 0, 1024, 1}, {"host", 4096, 1024, 1}};
  EXPECT_TRUE(HasError(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kInvalidArgument, "named twice"));
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, DeviceShortOfCapacityIsRefused) {
  // The plan wants more host memory than the budget allows.
  AgentConfig config = agent_test::TestConfig();
  config.host_budget_bytes = 1 * kMiB;
  AgentCore& core = Make(agent_test::HostBackends(), config);
  Status s = core.StartSession(SignedOrder(OrderSpec(), clock_), kOwner, kAsChallenger).status();
  EXPECT_TRUE(HasError(s, StatusCode::kResourceExhausted, "device 'host' short of capacity"));
  EXPECT_TRUE(HasError(s, StatusCode::kResourceExhausted, "host budget 1048576 bytes"));
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, DeviceShortOfAvailableMemoryIsRefused) {
  Make(agent_test::HostBackends(nullptr, /*available_bytes=*/1 * kMiB));
  EXPECT_TRUE(HasError(core_->StartSession(SignedOrder(OrderSpec(), clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kResourceExhausted, "device 'host' short of capacity"));
  ExpectNothingHeld();
}

// threat-model: T-DEVICE-ERROR
TEST_F(AgentCoreTest, AcquireShortfallReleasesTheOtherDevices) {
  // The GPU said it had room, but another process took it before the agent could: the host
  // memory acquired meanwhile is given back.
  agent_test::FakeDeviceOptions gpu;
  gpu.acquire_limit_bytes = 512 * 1024;
  AgentCore& core = Make(agent_test::HostAndGpuBackends(gpu));
  OrderSpec spec;
  spec.devices = {{kGpuId, 0, 32768, 4}, {"host", 65536, 32768, 4}};
  EXPECT_TRUE(HasError(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kResourceExhausted, std::string("device '") + kGpuId + "' short of capacity"));
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, DeviceFillErrorFailsTheSessionNamingTheDevice) {
  agent_test::FakeDeviceOptions gpu;
  gpu.fill_error = InternalError("ECC error");
  AgentCore& core = Make(agent_test::HostAndGpuBackends(gpu));
  OrderSpec spec;
  spec.devices = {{"host", 65536, 32768, 4}, {kGpuId, 0, 32768, 4}};
  EXPECT_TRUE(HasError(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kInternal, std::string("device '") + kGpuId + "': ECC error"));
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, SecondOrderDuringASessionIsRefused) {
  FillGate gate;
  AgentCore& core = MakeHost(&gate);
  const proto::SignedEnvelope first = SignedOrder(OrderSpec(), clock_);
  auto filling = std::async(std::launch::async, [&] { return core.StartSession(first, kOwner, kAsChallenger); });
  ASSERT_TRUE(WaitForPhase(proto::AgentPhase::FILLING));

  OrderSpec spec2;
  spec2.session_id = SessionIdOf(2);
  const proto::SignedEnvelope second = SignedOrder(spec2, clock_);
  // The typed busy refusal (BUSY): the challenger reads busyness from the code, never the text.
  EXPECT_TRUE(HasError(core.StartSession(second, 2, kAsChallenger).status(), StatusCode::kBusy,
                       "session a5a5a5a5a5a5a5a5a5a5a5a5a5a5a501 in progress (filling)"));
  gate.Open();
  ASSERT_TRUE(filling.get().ok());
  EXPECT_TRUE(HasError(core.StartSession(second, 2, kAsChallenger).status(), StatusCode::kBusy,
                       "in progress (ready)"));
  // Refused while busy, the second order's id was not used up.
  ASSERT_TRUE(core.Finish(kOwner, SignedVerdict(first, true)).ok());
  EXPECT_TRUE(core.StartSession(second, 2, kAsChallenger).ok());
  EXPECT_TRUE(core.Abort(2, proto::AsView(spec2.session_id), "test done").ok());
  ExpectNothingHeld();
}

// A device is challenged from its own fill notice on, while the others still fill; a round that
// names a device before its notice exists ends the session (the node never answers for labels it
// has not claimed), and the fill still running stops and frees its memory.
// threat-model: T-IDLE-DEVICE
TEST_F(AgentCoreTest, DevicesAreChallengedFromTheirOwnNoticeOnly) {
  FillGate gpu_gate;
  agent_test::FakeDeviceOptions gpu;
  gpu.gate = &gpu_gate;
  AgentCore& core = Make(agent_test::HostAndGpuBackends(gpu));
  OrderSpec spec;
  spec.devices = {{kGpuId, 0, 32768, 4}, {"host", 65536, 32768, 4}};
  const proto::SignedEnvelope order = SignedOrder(spec, clock_);
  auto filling = std::async(std::launch::async, [&] { return core.StartSession(order, kOwner, kAsChallenger); });
  struct OpenOnExit {
    FillGate& gate;
    ~OpenOnExit() { gate.Open(); }  // before `filling` joins, whatever fails below
  } open_on_exit{gpu_gate};
  ASSERT_TRUE(WaitForPhase(proto::AgentPhase::FILLING));
  // The host fills; the GPU waits at its gate.
  std::atomic<bool> host_noticed{false};
  core.AwaitDeviceFilled(kOwner, proto::AsView(spec.session_id), 1,
                         [&](StatusOr<proto::SignedEnvelope> n) { host_noticed = n.ok(); });
  for (int i = 0; i < 10'000 && !(host_noticed && gpu_gate.waiting() > 0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(host_noticed);
  ASSERT_GT(gpu_gate.waiting(), 0);

  const auto host_labels = agent_test::ExpectedLabels(256, 65536, 32768);
  Round host_round;
  ASSERT_TRUE(AnswerRound(host_round, spec.session_id, 0, {{1, {65536 + 9}}}).ok());
  EXPECT_EQ(0, std::memcmp(host_round.answer().asReader().getLabels().begin(), host_labels.data() + 32 * 9, 32));

  Round early;
  Status refused = AnswerRound(early, spec.session_id, 1, {{0, {7}}});
  EXPECT_TRUE(HasError(refused, StatusCode::kInvalidArgument,
                       "device '" + std::string(kGpuId) + "' is challenged before its fill notice"))
      << refused.ToString();
  gpu_gate.Open();
  EXPECT_FALSE(filling.get().ok());
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, StatusShowsTheFillWhileItRuns) {
  FillGate gate;
  AgentCore& core = MakeHost(&gate);
  auto filling = std::async(std::launch::async,
                            [&] { return core.StartSession(SignedOrder(OrderSpec(), clock_), 7, kAsChallenger); });
  ASSERT_TRUE(WaitForPhase(proto::AgentPhase::FILLING));
  AgentStatusSnapshot status = core.GetStatus();
  EXPECT_TRUE(status.session_id == SessionIdOf(1));
  ASSERT_EQ(status.devices.size(), 1u);
  EXPECT_EQ(status.devices[0].label_count, 65536u);
  while (gate.waiting() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GE(core.GetStatus().bytes_acquired, 2 * kMiB);  // acquired, not yet labelled
  gate.Open();
  ASSERT_TRUE(filling.get().ok());
  EXPECT_EQ(core.GetStatus().phase, proto::AgentPhase::READY);
  EXPECT_GT(core.GetStatus().phase_since_unix_us, 0);
}

// ----------------------------------------------------------------------------------------------
// Protocol errors in rounds and finish end the session.

class AgentCoreRoundTest : public AgentCoreTest {
 protected:
  void SetUp() override {
    AgentCoreTest::SetUp();
    MakeHost();
    order_ = SignedOrder(spec_, clock_);
    ASSERT_TRUE(core_->StartSession(order_, kOwner, kAsChallenger).ok());
  }
  // The session ended, and later calls say which and why.
  void ExpectEnded(const std::string& why) {
    ExpectNothingHeld();
    Round round;
    Status late = AnswerRound(round, spec_.session_id, 0, {{0, {1}}});
    EXPECT_TRUE(HasError(late, StatusCode::kFailedPrecondition, "no session running (session a5"));
    EXPECT_NE(late.message().find(why), std::string::npos) << late.ToString();
    EXPECT_NE(core_->GetStatus().last_error.find(why), std::string::npos) << core_->GetStatus().last_error;
  }
  OrderSpec spec_;
  proto::SignedEnvelope order_;
};

TEST_F(AgentCoreRoundTest, LabelIndexOutOfRangeEndsTheSession) {
  Round round;
  EXPECT_TRUE(HasError(AnswerRound(round, spec_.session_id, 0, {{0, {5, 65536}}}), StatusCode::kInvalidArgument,
                       "device 'host': label index 65536 is outside its range [0, 65536)"));
  ExpectEnded("label index 65536");
}

TEST_F(AgentCoreRoundTest, DeviceIndexOutOfRangeEndsTheSession) {
  Round round;
  EXPECT_TRUE(HasError(AnswerRound(round, spec_.session_id, 0, {{0, {5}}, {3, {5}}}), StatusCode::kInvalidArgument,
                       "device index 3 out of range"));
  ExpectEnded("device index 3");
}

TEST_F(AgentCoreRoundTest, UnchallengedDeviceEndsTheSession) {
  Round round;
  EXPECT_TRUE(HasError(AnswerRound(round, spec_.session_id, 0, {}), StatusCode::kInvalidArgument, "devices: empty"));
  ExpectEnded("devices: empty");
}

TEST_F(AgentCoreRoundTest, WrongSessionIdEndsTheSession) {
  Round round;
  EXPECT_TRUE(HasError(AnswerRound(round, SessionIdOf(9), 0, {{0, {5}}}), StatusCode::kInvalidArgument,
                       "round for session a5a5a5a5a5a5a5a5a5a5a5a5a5a5a509"));
  ExpectEnded("round for session");
}

TEST_F(AgentCoreRoundTest, WrongRoundIndexEndsTheSession) {
  Round first;
  ASSERT_TRUE(AnswerRound(first, spec_.session_id, 0, {{0, {5}}}).ok());
  Round repeated;
  EXPECT_TRUE(HasError(AnswerRound(repeated, spec_.session_id, 0, {{0, {6}}}), StatusCode::kInvalidArgument,
                       "round index 0, expected 1"));
  ExpectEnded("round index 0, expected 1");
}

// v2 orders never say how many rounds come: the agent answers every round until `finish`.
TEST_F(AgentCoreRoundTest, RoundsAreAnsweredUntilFinishWithoutALimit) {
  constexpr uint32_t kRounds = 40;
  const auto expected = agent_test::ExpectedLabels(spec_.chunk_labels, 0, spec_.devices[0].label_count);
  for (uint32_t r = 0; r < kRounds; ++r) {
    Round round;
    ASSERT_TRUE(AnswerRound(round, spec_.session_id, r, {{0, {r}}}).ok()) << "round " << r;
    ASSERT_EQ(0, std::memcmp(round.answer().getLabels().begin(), expected.data() + 32 * r, 32)) << "round " << r;
  }
  EXPECT_EQ(core_->GetStatus().rounds_answered, kRounds);
}

TEST_F(AgentCoreRoundTest, OversizedRoundEndsTheSession) {
  std::vector<uint64_t> many(proto::kMaxChallengeRoundBytes / 8 + 16, 3);
  Round round;
  EXPECT_TRUE(
      HasError(AnswerRound(round, spec_.session_id, 0, {{0, many}}), StatusCode::kInvalidArgument, "ChallengeRound"));
  ExpectEnded("ChallengeRound");
}

// threat-model: T-SESSION-HIJACK
TEST_F(AgentCoreRoundTest, OtherConnectionsCannotDriveTheSession) {
  Round round;
  EXPECT_TRUE(HasError(AnswerRound(round, spec_.session_id, 0, {{0, {5}}}, /*from=*/2), StatusCode::kPermissionDenied,
                       "belongs to another connection"));
  EXPECT_EQ(core_->Finish(2, SignedVerdict(order_, true)).status().code(), StatusCode::kPermissionDenied);
  core_->OnDisconnect(2);
  EXPECT_EQ(core_->GetStatus().phase, proto::AgentPhase::READY);
  Round mine;
  EXPECT_TRUE(AnswerRound(mine, spec_.session_id, 0, {{0, {5}}}).ok());
  EXPECT_TRUE(core_->Finish(kOwner, SignedVerdict(order_, true)).ok());
  ExpectNothingHeld();
}

// threat-model: T-SESSION-HIJACK
TEST_F(AgentCoreRoundTest, OtherConnectionsCannotAbortTheSession) {
  // The session id is no secret (status shows it); only the owner may end the session with it.
  EXPECT_TRUE(core_->OwnsSession(kOwner));
  EXPECT_FALSE(core_->OwnsSession(2));
  EXPECT_TRUE(HasError(core_->Abort(2, proto::AsView(spec_.session_id), "hostile"), StatusCode::kPermissionDenied,
                       "only the connection that started it may abort it"));
  EXPECT_EQ(core_->GetStatus().phase, proto::AgentPhase::READY);
  EXPECT_EQ(core_->GetStatus().last_error, "");  // a third party cannot write what status shows
  Round mine;
  EXPECT_TRUE(AnswerRound(mine, spec_.session_id, 0, {{0, {5}}}).ok());
  EXPECT_TRUE(core_->Abort(kOwner, proto::AsView(spec_.session_id), "challenger gave up").ok());
  ExpectEnded("aborted: challenger gave up");
  EXPECT_FALSE(core_->OwnsSession(kOwner));
  // An abort of a session that is not running is a no-op, from anyone.
  EXPECT_TRUE(core_->Abort(2, proto::AsView(spec_.session_id), "late").ok());
}

TEST_F(AgentCoreRoundTest, VerdictSignedByAnotherKeyEndsTheSession) {
  auto transcript = core_->Finish(kOwner, SignedVerdict(order_, true, agent_test::AuthorityKey()));
  EXPECT_EQ(transcript.status().code(), StatusCode::kPermissionDenied) << transcript.status().ToString();
  ExpectEnded("finish refused");
}

TEST_F(AgentCoreRoundTest, TamperedVerdictEndsTheSession) {
  proto::SignedEnvelope verdict = SignedVerdict(order_, false);
  verdict.payload[verdict.payload.size() - 8] ^= 0x40;
  EXPECT_TRUE(
      HasError(core_->Finish(kOwner, verdict).status(), StatusCode::kPermissionDenied, "signature does not verify"));
  ExpectEnded("finish refused");
}

TEST_F(AgentCoreRoundTest, VerdictForAnotherSessionEndsTheSession) {
  auto transcript = core_->Finish(kOwner, SignedVerdict(order_, true, agent_test::ChallengerKey(), SessionIdOf(7)));
  EXPECT_TRUE(HasError(transcript.status(), StatusCode::kInvalidArgument, "verdict for session"));
  ExpectEnded("verdict for session");
}

TEST_F(AgentCoreRoundTest, AbortFreesTheMemory) {
  EXPECT_TRUE(core_->Abort(kOwner, proto::AsView(SessionIdOf(9)), "not this one").ok());
  EXPECT_EQ(core_->GetStatus().phase, proto::AgentPhase::READY);
  EXPECT_TRUE(core_->Abort(kOwner, proto::AsView(spec_.session_id), "operator request").ok());
  ExpectEnded("aborted: operator request");
}

TEST_F(AgentCoreRoundTest, DisconnectOfTheOwnerFreesTheMemory) {
  core_->OnDisconnect(kOwner);
  ExpectEnded("the challenger disconnected");
}

// ----------------------------------------------------------------------------------------------
// Ending a session while it fills, and session timeouts on the fake clock.

TEST_F(AgentCoreTest, DisconnectMidFillStopsTheFillAndFreesTheMemory) {
  FillGate gate;
  AgentCore& core = MakeHost(&gate);
  auto filling = std::async(std::launch::async,
                            [&] { return core.StartSession(SignedOrder(OrderSpec(), clock_), 3, kAsChallenger); });
  while (gate.waiting() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  core.OnDisconnect(3);
  EXPECT_TRUE(HasError(filling.get().status(), StatusCode::kUnavailable, "the challenger disconnected"));
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, AbortMidFillStopsTheFill) {
  FillGate gate;
  AgentCore& core = MakeHost(&gate);
  auto filling = std::async(std::launch::async,
                            [&] { return core.StartSession(SignedOrder(OrderSpec(), clock_), 3, kAsChallenger); });
  while (gate.waiting() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(core.Abort(3, proto::AsView(SessionIdOf(1)), "fill deadline passed").ok());
  EXPECT_TRUE(HasError(filling.get().status(), StatusCode::kFailedPrecondition, "aborted: fill deadline passed"));
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, AbortMidFillFromAnotherConnectionIsRefused) {
  FillGate gate;
  AgentCore& core = MakeHost(&gate);
  auto filling = std::async(std::launch::async,
                            [&] { return core.StartSession(SignedOrder(OrderSpec(), clock_), 3, kAsChallenger); });
  while (gate.waiting() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(core.Abort(4, proto::AsView(SessionIdOf(1)), "hostile").code(), StatusCode::kPermissionDenied);
  gate.Open();
  ASSERT_TRUE(filling.get().ok());
  EXPECT_EQ(core.GetStatus().phase, proto::AgentPhase::READY);
  EXPECT_TRUE(core.Abort(3, proto::AsView(SessionIdOf(1)), "test done").ok());
  ExpectNothingHeld();
}

// Admission (checks, no memory) and fill are separate steps; the session exists in between.
TEST_F(AgentCoreTest, AdmittedSessionIsFilledByFillSession) {
  AgentCore& core = MakeHost();
  auto admitted = core.AdmitSession(SignedOrder(OrderSpec(), clock_), 5, kAsChallenger);
  ASSERT_TRUE(admitted.ok()) << admitted.status().ToString();
  EXPECT_EQ(core.GetStatus().phase, proto::AgentPhase::FILLING);
  EXPECT_TRUE(core.GetStatus().session_id == SessionIdOf(1));
  EXPECT_EQ(core.GetStatus().bytes_acquired, 0u);  // nothing taken yet
  EXPECT_TRUE(core.OwnsSession(5));
  OrderSpec other;
  other.session_id = SessionIdOf(2);
  EXPECT_TRUE(HasError(core.AdmitSession(SignedOrder(other, clock_), 6, kAsChallenger).status(),
                       StatusCode::kBusy, "in progress (filling)"));
  ASSERT_TRUE(core.FillSession(std::move(admitted).value()).ok());
  EXPECT_EQ(core.GetStatus().phase, proto::AgentPhase::READY);
  EXPECT_TRUE(core.Abort(5, proto::AsView(SessionIdOf(1)), "test done").ok());
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, AdmittedSessionDroppedUnfilledIsEnded) {
  AgentCore& core = MakeHost();
  {
    auto admitted = core.AdmitSession(SignedOrder(OrderSpec(), clock_), 5, kAsChallenger);
    ASSERT_TRUE(admitted.ok());
  }
  ExpectNothingHeld();
  EXPECT_NE(core.GetStatus().last_error.find("the fill never started"), std::string::npos)
      << core.GetStatus().last_error;
}

TEST_F(AgentCoreTest, SessionEndedBeforeItsFillStartsIsNotFilled) {
  AgentCore& core = MakeHost();
  auto admitted = core.AdmitSession(SignedOrder(OrderSpec(), clock_), 5, kAsChallenger);
  ASSERT_TRUE(admitted.ok());
  core.OnDisconnect(5);  // e.g. while it waited for its thread
  EXPECT_EQ(core.GetStatus().phase, proto::AgentPhase::RELEASING);
  const uint64_t live = LiveBytes();
  EXPECT_TRUE(HasError(core.FillSession(std::move(admitted).value()).status(), StatusCode::kUnavailable,
                       "the challenger disconnected"));
  EXPECT_EQ(LiveBytes(), live);
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, SessionTimesOutWhenReady) {
  AgentCore& core = MakeHost();
  OrderSpec spec;
  spec.session_timeout_us = 30'000'000;
  ASSERT_TRUE(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).ok());
  clock_.Advance(29'999'999);
  core.CheckTimeouts();
  EXPECT_EQ(core.GetStatus().phase, proto::AgentPhase::READY);
  clock_.Advance(1);
  core.CheckTimeouts();
  ExpectNothingHeld();
  EXPECT_NE(core.GetStatus().last_error.find("timed out"), std::string::npos);
}

TEST_F(AgentCoreTest, SessionTimesOutWhileFilling) {
  FillGate gate;
  AgentConfig config = agent_test::TestConfig();
  config.session_timeout_us = 5'000'000;  // the order asks for none: the agent's default applies
  AgentCore& core = Make(agent_test::HostBackends(&gate), config);
  auto filling = std::async(std::launch::async,
                            [&] { return core.StartSession(SignedOrder(OrderSpec(), clock_), 1, kAsChallenger); });
  while (gate.waiting() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  clock_.Advance(5'000'000);
  core.CheckTimeouts();
  EXPECT_TRUE(HasError(filling.get().status(), StatusCode::kDeadlineExceeded, "timed out"));
  ExpectNothingHeld();
}

TEST_F(AgentCoreTest, OrderTimeoutIsCappedByTheAgent) {
  AgentConfig config = agent_test::TestConfig();
  config.session_timeout_us = 10'000'000;
  AgentCore& core = Make(agent_test::HostBackends(), config);
  OrderSpec spec;
  spec.session_timeout_us = 3'600'000'000;
  ASSERT_TRUE(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).ok());
  clock_.Advance(10'000'000);
  core.CheckTimeouts();
  ExpectNothingHeld();
}

// Many rounds of q = 256 in one session are each answered with the labels asked, in order. (What a
// round costs is a benchmark's to measure, not a test's: docs/benchmarks.md.)
TEST_F(AgentCoreTest, TwoHundredRoundsOf256LabelsAreEachAnsweredInOrder) {
  AgentCore& core = MakeHost();
  OrderSpec spec;
  const uint32_t rounds = 200;
  spec.devices = {{"host", 0, 65536, 256}};
  ASSERT_TRUE(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).ok());
  const std::vector<uint8_t> labels = agent_test::ExpectedLabels(spec.chunk_labels, 0, 65536);
  for (uint32_t r = 0; r < rounds; ++r) {
    std::vector<uint64_t> indices;
    for (uint64_t c = 0; c < 256; ++c) indices.push_back(c * 256 + (c * 7 + r) % 256);
    Round round;
    ASSERT_TRUE(AnswerRound(round, spec.session_id, r, {{0, indices}}).ok()) << "round " << r;
    auto got = round.answer().asReader().getLabels();
    ASSERT_EQ(got.size(), indices.size() * 32) << "round " << r;
    for (size_t i = 0; i < indices.size(); ++i) {
      ASSERT_EQ(0, std::memcmp(got.begin() + 32 * i, labels.data() + 32 * indices[i], 32))
          << "round " << r << ", label " << indices[i];
    }
  }
  EXPECT_EQ(core.GetStatus().rounds_answered, rounds);
}

TEST_F(AgentCoreTest, DescribeListsDevicesAndKey) {
  agent_test::FakeDeviceOptions gpu;
  AgentCore& core = Make(agent_test::HostAndGpuBackends(gpu));
  NodeDescriptionInfo info = core.Describe();
  EXPECT_EQ(info.node_public_key, agent_test::NodeKey().public_key);
  EXPECT_EQ(info.node_key_id, proto::KeyIdOf(agent_test::NodeKey().public_key));
  ASSERT_EQ(info.devices.size(), 2u);
  EXPECT_EQ(info.devices[0].id, kGpuId);
  EXPECT_EQ(info.devices[1].id, "host");

  capnp::MallocMessageBuilder m;
  auto wire = m.initRoot<proto::NodeDescription>();
  WriteDescription(info, wire);
  EXPECT_EQ(wire.getProtocolVersion(), proto::PROTOCOL_VERSION);
  EXPECT_EQ(std::string(wire.getDevices()[1].getStableId().cStr()), "host");
  EXPECT_EQ(wire.getDevices()[1].getKind(), proto::DeviceKind::HOST);
}


// A device fault during a fill (CUDA's sticky errors leave the runtime unusable in the process)
// fails the session as UNAVAILABLE "device lost ... restart the agent", releases everything, and
// from then on the agent no longer offers that GPU: the description lists its backend as disabled
// with the reason, an order naming it is refused as naming no device of this node, and the host
// keeps being wiped.
// threat-model: T-DEVICE-LOST
TEST_F(AgentCoreTest, ADeviceFaultFailsTheSessionAndTheGpuIsNoLongerOffered) {
  gpu::EmulatedGpuConfig emulated;
  emulated.devices = 1;
  emulated.total_bytes = 64 * kMiB;
  emulated.runtime_overhead_bytes = kMiB;
  emulated.multiprocessors = 2;
  emulated.lose_device_at_fill_launch = 0;
  GpuBackendConfig small;
  small.tuning.side_scratch_bytes = kMiB;
  auto gpu = StartGpuBackend(DeviceKind::kCuda, std::make_unique<gpu::EmulatedRuntime>(emulated), small);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  BackendSet backends;
  backends.backends.push_back(std::move(gpu).value());
  backends.backends.push_back(agent_test::MakeCountingHostBackend(64 * kMiB, nullptr));
  AgentCore& core = Make(std::move(backends));
  ASSERT_EQ(core.Describe().devices.size(), 2u);

  OrderSpec spec;
  spec.devices = {{"EMU-0", 0, 32768, 4}, {"host", 65536, 32768, 4}};
  EXPECT_TRUE(HasError(core.StartSession(SignedOrder(spec, clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kUnavailable, "device lost ("));
  ExpectNothingHeld();

  const NodeDescriptionInfo info = core.Describe();
  ASSERT_EQ(info.devices.size(), 1u);
  EXPECT_EQ(info.devices[0].id, "host");
  ASSERT_EQ(info.disabled.size(), 1u);
  EXPECT_EQ(info.disabled[0].rfind("cuda: disabled: device lost (", 0), 0u) << info.disabled[0];
  EXPECT_NE(info.disabled[0].find("restart the agent"), std::string::npos) << info.disabled[0];

  OrderSpec again = spec;
  again.session_id = SessionIdOf(2);
  EXPECT_TRUE(HasError(core.StartSession(SignedOrder(again, clock_), kOwner, kAsChallenger).status(),
                       StatusCode::kNotFound, "this node has no device 'EMU-0'"));
  OrderSpec host_only;
  host_only.session_id = SessionIdOf(3);
  host_only.devices = {{"host", 0, 32768, 4}};
  const proto::SignedEnvelope order = SignedOrder(host_only, clock_);
  ASSERT_TRUE(core.StartSession(order, kOwner, kAsChallenger).ok());
  ASSERT_TRUE(core.Finish(kOwner, SignedVerdict(order, true)).ok());
  ExpectNothingHeld();
}

}  // namespace
}  // namespace wipeproof
