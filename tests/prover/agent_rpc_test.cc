// The agent over Cap'n Proto RPC (prover/agent/agent_rpc_server.h): in process over in-memory pipes
// with a fake clock (authenticated as the challenger by fiat, or by a real TLS handshake over the
// pipe), and sessions over real loopback TCP with TLS 1.3. Covers what only the RPC layer can get
// wrong: status answered during a fill, typed errors across the wire, a connection dropped mid-fill
// or a cancelled call freeing memory, oversized messages, the timeout timer, the transport's
// authentication (only the pinned challenger completes a handshake, and an order is admitted only
// from the challenger it names), and staying up under abuse: accept errors, the connection cap
// (eviction), the handshake cap, timeout, byte limit and pacing, idle and trickling connections,
// abort from another connection, refused orders costing no thread.
#include <capnp/message.h>
#include <capnp/rpc-twoparty.h>
#include <gtest/gtest.h>
#include <kj/async-io.h>
#include <kj/compat/tls.h>
#include <kj/debug.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <vector>

#include "proto/rpc_status.h"
#include "proto/transcript.h"
#include "prover/agent/agent_core.h"
#include "prover/agent/agent_rpc_server.h"
#include "tests/prover/agent_rpc_fixture.h"
#include "tests/prover/agent_test_util.h"

namespace wipeproof {
namespace {

using agent_test::FillGate;

using agent_test::LiveBytes;
using agent_test::OrderSpec;
using agent_test::SignedOrder;
using agent_test::SignedVerdict;

TEST_F(AgentRpcTest, HonestSessionWhileStatusKeepsAnswering) {
  FillGate gate;
  Start(agent_test::HostBackends(&gate));
  auto client = Connect();
  auto observer = Connect();
  OrderSpec spec;
  const uint32_t rounds = 2;
  const proto::SignedEnvelope order = SignedOrder(spec, clock_);
  auto pending = StartRequest(*client, order).send();

  // The fill is held at the gate: the event loop still answers status, on both connections.
  ASSERT_TRUE(SpinUntil([&] { return gate.waiting() > 0; }));
  EXPECT_EQ(PhaseOverRpc(*observer), proto::AgentPhase::FILLING);
  auto status = client->agent.statusRequest().send().wait(io_.waitScope).getStatus();
  EXPECT_EQ(status.getPhase(), proto::AgentPhase::FILLING);
  EXPECT_TRUE(status.getSessionId() == proto::AsView(spec.session_id));
  EXPECT_EQ(status.getDevices()[0].getLabelCount(), 65536u);
  gate.Open();
  auto response = pending.wait(io_.waitScope);
  auto report = proto::VerifyAndParse<proto::FillReport>(response.getReport(), agent_test::NodeKey().public_key);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(PhaseOverRpc(*observer), proto::AgentPhase::READY);

  proto::TranscriptHasher challenger;
  ASSERT_TRUE(challenger.AddOrder(proto::AsView(order.payload)).ok());
  auto report_env = proto::DecodeEnvelope(response.getReport());
  ASSERT_TRUE(report_env.ok());
  ASSERT_TRUE(challenger.AddReport(proto::AsView(report_env->payload)).ok());
  // The device's signed fill notice, over RPC: it is in the transcript too.
  auto filled = client->agent.deviceFilledRequest();
  filled.setSessionId(proto::AsView(spec.session_id));
  filled.setDeviceIndex(0);
  auto notice_env = proto::DecodeEnvelope(filled.send().wait(io_.waitScope).getNotice());
  ASSERT_TRUE(notice_env.ok()) << notice_env.status().ToString();
  auto notice = proto::VerifyAndParse<proto::DeviceFillNotice>(*notice_env, agent_test::NodeKey().public_key);
  ASSERT_TRUE(notice.ok()) << notice.status().ToString();
  EXPECT_EQ(notice->root().getFill().getLabelCount(), 65536u);
  ASSERT_TRUE(challenger.AddNotice(0, proto::AsView(notice_env->payload)).ok());
  const auto expected = agent_test::ExpectedLabels(256, 0, 65536);
  for (uint32_t r = 0; r < 2; ++r) {
    std::vector<uint64_t> indices = {3 + r, 1000 + r, 40000 + r, 65535 - r};
    capnp::MallocMessageBuilder sent;
    BuildRound(sent.initRoot<proto::ChallengeRound>(), spec.session_id, r, indices);
    auto request = client->agent.roundRequest();
    request.setRound(sent.getRoot<proto::ChallengeRound>().asReader());
    auto answer_response = request.send().wait(io_.waitScope);
    auto answer = answer_response.getAnswer();
    ASSERT_EQ(answer.getLabels().size(), indices.size() * 32);
    for (size_t i = 0; i < indices.size(); ++i) {
      EXPECT_EQ(0, std::memcmp(answer.getLabels().begin() + 32 * i, expected.data() + 32 * indices[i], 32));
    }
    ASSERT_TRUE(challenger.AddRound(sent.getRoot<proto::ChallengeRound>().asReader(), answer).ok());
  }
  auto finish = client->agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  auto finished = finish.send().wait(io_.waitScope);
  auto transcript =
      proto::VerifyAndParse<proto::TranscriptDigest>(finished.getTranscript(), agent_test::NodeKey().public_key);
  ASSERT_TRUE(transcript.ok()) << transcript.status().ToString();
  auto digest = challenger.Finish();
  ASSERT_TRUE(digest.ok());
  EXPECT_TRUE(transcript->root().getDigest() == proto::AsView(*digest));
  EXPECT_EQ(PhaseOverRpc(*observer), proto::AgentPhase::IDLE);
  EXPECT_EQ(observer->agent.statusRequest().send().wait(io_.waitScope).getStatus().getSessionsCompleted(), 1u);
  ExpectNothingHeld();

  auto described = observer->agent.describeRequest().send().wait(io_.waitScope).getDescription();
  EXPECT_EQ(described.getProtocolVersion(), proto::PROTOCOL_VERSION);
  EXPECT_EQ(std::string(described.getDevices()[0].getStableId().cStr()), "host");
  EXPECT_NE(std::string(described.getDevices()[1].getDisabledReason().cStr()).find("hip: disabled"), std::string::npos);
}

TEST_F(AgentRpcTest, RefusalsArriveAsTypedStatus) {
  Start(agent_test::HostBackends());
  auto client = Connect();
  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);
  proto::SignedEnvelope tampered = order;
  tampered.payload[16] ^= 0x80;
  Status s = ErrorOf(StartRequest(*client, tampered).send(), io_.waitScope);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("signature does not verify"), std::string::npos) << s.ToString();

  ASSERT_TRUE(ErrorOf(StartRequest(*client, order).send(), io_.waitScope).ok());
  OrderSpec second;
  second.session_id = agent_test::SessionIdOf(2);
  s = ErrorOf(StartRequest(*client, SignedOrder(second, clock_)).send(), io_.waitScope);
  EXPECT_EQ(s.code(), StatusCode::kBusy) << s.ToString();  // the typed busy refusal, over RPC
  EXPECT_NE(s.message().find("in progress (ready)"), std::string::npos) << s.ToString();

  // A malformed envelope is refused before the core sees it.
  auto request = client->agent.startSessionRequest();
  request.initOrder().setKind(proto::MessageKind::WIPE_ORDER);
  s = ErrorOf(request.send(), io_.waitScope);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();

  // An out-of-range index: typed error, and the session is over.
  auto round = client->agent.roundRequest();
  BuildRound(round.initRound(), agent_test::SessionIdOf(1), 0, {70000});
  s = ErrorOf(round.send(), io_.waitScope);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("label index 70000 is outside its range"), std::string::npos) << s.ToString();
  ExpectNothingHeld();
}

TEST_F(AgentRpcTest, ConnectionDroppedMidFillFreesTheMemory) {
  FillGate gate;
  Start(agent_test::HostBackends(&gate));
  auto client = Connect();
  auto observer = Connect();
  auto pending = StartRequest(*client, SignedOrder(OrderSpec(), clock_)).send();
  ASSERT_TRUE(SpinUntil([&] { return gate.waiting() > 0; }));
  EXPECT_GE(core_->GetStatus().bytes_acquired, 2 * kMiB);
  pending = nullptr;
  client->Drop();
  ExpectNothingHeld();
  auto status = observer->agent.statusRequest().send().wait(io_.waitScope).getStatus();
  EXPECT_NE(std::string(status.getLastError().cStr()).find("the challenger disconnected"), std::string::npos)
      << status.getLastError().cStr();
}

TEST_F(AgentRpcTest, ConnectionDroppedWhenReadyFreesTheMemory) {
  Start(agent_test::HostBackends());
  auto client = Connect();
  ASSERT_TRUE(ErrorOf(StartRequest(*client, SignedOrder(OrderSpec(), clock_)).send(), io_.waitScope).ok());
  EXPECT_EQ(core_->GetStatus().phase, proto::AgentPhase::READY);
  client->Drop();
  ExpectNothingHeld();
}

TEST_F(AgentRpcTest, CancelledStartSessionCallEndsTheSession) {
  // The challenger gives up on the call but keeps the connection: nobody will receive the report,
  // so the session ends as soon as the fill does.
  FillGate gate;
  Start(agent_test::HostBackends(&gate));
  auto client = Connect();
  auto pending = StartRequest(*client, SignedOrder(OrderSpec(), clock_)).send();
  ASSERT_TRUE(SpinUntil([&] { return gate.waiting() > 0; }));
  pending = nullptr;
  io_.provider->getTimer().afterDelay(10 * kj::MILLISECONDS).wait(io_.waitScope);
  gate.Open();
  ExpectNothingHeld();
  EXPECT_EQ(PhaseOverRpc(*client), proto::AgentPhase::IDLE);
}

TEST_F(AgentRpcTest, MessageOverTheRpcLimitDropsTheConnectionAndFreesTheMemory) {
  Start(agent_test::HostBackends());
  capnp::ReaderOptions big = proto::RpcReaderOptions();
  big.traversalLimitInWords = 4 * proto::kMaxRpcMessageBytes / 8;  // so this client may send it
  auto client = Connect(big);
  ASSERT_TRUE(ErrorOf(StartRequest(*client, SignedOrder(OrderSpec(), clock_)).send(), io_.waitScope).ok());
  auto round = client->agent.roundRequest();
  BuildRound(round.initRound(), agent_test::SessionIdOf(1), 0,
             std::vector<uint64_t>(proto::kMaxRpcMessageBytes / 8 + 1024, 1));
  Status s = ErrorOf(round.send(), io_.waitScope);
  EXPECT_FALSE(s.ok());
  ExpectNothingHeld();
  EXPECT_EQ(server_->connections(), 0u);
}

TEST_F(AgentRpcTest, RoundOverItsTypeLimitIsRefusedAndEndsTheSession) {
  Start(agent_test::HostBackends());
  auto client = Connect();
  ASSERT_TRUE(ErrorOf(StartRequest(*client, SignedOrder(OrderSpec(), clock_)).send(), io_.waitScope).ok());
  auto round = client->agent.roundRequest();
  BuildRound(round.initRound(), agent_test::SessionIdOf(1), 0,
             std::vector<uint64_t>(proto::kMaxChallengeRoundBytes / 8 + 1024, 1));
  Status s = ErrorOf(round.send(), io_.waitScope);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  ExpectNothingHeld();
  EXPECT_EQ(server_->connections(), 1u);  // the connection stays; the session is over
}

TEST_F(AgentRpcTest, OtherConnectionsCannotDriveOrEndTheSession) {
  Start(agent_test::HostBackends());
  auto owner = Connect();
  auto other = Connect();
  ASSERT_TRUE(ErrorOf(StartRequest(*owner, SignedOrder(OrderSpec(), clock_)).send(), io_.waitScope).ok());
  auto round = other->agent.roundRequest();
  BuildRound(round.initRound(), agent_test::SessionIdOf(1), 0, {5});
  EXPECT_EQ(ErrorOf(round.send(), io_.waitScope).code(), StatusCode::kPermissionDenied);
  other->Drop();
  ASSERT_TRUE(SpinUntil([&] { return server_->connections() == 1; }));
  EXPECT_EQ(PhaseOverRpc(*owner), proto::AgentPhase::READY);

  // The session id is public (status shows it), but only the owner may abort with it.
  auto third = Connect();
  auto seen = third->agent.statusRequest().send().wait(io_.waitScope);
  const capnp::Data::Reader sid = seen.getStatus().getSessionId();
  ASSERT_TRUE(sid == proto::AsView(agent_test::SessionIdOf(1)));
  auto hostile = third->agent.abortRequest();
  hostile.setSessionId(sid);
  hostile.setReason("not mine");
  Status denied = ErrorOf(hostile.send(), io_.waitScope);
  EXPECT_EQ(denied.code(), StatusCode::kPermissionDenied) << denied.ToString();
  EXPECT_NE(denied.message().find("only the connection that started it may abort it"), std::string::npos);
  EXPECT_EQ(PhaseOverRpc(*owner), proto::AgentPhase::READY);
  auto round_ok = owner->agent.roundRequest();
  BuildRound(round_ok.initRound(), agent_test::SessionIdOf(1), 0, {5});
  EXPECT_TRUE(ErrorOf(round_ok.send(), io_.waitScope).ok());

  auto abort = owner->agent.abortRequest();
  abort.setSessionId(proto::AsView(agent_test::SessionIdOf(1)));
  abort.setReason("challenger gave up");
  abort.send().wait(io_.waitScope);
  ExpectNothingHeld();
}

TEST_F(AgentRpcTest, SessionTimeoutFromTheServerTimer) {
  Start(agent_test::HostBackends());
  auto client = Connect();
  OrderSpec spec;
  spec.session_timeout_us = 60'000'000;
  ASSERT_TRUE(ErrorOf(StartRequest(*client, SignedOrder(spec, clock_)).send(), io_.waitScope).ok());
  io_.provider->getTimer().afterDelay(20 * kj::MILLISECONDS).wait(io_.waitScope);
  EXPECT_EQ(PhaseOverRpc(*client), proto::AgentPhase::READY);
  clock_.Advance(60'000'000);
  ExpectNothingHeld();
  EXPECT_NE(std::string(client->agent.statusRequest().send().wait(io_.waitScope).getStatus().getLastError().cStr())
                .find("timed out"),
            std::string::npos);
}

TEST_F(AgentRpcTest, TcpLoopbackSmoke) {
  Start(agent_test::HostBackends());
  const unsigned port = server_->Listen("127.0.0.1:0").wait(io_.waitScope);
  ASSERT_GT(port, 0u);
  auto connected = ConnectTcp(port);
  Client& client = *connected;
  auto described = client.agent.describeRequest().send().wait(io_.waitScope).getDescription();
  EXPECT_TRUE(described.getNodePublicKey() == proto::AsView(agent_test::NodeKey().public_key));

  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);
  ASSERT_TRUE(ErrorOf(StartRequest(client, order).send(), io_.waitScope).ok());
  auto round = client.agent.roundRequest();
  BuildRound(round.initRound(), agent_test::SessionIdOf(1), 0, {42});
  auto answer = round.send().wait(io_.waitScope);
  EXPECT_EQ(0, std::memcmp(answer.getAnswer().getLabels().begin(), agent_test::ExpectedLabels(256, 42, 1).data(), 32));
  auto finish = client.agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  auto transcript = finish.send().wait(io_.waitScope);
  EXPECT_TRUE(
      proto::VerifyAndParse<proto::TranscriptDigest>(transcript.getTranscript(), agent_test::NodeKey().public_key)
          .ok());
  ExpectNothingHeld();
  client.Drop();
  ASSERT_TRUE(SpinUntil([&] { return server_->connections() == 0; }));
}

// ----------------------------------------------------------------------------------------------
// Staying up under abuse.

// A listener whose accept() fails on demand: synchronously, as kj's does for EMFILE and ENFILE, or
// as a rejected promise. Connections pushed into it are handed out in order.
class FlakyReceiver final : public kj::ConnectionReceiver {
 public:
  explicit FlakyReceiver(kj::Timer& timer) : timer_(timer) {}

  kj::Promise<kj::Own<kj::AsyncIoStream>> accept() override {
    ++calls;
    if (throw_next > 0) {
      --throw_next;
      KJ_FAIL_SYSCALL("accept", EMFILE);
    }
    if (reject_next > 0) {
      --reject_next;
      return KJ_EXCEPTION(FAILED, "accept: Software caused connection abort");
    }
    if (!pending_.empty()) {
      kj::Own<kj::AsyncIoStream> next = kj::mv(pending_.front());
      pending_.pop_front();
      return kj::mv(next);
    }
    return timer_.afterDelay(1 * kj::MILLISECONDS).then([this]() { return accept(); });
  }
  unsigned getPort() override { return 0; }

  void Push(kj::Own<kj::AsyncIoStream> stream) { pending_.push_back(kj::mv(stream)); }

  int throw_next = 0;   // accept() calls left that throw EMFILE synchronously
  int reject_next = 0;  // then: calls left that return a rejected promise
  int calls = 0;

 private:
  kj::Timer& timer_;
  std::deque<kj::Own<kj::AsyncIoStream>> pending_;
};

TEST_F(AgentRpcTest, AcceptErrorsAreRetriedAndTheListenerStaysOpen) {
  options_.accept_retry_delay_us = 10'000;
  Start(agent_test::HostBackends());
  auto owned = kj::heap<FlakyReceiver>(io_.provider->getTimer());
  FlakyReceiver& receiver = *owned;
  receiver.throw_next = 3;  // as after "Too many open files"
  server_->Serve(kj::mv(owned));

  auto pipe = io_.provider->newTwoWayPipe();
  receiver.Push(kj::mv(pipe.ends[0]));
  Client first(Tls(kj::mv(pipe.ends[1])));
  EXPECT_EQ(PhaseOverRpc(first), proto::AgentPhase::IDLE);
  EXPECT_EQ(server_->accept_errors(), 3u);

  // Failing for a while (descriptors exhausted): retried after the delay, not in a busy loop.
  receiver.throw_next = 1'000'000;
  const int calls_before = receiver.calls;
  Spin(200);
  const int retries = receiver.calls - calls_before;
  EXPECT_GE(retries, 3);
  EXPECT_LE(retries, 25);  // 200 ms / 10 ms, loosely

  // Errors of both kinds, then connections again: every one is served, the session runs.
  receiver.throw_next = 2;
  receiver.reject_next = 2;
  auto second_pipe = io_.provider->newTwoWayPipe();
  receiver.Push(kj::mv(second_pipe.ends[0]));
  Client second(Tls(kj::mv(second_pipe.ends[1])));
  ASSERT_TRUE(ErrorOf(StartRequest(second, SignedOrder(OrderSpec(), clock_)).send(), io_.waitScope).ok());
  EXPECT_EQ(PhaseOverRpc(first), proto::AgentPhase::READY);
  EXPECT_EQ(server_->connections(), 2u);
  second.Drop();
  ExpectNothingHeld();
}

// At the cap a new connection evicts the oldest connection without a session, however recently
// that one called; the session owner is never evicted.
// threat-model: T-SLOW-LORIS
TEST_F(AgentRpcTest, AtTheCapTheOldestConnectionWithoutASessionIsEvicted) {
  options_.max_connections = 3;
  Start(agent_test::HostBackends());
  auto owner = Connect();
  auto poller = Connect();
  auto silent = Connect();
  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);
  ASSERT_TRUE(ErrorOf(StartRequest(*owner, order).send(), io_.waitScope).ok());
  EXPECT_EQ(PhaseOverRpc(*poller), proto::AgentPhase::READY);  // the poller called last

  auto first = Connect();  // evicts the poller: older than `silent`
  EXPECT_EQ(server_->connections(), 3u);
  EXPECT_EQ(server_->connections_evicted(), 1u);
  EXPECT_FALSE(ErrorOf(poller->agent.statusRequest().send(), io_.waitScope).ok());
  EXPECT_EQ(PhaseOverRpc(*first), proto::AgentPhase::READY);
  EXPECT_EQ(PhaseOverRpc(*silent), proto::AgentPhase::READY);  // still open

  auto second = Connect();  // evicts `silent`
  auto third = Connect();   // evicts `first`; never the owner
  EXPECT_EQ(server_->connections(), 3u);
  EXPECT_EQ(server_->connections_evicted(), 3u);
  EXPECT_EQ(server_->connections_refused(), 0u);
  EXPECT_FALSE(ErrorOf(silent->agent.statusRequest().send(), io_.waitScope).ok());
  EXPECT_FALSE(ErrorOf(first->agent.statusRequest().send(), io_.waitScope).ok());
  EXPECT_EQ(PhaseOverRpc(*second), proto::AgentPhase::READY);
  EXPECT_EQ(PhaseOverRpc(*third), proto::AgentPhase::READY);

  auto round = owner->agent.roundRequest();
  BuildRound(round.initRound(), agent_test::SessionIdOf(1), 0, {7});
  EXPECT_TRUE(ErrorOf(round.send(), io_.waitScope).ok());
  auto finish = owner->agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  EXPECT_TRUE(ErrorOf(finish.send(), io_.waitScope).ok());
  ExpectNothingHeld();

  // With its session over, the former owner is the oldest connection without a session.
  auto fourth = Connect();
  EXPECT_FALSE(ErrorOf(owner->agent.statusRequest().send(), io_.waitScope).ok());
  EXPECT_EQ(PhaseOverRpc(*fourth), proto::AgentPhase::IDLE);
  EXPECT_EQ(server_->connections_evicted(), 4u);
  EXPECT_EQ(server_->connections(), 3u);
}

// A new connection is closed at once only when no open connection may be evicted: here the only
// slot belongs to the session owner.
// threat-model: T-SLOW-LORIS
TEST_F(AgentRpcTest, NewConnectionIsClosedAtOnceOnlyWhenEverySlotOwnsASession) {
  options_.max_connections = 1;
  Start(agent_test::HostBackends());
  auto owner = Connect();
  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);
  ASSERT_TRUE(ErrorOf(StartRequest(*owner, order).send(), io_.waitScope).ok());

  auto refused = Connect();
  EXPECT_FALSE(ErrorOf(refused->agent.statusRequest().send(), io_.waitScope).ok());
  EXPECT_EQ(server_->connections(), 1u);
  EXPECT_EQ(server_->connections_refused(), 1u);
  EXPECT_EQ(server_->connections_evicted(), 0u);
  EXPECT_EQ(PhaseOverRpc(*owner), proto::AgentPhase::READY);  // the session goes on

  auto finish = owner->agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  EXPECT_TRUE(ErrorOf(finish.send(), io_.waitScope).ok());
  ExpectNothingHeld();
  auto later = Connect();  // the slot is evictable now
  EXPECT_EQ(PhaseOverRpc(*later), proto::AgentPhase::IDLE);
  EXPECT_EQ(server_->connections_evicted(), 1u);
  EXPECT_EQ(server_->connections_refused(), 1u);
}

TEST_F(AgentRpcTest, IdleConnectionsAreClosedButNotTheSessionOwner) {
  options_.idle_timeout_us = 250'000;
  Start(agent_test::HostBackends());
  auto owner = Connect();
  auto idle = Connect();
  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);
  ASSERT_TRUE(ErrorOf(StartRequest(*owner, order).send(), io_.waitScope).ok());
  // Opened after the fill, which may take longer than the idle timeout on a loaded machine.
  auto chatty = Connect();

  // 600 ms: the owner says nothing (its session governs it), `chatty` calls every 20 ms, `idle`
  // never calls.
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(PhaseOverRpc(*chatty), proto::AgentPhase::READY);
    Spin(20);
  }
  EXPECT_EQ(server_->connections(), 2u);
  EXPECT_EQ(server_->connections_idled_out(), 1u);
  EXPECT_FALSE(ErrorOf(idle->agent.statusRequest().send(), io_.waitScope).ok());

  auto round = owner->agent.roundRequest();
  BuildRound(round.initRound(), agent_test::SessionIdOf(1), 0, {7});
  EXPECT_TRUE(ErrorOf(round.send(), io_.waitScope).ok());
  auto finish = owner->agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  EXPECT_TRUE(ErrorOf(finish.send(), io_.waitScope).ok());
  ExpectNothingHeld();
  // With its session over, the owner is an idle connection like any other.
  ASSERT_TRUE(SpinUntil([&] { return server_->connections() == 0; }));
  EXPECT_EQ(server_->connections_idled_out(), 3u);
}

// Writes one byte every 10 ms to `stream` until a write fails (the agent closed it).
kj::Promise<void> Trickle(kj::Timer& timer, kj::AsyncIoStream& stream) {
  return timer.afterDelay(10 * kj::MILLISECONDS).then([&timer, &stream]() {
    static const char kByte = 0;
    return stream.write(&kByte, 1).then([&timer, &stream]() { return Trickle(timer, stream); });
  });
}

// Idle and trickling connections, authenticated or not, cannot block an honest session: an
// authenticated connection that never calls is closed after the idle timeout; unauthenticated ones
// (silent, or trickling a TLS record a byte at a time) after the handshake timeout. None of them
// ever held a connection slot.
// threat-model: T-HANDSHAKE-FLOOD
// threat-model: T-SLOW-LORIS
TEST_F(AgentRpcTest, IdleAndTricklingConnectionsDoNotBlockAnHonestSession) {
  options_.idle_timeout_us = 300'000;
  options_.handshake_timeout_us = 300'000;
  Start(agent_test::HostBackends());
  const unsigned port = server_->Listen("127.0.0.1:0").wait(io_.waitScope);
  auto address = io_.provider->getNetwork().parseAddress("127.0.0.1", port).wait(io_.waitScope);
  kj::Timer& timer = io_.provider->getTimer();

  auto silent = address->connect().wait(io_.waitScope);
  auto trickler = address->connect().wait(io_.waitScope);
  // A TLS record header announcing 16 KiB of handshake, then its bytes one at a time.
  const uint8_t record[5] = {0x16, 0x03, 0x01, 0x40, 0x00};
  trickler->write(record, sizeof(record)).wait(io_.waitScope);
  bool trickle_failed = false;
  kj::Promise<void> trickling =
      Trickle(timer, *trickler).catch_([&](kj::Exception&&) { trickle_failed = true; }).eagerlyEvaluate(nullptr);
  auto idle = ConnectTcp(port);  // authenticated, never calls

  auto honest = ConnectTcp(port);
  OrderSpec spec;
  const uint32_t rounds = 3;
  const proto::SignedEnvelope order = SignedOrder(spec, clock_);
  ASSERT_TRUE(ErrorOf(StartRequest(*honest, order).send(), io_.waitScope).ok());
  const auto expected = agent_test::ExpectedLabels(256, 0, 65536);
  for (uint32_t r = 0; r < rounds; ++r) {
    Spin(200);  // quiet for longer than the idle timeout in all: the session owner stays
    auto round = honest->agent.roundRequest();
    BuildRound(round.initRound(), spec.session_id, r, {11 + r, 60000 + r});
    auto answer = round.send().wait(io_.waitScope);
    ASSERT_EQ(answer.getAnswer().getLabels().size(), 64u);
    EXPECT_EQ(0, std::memcmp(answer.getAnswer().getLabels().begin(), expected.data() + 32 * (11 + r), 32));
  }
  auto finish = honest->agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  EXPECT_TRUE(ErrorOf(finish.send(), io_.waitScope).ok());
  ExpectNothingHeld();

  // Every abuser was closed meanwhile: the silent one reads EOF, the trickler's writes fail, the
  // idle one's calls fail.
  char byte;
  EXPECT_EQ(silent->tryRead(&byte, 1, 1).wait(io_.waitScope), 0u);
  ASSERT_TRUE(SpinUntil([&] { return trickle_failed; }));
  EXPECT_FALSE(ErrorOf(idle->agent.statusRequest().send(), io_.waitScope).ok());
  EXPECT_GE(server_->handshakes_timed_out(), 2u);
  EXPECT_GE(server_->connections_idled_out(), 1u);
  EXPECT_EQ(server_->connections(), 1u);
  EXPECT_EQ(server_->handshakes(), 0u);
}

// A third party holding every slot with silent connections and status pollers (well within the
// idle timeout) cannot keep an honest challenger out: each new connection evicts the oldest one
// without a session, and the session runs to a pass.
// threat-model: T-SLOW-LORIS
TEST_F(AgentRpcTest, ACapFullOfIdleAndPollingConnectionsDoesNotBlockAnHonestSession) {
  options_.max_connections = 4;
  Start(agent_test::HostBackends());
  const unsigned port = server_->Listen("127.0.0.1:0").wait(io_.waitScope);
  auto address = io_.provider->getNetwork().parseAddress("127.0.0.1", port).wait(io_.waitScope);
  // One at a time, so that the agent opens them in this order; each is authenticated (TLS) as the
  // challenger: the third party here holds the challenger's key, or these are the challenger's own
  // monitors. (Unauthenticated connections never take a slot.)
  auto connect = [&]() {
    const uint64_t opened = server_->connections() + server_->connections_evicted() + server_->connections_refused();
    auto stream = Tls(address->connect().wait(io_.waitScope));
    EXPECT_TRUE(SpinUntil([&] {
      return server_->connections() + server_->connections_evicted() + server_->connections_refused() > opened;
    }));
    return stream;
  };
  auto silent1 = connect();
  auto silent2 = connect();
  Client poller1(connect());
  Client poller2(connect());
  EXPECT_EQ(server_->connections(), 4u);

  Client honest(connect());  // evicts silent1
  OrderSpec spec;
  const uint32_t rounds = 2;
  const proto::SignedEnvelope order = SignedOrder(spec, clock_);
  ASSERT_TRUE(ErrorOf(StartRequest(honest, order).send(), io_.waitScope).ok());
  const auto expected = agent_test::ExpectedLabels(256, 0, 65536);
  for (uint32_t r = 0; r < rounds; ++r) {
    EXPECT_EQ(PhaseOverRpc(poller1), proto::AgentPhase::READY);
    EXPECT_EQ(PhaseOverRpc(poller2), proto::AgentPhase::READY);
    auto round = honest.agent.roundRequest();
    BuildRound(round.initRound(), spec.session_id, r, {11 + r});
    auto answer = round.send().wait(io_.waitScope);
    ASSERT_EQ(answer.getAnswer().getLabels().size(), 32u);
    EXPECT_EQ(0, std::memcmp(answer.getAnswer().getLabels().begin(), expected.data() + 32 * (11 + r), 32));
  }
  auto finish = honest.agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  EXPECT_TRUE(ErrorOf(finish.send(), io_.waitScope).ok());
  ExpectNothingHeld();
  EXPECT_TRUE(ClosedByTheAgent(*silent1));  // evicted
  EXPECT_EQ(server_->connections_evicted(), 1u);

  // Three more newcomers evict the rest in the order they opened, pollers included though they
  // have just called.
  auto newcomer1 = connect();
  auto newcomer2 = connect();
  auto newcomer3 = connect();
  EXPECT_TRUE(ClosedByTheAgent(*silent2));
  EXPECT_FALSE(ErrorOf(poller1.agent.statusRequest().send(), io_.waitScope).ok());
  EXPECT_FALSE(ErrorOf(poller2.agent.statusRequest().send(), io_.waitScope).ok());
  EXPECT_EQ(PhaseOverRpc(honest), proto::AgentPhase::IDLE);
  EXPECT_EQ(server_->connections_evicted(), 4u);
  EXPECT_EQ(server_->connections_refused(), 0u);
  EXPECT_EQ(server_->connections(), 4u);
}

TEST_F(AgentRpcTest, RefusedOrdersCostNoThread) {
  Start(agent_test::HostBackends());
  std::vector<kj::Own<Client>> clients;
  for (int i = 0; i < 8; ++i) clients.push_back(Connect());
  proto::SignedEnvelope tampered = SignedOrder(OrderSpec(), clock_);
  tampered.payload[16] ^= 0x80;
  using Response = capnp::Response<proto::ProverAgent::StartSessionResults>;
  std::vector<kj::Promise<Response>> pending;
  for (auto& c : clients) pending.push_back(StartRequest(*c, tampered).send());
  for (auto& p : pending) EXPECT_EQ(ErrorOf(p, io_.waitScope).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(server_->fill_threads_started(), 0u);

  ASSERT_TRUE(ErrorOf(StartRequest(*clients[0], SignedOrder(OrderSpec(), clock_)).send(), io_.waitScope).ok());
  EXPECT_EQ(server_->fill_threads_started(), 1u);
  pending.clear();
  for (size_t i = 1; i < clients.size(); ++i) {
    OrderSpec other;
    other.session_id = agent_test::SessionIdOf(static_cast<uint8_t>(10 + i));
    pending.push_back(StartRequest(*clients[i], SignedOrder(other, clock_)).send());
  }
  for (auto& p : pending) EXPECT_EQ(ErrorOf(p, io_.waitScope).code(), StatusCode::kBusy);
  EXPECT_EQ(server_->fill_threads_started(), 1u);
  EXPECT_EQ(PhaseOverRpc(*clients[0]), proto::AgentPhase::READY);
  clients[0]->Drop();
  ExpectNothingHeld();
}

// ----------------------------------------------------------------------------------------------
// The agent's boundary: authentication of the transport and of the order's deliverer.

// Only a client holding the pinned challenger certificate's key completes a handshake: one with an
// unpinned certificate, and one with none, cannot complete a call, and never become a connection.
// threat-model: T-UNPINNED-CLIENT
TEST_F(AgentRpcTest, OnlyThePinnedChallengerCompletesAHandshake) {
  Start(agent_test::HostBackends());
  auto stranger = ConnectTls(proto::GenerateKeyPair());
  EXPECT_FALSE(ErrorOf(stranger->agent.statusRequest().send(), io_.waitScope).ok());
  auto pipe = io_.provider->newTwoWayPipe();
  server_->AcceptTls(kj::mv(pipe.ends[0]));
  Client certless(TlsWithoutCertificate(kj::mv(pipe.ends[1])));
  EXPECT_FALSE(ErrorOf(certless.agent.statusRequest().send(), io_.waitScope).ok());
  EXPECT_EQ(server_->handshakes_failed(), 2u);
  EXPECT_EQ(server_->connections(), 0u);
  EXPECT_EQ(server_->handshakes(), 0u);

  auto challenger = ConnectTls();
  EXPECT_EQ(PhaseOverRpc(*challenger), proto::AgentPhase::IDLE);
  EXPECT_EQ(server_->connections(), 1u);
  EXPECT_EQ(server_->handshakes_failed(), 2u);
}

// A copy of a valid order (orders are no secret: the ledger keeps them) replayed by a third party
// within its validity window starts nothing and takes no memory: over TCP the third party cannot
// even complete the TLS handshake, with its own certificate or without one; a connection
// authenticated as another key, or not at all (in process), has the order refused before any memory
// is taken. The challenger then delivers the same order and it is accepted: the replays did not burn
// its session id.
// threat-model: T-COPIED-ORDER
TEST_F(AgentRpcTest, ACopiedOrderReplayedByAThirdPartyIsRefusedBeforeAnyMemoryIsTaken) {
  Start(agent_test::HostBackends());
  const unsigned port = server_->Listen("127.0.0.1:0").wait(io_.waitScope);
  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);

  auto third_party = ConnectTcp(port, proto::GenerateKeyPair());
  Status refused = ErrorOf(StartRequest(*third_party, order).send(), io_.waitScope);
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable) << refused.ToString();  // the connection is gone
  auto address = io_.provider->getNetwork().parseAddress("127.0.0.1", port).wait(io_.waitScope);
  Client certless(TlsWithoutCertificate(address->connect().wait(io_.waitScope)));
  EXPECT_FALSE(ErrorOf(StartRequest(certless, order).send(), io_.waitScope).ok());
  EXPECT_EQ(server_->handshakes_failed(), 2u);

  auto other_key = Connect(proto::RpcReaderOptions(), proto::KeyIdOf(proto::GenerateKeyPair().public_key));
  Status denied = ErrorOf(StartRequest(*other_key, order).send(), io_.waitScope);
  EXPECT_EQ(denied.code(), StatusCode::kPermissionDenied) << denied.ToString();
  EXPECT_NE(denied.message().find("this connection is authenticated as key id"), std::string::npos)
      << denied.ToString();
  auto unauthenticated = Connect(proto::RpcReaderOptions(), std::nullopt);
  denied = ErrorOf(StartRequest(*unauthenticated, order).send(), io_.waitScope);
  EXPECT_EQ(denied.code(), StatusCode::kPermissionDenied) << denied.ToString();
  EXPECT_NE(denied.message().find("this connection is not authenticated"), std::string::npos) << denied.ToString();
  EXPECT_EQ(server_->fill_threads_started(), 0u);
  EXPECT_EQ(core_->GetStatus().phase, proto::AgentPhase::IDLE);
  EXPECT_EQ(core_->GetStatus().bytes_acquired, 0u);
  EXPECT_EQ(LiveBytes(), base_live_);

  auto challenger = ConnectTcp(port);
  ASSERT_TRUE(ErrorOf(StartRequest(*challenger, order).send(), io_.waitScope).ok());
  EXPECT_EQ(server_->fill_threads_started(), 1u);
  challenger->Drop();
  ExpectNothingHeld();
}

// Before its handshake has authenticated it, nothing a peer sends is read as a Cap'n Proto frame:
// a frame header announcing 32 MiB followed by 1 MiB of bytes, sent raw or after a certificate-less
// TLS handshake, is closed on at once, capnp never sees it (no message refused on receipt), and the
// agent read at most kMaxHandshakeBytes from it.
// threat-model: T-PREAUTH-FRAMES
TEST_F(AgentRpcTest, NoFrameIsReadBeforeTheHandshakeAuthenticatesThePeer) {
  Start(agent_test::HostBackends());
  const unsigned port = server_->Listen("127.0.0.1:0").wait(io_.waitScope);
  auto address = io_.provider->getNetwork().parseAddress("127.0.0.1", port).wait(io_.waitScope);
  const uint32_t header[2] = {0, uint32_t{1} << 22};  // one segment of 2^22 words: 32 MiB
  const std::vector<char> body(size_t{1} << 20, 'x');
  auto send = [&](kj::AsyncIoStream& peer) {
    try {
      peer.write(header, sizeof(header)).wait(io_.waitScope);
      peer.write(body.data(), body.size()).wait(io_.waitScope);
    } catch (const kj::Exception&) {
      // The agent closed the connection before all of it was written.
    }
  };
  auto raw = address->connect().wait(io_.waitScope);
  send(*raw);
  EXPECT_TRUE(ClosedByTheAgent(*raw));
  auto certless = TlsWithoutCertificate(address->connect().wait(io_.waitScope));
  send(*certless);
  EXPECT_TRUE(ClosedByTheAgent(*certless));

  ASSERT_TRUE(SpinUntil([&] { return server_->handshakes_failed() == 2; }));
  EXPECT_EQ(server_->messages_refused(), 0u);
  EXPECT_EQ(server_->connections(), 0u);
  EXPECT_GT(server_->max_handshake_bytes_read(), 0u);
  EXPECT_LE(server_->max_handshake_bytes_read(), kMaxHandshakeBytes);
  EXPECT_EQ(core_->GetStatus().phase, proto::AgentPhase::IDLE);
}

// At the cap of handshakes a new connection closes the oldest handshake: connections that never
// finish theirs cannot keep the challenger from handshaking, nor take a connection slot.
// threat-model: T-HANDSHAKE-FLOOD
TEST_F(AgentRpcTest, AtTheHandshakeCapTheOldestHandshakeIsClosed) {
  options_.max_handshakes = 2;
  options_.max_connections = 1;
  Start(agent_test::HostBackends());
  const unsigned port = server_->Listen("127.0.0.1:0").wait(io_.waitScope);
  auto address = io_.provider->getNetwork().parseAddress("127.0.0.1", port).wait(io_.waitScope);
  std::vector<kj::Own<kj::AsyncIoStream>> silent;
  for (int i = 0; i < 3; ++i) {
    silent.push_back(address->connect().wait(io_.waitScope));
    ASSERT_TRUE(SpinUntil([&] { return server_->handshakes() + server_->handshakes_evicted() == size_t(i) + 1; }));
  }
  EXPECT_EQ(server_->handshakes(), 2u);
  EXPECT_EQ(server_->handshakes_evicted(), 1u);
  EXPECT_TRUE(ClosedByTheAgent(*silent[0]));

  auto challenger = ConnectTcp(port);  // closes silent[1], the oldest handshake now
  EXPECT_EQ(PhaseOverRpc(*challenger), proto::AgentPhase::IDLE);
  EXPECT_EQ(server_->handshakes_evicted(), 2u);
  EXPECT_TRUE(ClosedByTheAgent(*silent[1]));
  EXPECT_EQ(server_->connections(), 1u);
  EXPECT_EQ(server_->connections_evicted(), 0u);
  ASSERT_TRUE(ErrorOf(StartRequest(*challenger, SignedOrder(OrderSpec(), clock_)).send(), io_.waitScope).ok());
  challenger->Drop();
  ExpectNothingHeld();
}

// While a session runs, handshake work is paced (one handshake read's bytes per
// handshake_pace_us): three challengers' handshakes started at once have not finished a moment
// later, and finish one step at a time. With no session running nothing is paced.
// threat-model: T-HANDSHAKE-FLOOD
TEST_F(AgentRpcTest, HandshakesArePacedWhileASessionRuns) {
  options_.handshake_pace_us = 100'000;
  Start(agent_test::HostBackends());
  auto owner = Connect();
  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);
  ASSERT_TRUE(ErrorOf(StartRequest(*owner, order).send(), io_.waitScope).ok());

  std::vector<kj::Promise<kj::Own<kj::AsyncIoStream>>> pending;
  for (int i = 0; i < 3; ++i) {
    auto pipe = io_.provider->newTwoWayPipe();
    server_->AcceptTls(kj::mv(pipe.ends[0]));
    client_tls_.push_back(agent_test::ClientTls());
    pending.push_back(client_tls_.back()->Connect(kj::mv(pipe.ends[1])).eagerlyEvaluate(nullptr));
  }
  Spin(30);                               // each handshake needs two reads by the agent; at most one read per 100 ms
  EXPECT_EQ(server_->connections(), 1u);  // the owner alone
  EXPECT_EQ(server_->handshakes(), 3u);
  std::vector<kj::Own<kj::AsyncIoStream>> streams;
  for (auto& p : pending) streams.push_back(p.wait(io_.waitScope));
  ASSERT_TRUE(SpinUntil([&] { return server_->connections() == 4; }));
  EXPECT_GE(server_->handshake_reads_paced(), 4u);

  auto finish = owner->agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  EXPECT_TRUE(ErrorOf(finish.send(), io_.waitScope).ok());
  ExpectNothingHeld();
  const uint64_t paced = server_->handshake_reads_paced();
  auto idle_time = ConnectTls();
  EXPECT_EQ(PhaseOverRpc(*idle_time), proto::AgentPhase::IDLE);
  EXPECT_EQ(server_->handshake_reads_paced(), paced);
}

}  // namespace
}  // namespace wipeproof
