// The round channel (prover/agent/round_channel.h, proto/round_channel_client.h): a session's
// rounds on a second connection of its owner, without the RPC system. Covers the answers and the
// transcript (the same as over RPC), the token's rules (owner only, one use, constant per session,
// the order's challenger key), what a bad request does (a refusal before the hello leaves the
// session alone; a bad round or frame after it ends the session and frees its memory), the
// channel's life (closed with its session, by a newer channel, without a hello in time) and its
// slot at the connection cap.
#include <capnp/message.h>
#include <capnp/serialize-async.h>
#include <gtest/gtest.h>
#include <kj/async-io.h>

#include <cstring>
#include <vector>

#include "proto/round_channel_client.h"
#include "proto/rpc_status.h"
#include "proto/transcript.h"
#include "tests/prover/agent_rpc_fixture.h"
#include "tests/prover/agent_test_util.h"

namespace wipeproof {
namespace {

using agent_test::OrderSpec;
using agent_test::SignedOrder;
using agent_test::SignedVerdict;

// One round channel to the agent, over an in-memory pipe the server takes as authenticated.
struct Channel {
  explicit Channel(kj::Own<kj::AsyncIoStream> s) : stream(kj::mv(s)), client(*stream) {}
  kj::Own<kj::AsyncIoStream> stream;
  proto::RoundChannelClient client;
};

class RoundChannelTest : public AgentRpcTest {
 protected:
  kj::Own<Channel> OpenChannel(PeerKeyId as = agent_test::ChallengerKeyId()) {
    auto pipe = io_.provider->newTwoWayPipe();
    server_->Accept(kj::mv(pipe.ends[0]), as);
    return kj::heap<Channel>(kj::mv(pipe.ends[1]));
  }

  // Starts a session on `owner` (filled, its one device noticed) and returns its order.
  proto::SignedEnvelope StartFilled(Client& owner, const OrderSpec& spec) {
    const proto::SignedEnvelope order = SignedOrder(spec, clock_);
    auto report = StartRequest(owner, order).send().wait(io_.waitScope);
    report_ = *proto::DecodeEnvelope(report.getReport());
    auto filled = owner.agent.deviceFilledRequest();
    filled.setSessionId(proto::AsView(spec.session_id));
    filled.setDeviceIndex(0);
    notice_ = *proto::DecodeEnvelope(filled.send().wait(io_.waitScope).getNotice());
    return order;
  }

  StatusOr<proto::Bytes> TokenFor(Client& client, const proto::Bytes& session_id) {
    auto request = client.agent.openRoundChannelRequest();
    request.setSessionId(proto::AsView(session_id));
    try {
      auto token = request.send().wait(io_.waitScope).getToken();
      return proto::Bytes(token.begin(), token.end());
    } catch (const kj::Exception& e) {
      return proto::ExceptionToStatus(e);
    }
  }

  Status Hello(Channel& channel, const proto::Bytes& session_id, const proto::Bytes& token) {
    return ErrorOf(channel.client.Open(proto::AsView(session_id), proto::AsView(token)), io_.waitScope);
  }

  // Sends round `index` asking `indices` on `channel`; on success checks every label.
  Status Round(Channel& channel, const proto::Bytes& session_id, uint32_t index, const std::vector<uint64_t>& indices) {
    capnp::MallocMessageBuilder request;
    BuildRound(proto::RoundChannelClient::InitRound(request), session_id, index, indices);
    Status status = ErrorOf(channel.client.Send(request), io_.waitScope);
    if (!status.ok()) return status;
    auto answer = channel.client.answer();
    EXPECT_EQ(answer.getRoundIndex(), index);
    EXPECT_EQ(answer.getLabels().size(), indices.size() * 32);
    for (size_t i = 0; i < indices.size() && answer.getLabels().size() == indices.size() * 32; ++i) {
      EXPECT_EQ(0, std::memcmp(answer.getLabels().begin() + 32 * i, expected_.data() + 32 * indices[i], 32))
          << "label " << indices[i];
    }
    return status;
  }

  Status RpcRound(Client& client, const proto::Bytes& session_id, uint32_t index,
                  const std::vector<uint64_t>& indices) {
    auto request = client.agent.roundRequest();
    BuildRound(request.initRound(), session_id, index, indices);
    return ErrorOf(request.send(), io_.waitScope);
  }

  proto::SignedEnvelope report_, notice_;
  const std::vector<uint8_t> expected_ = agent_test::ExpectedLabels(256, 0, 65536);
};

// Rounds on the channel are answered right and make the same transcript as over RPC; rounds may
// switch between the two, as one sequence; the channel closes when the session ends.
TEST_F(RoundChannelTest, AnswersRoundsAndTheTranscriptHoldsThem) {
  Start(agent_test::HostBackends());
  auto owner = Connect();
  OrderSpec spec;
  const proto::SignedEnvelope order = StartFilled(*owner, spec);
  auto token = TokenFor(*owner, spec.session_id);
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(token->size(), 32u);
  auto channel = OpenChannel();
  ASSERT_TRUE(Hello(*channel, spec.session_id, *token).ok());
  EXPECT_EQ(server_->round_channels_opened(), 1u);

  proto::TranscriptHasher challenger;
  ASSERT_TRUE(challenger.AddOrder(proto::AsView(order.payload)).ok());
  ASSERT_TRUE(challenger.AddReport(proto::AsView(report_.payload)).ok());
  ASSERT_TRUE(challenger.AddNotice(0, proto::AsView(notice_.payload)).ok());
  for (uint32_t r = 0; r < 4; ++r) {
    const std::vector<uint64_t> indices = {5 + r, 300 + r, 40000 + r, 65535 - r};
    capnp::MallocMessageBuilder sent;
    BuildRound(sent.initRoot<proto::ChallengeRound>(), spec.session_id, r, indices);
    if (r == 2) {  // one round over RPC in between: the same sequence
      auto request = owner->agent.roundRequest();
      request.setRound(sent.getRoot<proto::ChallengeRound>().asReader());
      auto response = request.send().wait(io_.waitScope);
      ASSERT_TRUE(challenger.AddRound(sent.getRoot<proto::ChallengeRound>().asReader(), response.getAnswer()).ok());
      continue;
    }
    ASSERT_TRUE(Round(*channel, spec.session_id, r, indices).ok()) << "round " << r;
    ASSERT_TRUE(challenger.AddRound(sent.getRoot<proto::ChallengeRound>().asReader(), channel->client.answer()).ok());
  }
  auto finish = owner->agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  auto finished = finish.send().wait(io_.waitScope);
  auto transcript =
      proto::VerifyAndParse<proto::TranscriptDigest>(finished.getTranscript(), agent_test::NodeKey().public_key);
  ASSERT_TRUE(transcript.ok()) << transcript.status().ToString();
  EXPECT_EQ(transcript->root().getRoundCount(), 4u);
  auto digest = challenger.Finish();
  ASSERT_TRUE(digest.ok());
  EXPECT_TRUE(transcript->root().getDigest() == proto::AsView(*digest));
  ExpectNothingHeld();
  // The session is over: the agent closes the channel (its watch runs every second).
  EXPECT_TRUE(ClosedByTheAgent(*channel->stream));
  EXPECT_TRUE(SpinUntil([&] { return server_->connections() == 1u; }));
  EXPECT_EQ(server_->round_channels_refused(), 0u);
}

// Only the owner gets a token, only for its running session; a token is good for one hello, from
// the challenger key the order names; a wrong guess leaves the issued token usable. None of these
// refusals touches the session.
// threat-model: T-ROUND-CHANNEL
TEST_F(RoundChannelTest, TheTokenOpensOneChannelForTheOwnerOnly) {
  Start(agent_test::HostBackends());
  auto owner = Connect();
  auto other = Connect();
  OrderSpec spec;
  const proto::SignedEnvelope order = StartFilled(*owner, spec);
  EXPECT_EQ(TokenFor(*other, spec.session_id).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(TokenFor(*owner, agent_test::SessionIdOf(9)).status().code(), StatusCode::kFailedPrecondition);
  auto token = TokenFor(*owner, spec.session_id);
  ASSERT_TRUE(token.ok());

  proto::Bytes wrong = *token;
  wrong[31] ^= 1;
  auto guessed = OpenChannel();
  Status refused = Hello(*guessed, spec.session_id, wrong);
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied) << refused.ToString();
  EXPECT_TRUE(ClosedByTheAgent(*guessed->stream));
  auto other_session = OpenChannel();
  EXPECT_EQ(Hello(*other_session, agent_test::SessionIdOf(9), *token).code(), StatusCode::kPermissionDenied);
  // A peer authenticated as another key than the order's challenger.
  auto stranger = OpenChannel(proto::KeyIdOf(agent_test::AuthorityKey().public_key));
  EXPECT_EQ(Hello(*stranger, spec.session_id, *token).code(), StatusCode::kPermissionDenied);
  auto unauthenticated = OpenChannel(std::nullopt);
  EXPECT_EQ(Hello(*unauthenticated, spec.session_id, *token).code(), StatusCode::kPermissionDenied);

  auto channel = OpenChannel();
  ASSERT_TRUE(Hello(*channel, spec.session_id, *token).ok()) << "the token survived the wrong guesses";
  auto replay = OpenChannel();
  EXPECT_EQ(Hello(*replay, spec.session_id, *token).code(), StatusCode::kPermissionDenied) << "used up";
  EXPECT_EQ(server_->round_channels_refused(), 5u);

  // The session went on through all of it.
  EXPECT_TRUE(Round(*channel, spec.session_id, 0, {7, 4464}).ok());
  EXPECT_TRUE(RpcRound(*owner, spec.session_id, 1, {8}).ok());
  auto finish = owner->agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  EXPECT_TRUE(ErrorOf(finish.send(), io_.waitScope).ok());
  ExpectNothingHeld();
}

// A hello or token request naming a huge session id is refused with a short text: the peer's
// megabytes are never hex-encoded, copied into the refusal or logged. The session goes on.
// threat-model: T-ROUND-CHANNEL
TEST_F(RoundChannelTest, AHugeSessionIdIsRefusedWithoutBeingCopied) {
  Start(agent_test::HostBackends());
  auto owner = Connect();
  OrderSpec spec;
  StartFilled(*owner, spec);
  const proto::Bytes huge(4 << 20, 0xab);
  auto token = TokenFor(*owner, huge);
  EXPECT_EQ(token.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_LT(token.status().message().size(), 200u) << token.status().message().substr(0, 300);
  auto good = TokenFor(*owner, spec.session_id);
  ASSERT_TRUE(good.ok());
  auto channel = OpenChannel();
  Status refused = Hello(*channel, huge, *good);
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_LT(refused.message().size(), 200u) << refused.message().substr(0, 300);
  EXPECT_NE(refused.message().find("id of 4194304 bytes (16 expected)"), std::string::npos) << refused.message();
  EXPECT_TRUE(ClosedByTheAgent(*channel->stream));
  EXPECT_TRUE(RpcRound(*owner, spec.session_id, 0, {1}).ok()) << "the session goes on";
}

// Before the hello nothing but a hello is answered, and a refusal there leaves the session alone.
TEST_F(RoundChannelTest, ARoundBeforeTheHelloIsRefusedAndTheSessionGoesOn) {
  Start(agent_test::HostBackends());
  auto owner = Connect();
  OrderSpec spec;
  StartFilled(*owner, spec);
  auto channel = OpenChannel();
  auto& stream = *channel->stream;
  const capnp::Data::Reader preface = proto::ROUND_CHANNEL_PREFACE.get();
  stream.write(preface.begin(), preface.size()).wait(io_.waitScope);
  capnp::MallocMessageBuilder request;
  BuildRound(proto::RoundChannelClient::InitRound(request), spec.session_id, 0, {1});
  Status refused = ErrorOf(channel->client.Send(request), io_.waitScope);
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied) << refused.ToString();
  EXPECT_NE(refused.message().find("before the round channel's hello"), std::string::npos) << refused.ToString();
  EXPECT_TRUE(ClosedByTheAgent(stream));
  EXPECT_EQ(core_->GetStatus().phase, proto::AgentPhase::READY);
  EXPECT_TRUE(RpcRound(*owner, spec.session_id, 0, {1}).ok());
}

// After the hello a bad round ends the session (the protocol-error policy of ProverAgent.round),
// frees its memory and closes the channel; so does a malformed or oversized frame.
TEST_F(RoundChannelTest, ABadRoundOrFrameAfterTheHelloEndsTheSession) {
  enum class Bad { kWrongIndex, kOtherSession, kOutOfRange, kSecondHello, kOversizedFrame };
  for (Bad bad : {Bad::kWrongIndex, Bad::kOtherSession, Bad::kOutOfRange, Bad::kSecondHello, Bad::kOversizedFrame}) {
    SCOPED_TRACE(static_cast<int>(bad));
    Start(agent_test::HostBackends());
    auto owner = Connect();
    OrderSpec spec;
    StartFilled(*owner, spec);
    auto token = TokenFor(*owner, spec.session_id);
    ASSERT_TRUE(token.ok());
    auto channel = OpenChannel();
    ASSERT_TRUE(Hello(*channel, spec.session_id, *token).ok());
    ASSERT_TRUE(Round(*channel, spec.session_id, 0, {1, 2}).ok());
    Status refused;
    switch (bad) {
      case Bad::kWrongIndex:
        refused = Round(*channel, spec.session_id, 5, {1});
        break;
      case Bad::kOtherSession:
        refused = Round(*channel, agent_test::SessionIdOf(9), 1, {1});
        break;
      case Bad::kOutOfRange:
        refused = Round(*channel, spec.session_id, 1, {65536});
        break;
      case Bad::kSecondHello: {
        capnp::MallocMessageBuilder hello;
        auto body = hello.initRoot<proto::RoundChannelRequest>().initHello();
        body.setSessionId(proto::AsView(spec.session_id));
        body.setToken(proto::AsView(*token));
        capnp::writeMessage(*channel->stream, hello).wait(io_.waitScope);
        auto reply = capnp::readMessage(*channel->stream, proto::RpcReaderOptions()).wait(io_.waitScope);
        ASSERT_EQ(reply->getRoot<proto::RoundChannelReply>().which(), proto::RoundChannelReply::REFUSED);
        refused = InvalidArgumentError(reply->getRoot<proto::RoundChannelReply>().getRefused().cStr());
        EXPECT_NE(refused.message().find("a second hello"), std::string::npos) << refused.ToString();
        break;
      }
      case Bad::kOversizedFrame: {
        // A frame header announcing one segment of 2^28 words (2 GiB): refused on its header.
        const uint32_t header[2] = {0, 1u << 28};
        channel->stream->write(header, sizeof header).wait(io_.waitScope);
        refused = InvalidArgumentError("sent");
        break;
      }
    }
    EXPECT_FALSE(refused.ok());
    EXPECT_TRUE(ClosedByTheAgent(*channel->stream));
    ExpectNothingHeld();
    EXPECT_EQ(server_->round_channels_refused(), 1u);
    EXPECT_FALSE(RpcRound(*owner, spec.session_id, 1, {1}).ok()) << "the session ended";
    channel = nullptr;
    owner = nullptr;
    server_ = nullptr;
    core_.reset();
  }
}

// A newer channel of the same owner closes the older one; a channel without a hello closes after
// the handshake timeout; a channel serving a running session keeps its slot at the connection cap.
TEST_F(RoundChannelTest, ChannelsCloseWhenReplacedOrSilentAndHoldTheirSlotWhileServing) {
  options_.max_connections = 3;
  options_.handshake_timeout_us = 200'000;
  Start(agent_test::HostBackends());
  auto owner = Connect();
  OrderSpec spec;
  const proto::SignedEnvelope order = StartFilled(*owner, spec);
  auto first_token = TokenFor(*owner, spec.session_id);
  ASSERT_TRUE(first_token.ok());
  auto first = OpenChannel();
  ASSERT_TRUE(Hello(*first, spec.session_id, *first_token).ok());
  ASSERT_TRUE(Round(*first, spec.session_id, 0, {3}).ok());

  auto silent = OpenChannel();
  auto& silent_stream = *silent->stream;
  const capnp::Data::Reader preface = proto::ROUND_CHANNEL_PREFACE.get();
  silent_stream.write(preface.begin(), preface.size()).wait(io_.waitScope);
  EXPECT_TRUE(ClosedByTheAgent(silent_stream)) << "no hello within the handshake timeout";

  auto second_token = TokenFor(*owner, spec.session_id);
  ASSERT_TRUE(second_token.ok());
  auto second = OpenChannel();
  ASSERT_TRUE(Hello(*second, spec.session_id, *second_token).ok());
  EXPECT_TRUE(ClosedByTheAgent(*first->stream)) << "replaced by the newer channel";
  ASSERT_TRUE(Round(*second, spec.session_id, 1, {4}).ok());

  // At the cap (owner, second, one more), a newcomer evicts the idle connection, never the channel.
  auto idle = Connect();
  EXPECT_EQ(PhaseOverRpc(*idle), proto::AgentPhase::READY);
  auto newcomer = Connect();
  EXPECT_EQ(PhaseOverRpc(*newcomer), proto::AgentPhase::READY);
  EXPECT_FALSE(ErrorOf(idle->agent.statusRequest().send(), io_.waitScope).ok()) << "evicted";
  ASSERT_TRUE(Round(*second, spec.session_id, 2, {5}).ok()) << "the channel kept its slot";

  auto finish = owner->agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  EXPECT_TRUE(ErrorOf(finish.send(), io_.waitScope).ok());
  ExpectNothingHeld();
  EXPECT_TRUE(ClosedByTheAgent(*second->stream));
}

// Closing the channel does not end the session: its owner's connection does.
TEST_F(RoundChannelTest, ClosingTheChannelLeavesTheSessionToItsOwner) {
  Start(agent_test::HostBackends());
  auto owner = Connect();
  OrderSpec spec;
  StartFilled(*owner, spec);
  auto token = TokenFor(*owner, spec.session_id);
  ASSERT_TRUE(token.ok());
  auto channel = OpenChannel();
  ASSERT_TRUE(Hello(*channel, spec.session_id, *token).ok());
  ASSERT_TRUE(Round(*channel, spec.session_id, 0, {9}).ok());
  channel = nullptr;
  Spin(20);
  EXPECT_EQ(core_->GetStatus().phase, proto::AgentPhase::READY);
  EXPECT_TRUE(RpcRound(*owner, spec.session_id, 1, {10}).ok());
  owner->Drop();
  ExpectNothingHeld();
}

// Over a real TLS 1.3 handshake (the way `wipe` reaches an agent): the same channel.
TEST_F(RoundChannelTest, WorksOverTls) {
  Start(agent_test::HostBackends());
  auto owner = ConnectTls();
  OrderSpec spec;
  StartFilled(*owner, spec);
  auto token = TokenFor(*owner, spec.session_id);
  ASSERT_TRUE(token.ok());
  auto pipe = io_.provider->newTwoWayPipe();
  server_->AcceptTls(kj::mv(pipe.ends[0]));
  Channel channel(Tls(kj::mv(pipe.ends[1])));
  ASSERT_TRUE(Hello(channel, spec.session_id, *token).ok());
  ASSERT_TRUE(Round(channel, spec.session_id, 0, {11, 12, 13}).ok());
  owner->Drop();
  ExpectNothingHeld();
}

}  // namespace
}  // namespace wipeproof
