// The ProverAgent interface in process over an in-memory pipe: envelopes through RPC
// params, Status carried in exceptions, the RPC size limit. The agent here is a stand-in that
// answers from a formula; the real agent lives in prover/.
#include <capnp/message.h>
#include <capnp/rpc-twoparty.h>
#include <gtest/gtest.h>
#include <kj/async-io.h>

#include <cstring>
#include <optional>

#include "adversary/fixed_keys.h"
#include "proto/label_wire.h"
#include "proto/rpc_status.h"
#include "proto/signing.h"
#include "proto/transcript.h"
#include "proto/validate.h"

namespace wipeproof::proto {
namespace {

const uint8_t kSid[kSessionIdBytes] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 1};

// Label stand-in: index little-endian in the first 8 bytes, then zeros.
void FakeLabel(uint64_t index, uint8_t* out) {
  std::memset(out, 0, kLabelBytes);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(index >> (8 * i));
}

class FakeAgent final : public ProverAgent::Server {
 public:
  FakeAgent(PublicKey authority, PublicKey challenger, KeyPair node)
      : authority_(authority), challenger_(challenger), node_(std::move(node)) {}
  size_t oversize_answer_bytes = 0;  // when set, round answers carry this many label bytes

 protected:
  kj::Promise<void> startSession(StartSessionContext context) override {
    if (hasher_) return StatusToException(FailedPreconditionError("a session is already running"));
    auto order = VerifyAndParse<WipeOrder>(context.getParams().getOrder(), authority_);
    if (!order.ok()) return StatusToException(order.status());
    capnp::MallocMessageBuilder m;
    auto report = m.initRoot<FillReport>();
    report.setSessionId(order->root().getSessionId());
    Digest order_digest = Blake2b256(order->bytes());
    report.setOrderDigest(capnp::Data::Reader(order_digest.data(), order_digest.size()));
    KeyId id = KeyIdOf(node_.public_key);
    report.setNodeKeyId(capnp::Data::Reader(id.data(), id.size()));
    auto devices = report.initDevices(order->root().getDevices().size());
    for (uint32_t i = 0; i < devices.size(); ++i) {
      auto plan = order->root().getDevices()[i];
      devices[i].setSelector(plan.getSelector());
      devices[i].setLabelCount(plan.getLabelCount());
      devices[i].setBytesHeld(plan.getLabelCount() * kLabelBytes);
    }
    auto signed_report = SignMessage(report.asReader(), node_);
    if (!signed_report.ok()) return StatusToException(signed_report.status());
    hasher_.emplace();
    (void)hasher_->AddOrder(order->bytes());
    (void)hasher_->AddReport(AsView(signed_report->payload));
    WriteEnvelope(*signed_report, context.getResults().initReport());
    return kj::READY_NOW;
  }

  kj::Promise<void> round(RoundContext context) override {
    if (!hasher_) return StatusToException(FailedPreconditionError("no session"));
    ChallengeRound::Reader request = context.getParams().getRound();
    Status shape = WalkMessage(request);
    if (shape.ok()) shape = ValidateShape(request);
    if (!shape.ok()) return StatusToException(shape);
    auto answer = context.getResults().initAnswer();
    answer.setSessionId(request.getSessionId());
    answer.setRoundIndex(request.getRoundIndex());
    size_t count = 0;
    for (auto d : request.getDevices()) count += d.getLabelIndices().size();
    auto labels = answer.initLabels(oversize_answer_bytes ? oversize_answer_bytes : count * kLabelBytes);
    size_t at = 0;
    for (auto d : request.getDevices()) {
      for (uint64_t index : d.getLabelIndices()) {
        if (at + kLabelBytes <= labels.size()) FakeLabel(index, labels.begin() + at);
        at += kLabelBytes;
      }
    }
    Status hashed = hasher_->AddRound(request, answer.asReader());
    if (!hashed.ok()) return StatusToException(hashed);
    return kj::READY_NOW;
  }

  kj::Promise<void> finish(FinishContext context) override {
    if (!hasher_) return StatusToException(FailedPreconditionError("no session"));
    auto verdict = VerifyAndParse<Verdict>(context.getParams().getVerdict(), challenger_);
    if (!verdict.ok()) return StatusToException(verdict.status());
    auto digest = hasher_->Finish();
    if (!digest.ok()) return StatusToException(digest.status());
    capnp::MallocMessageBuilder m;
    auto t = m.initRoot<TranscriptDigest>();
    t.setSessionId(verdict->root().getSessionId());
    t.setDigest(capnp::Data::Reader(digest->data(), digest->size()));
    t.setRoundCount(hasher_->round_count());
    Digest vd = Blake2b256(verdict->bytes());
    t.setVerdictDigest(capnp::Data::Reader(vd.data(), vd.size()));
    KeyId id = KeyIdOf(node_.public_key);
    t.setNodeKeyId(capnp::Data::Reader(id.data(), id.size()));
    auto signed_t = SignMessage(t.asReader(), node_);
    if (!signed_t.ok()) return StatusToException(signed_t.status());
    WriteEnvelope(*signed_t, context.getResults().initTranscript());
    hasher_.reset();
    return kj::READY_NOW;
  }

  kj::Promise<void> status(StatusContext context) override {
    context.getResults().initStatus().setPhase(hasher_ ? AgentPhase::READY : AgentPhase::IDLE);
    return kj::READY_NOW;
  }

 private:
  PublicKey authority_, challenger_;
  KeyPair node_;
  std::optional<TranscriptHasher> hasher_;
};

// Both ends of an in-memory pipe, each with RpcReaderOptions.
class ProtoRpcTest : public ::testing::Test {
 protected:
  ProtoRpcTest()
      : io_(kj::setupAsyncIo()),
        pipe_(io_.provider->newTwoWayPipe()),
        server_net_(*pipe_.ends[0], capnp::rpc::twoparty::Side::SERVER, RpcReaderOptions()),
        client_net_(*pipe_.ends[1], capnp::rpc::twoparty::Side::CLIENT, RpcReaderOptions()),
        server_(capnp::makeRpcServer(server_net_, MakeAgent())),
        client_(capnp::makeRpcClient(client_net_)) {
    capnp::MallocMessageBuilder vat;
    vat.initRoot<capnp::rpc::twoparty::VatId>().setSide(capnp::rpc::twoparty::Side::SERVER);
    agent_ = client_.bootstrap(vat.getRoot<capnp::rpc::twoparty::VatId>()).castAs<ProverAgent>();
  }

  // capnp's destructors are noexcept(false); gtest's fixture destructor is noexcept.
  ~ProtoRpcTest() noexcept override {}

  ProverAgent::Client MakeAgent() {
    kj::Own<FakeAgent> agent = kj::heap<FakeAgent>(authority_.public_key, challenger_.public_key, node_);
    agent_impl_ = agent.get();
    return kj::mv(agent);
  }

  SignedEnvelope Order() {
    capnp::MallocMessageBuilder m;
    auto order = m.initRoot<WipeOrder>();
    uint8_t key_id[kKeyIdBytes] = {}, seed[kSessionSeedBytes] = {};
    order.setProtocolVersion(PROTOCOL_VERSION);
    order.setSessionId(capnp::Data::Reader(kSid, sizeof(kSid)));
    order.setNodeKeyId(capnp::Data::Reader(key_id, sizeof(key_id)));
    order.setChallengerKeyId(capnp::Data::Reader(key_id, sizeof(key_id)));
    order.setSeed(capnp::Data::Reader(seed, sizeof(seed)));
    order.setIssuedAtUnixUs(1);
    order.setExpiresAtUnixUs(2);
    order.setChunkLabels(256);
    order.setRoundDeadlineUs(500);
    order.setFillDeadlineUs(1'000'000);
    auto d = order.initDevices(1);
    d[0].setSelector("host");
    d[0].setLabelCount(1 << 16);
    d[0].setLabelsPerRound(4);
    d[0].setFillDeadlineUs(1'000'000);
    auto env = SignMessage(order.asReader(), authority_);
    EXPECT_TRUE(env.ok());
    return *env;
  }

  Status StartSession(const SignedEnvelope& order, SignedEnvelope* report) {
    auto req = agent_.startSessionRequest();
    WriteEnvelope(order, req.initOrder());
    try {
      auto resp = req.send().wait(io_.waitScope);
      WP_ASSIGN_OR_RETURN(*report, DecodeEnvelope(resp.getReport()));
      return Status::Ok();
    } catch (const kj::Exception& e) {
      return ExceptionToStatus(e);
    }
  }

  const KeyPair authority_ = adversary::FixedKey(0x11);
  const KeyPair challenger_ = adversary::FixedKey(0x22);
  const KeyPair node_ = adversary::FixedKey(0x33);
  kj::AsyncIoContext io_;
  kj::TwoWayPipe pipe_;
  capnp::TwoPartyVatNetwork server_net_, client_net_;
  FakeAgent* agent_impl_ = nullptr;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> server_, client_;
  ProverAgent::Client agent_ = nullptr;
};

TEST_F(ProtoRpcTest, SessionEndToEnd) {
  const SignedEnvelope order = Order();
  SignedEnvelope report_env;
  ASSERT_TRUE(StartSession(order, &report_env).ok());
  auto report = VerifyAndParse<FillReport>(report_env, node_.public_key);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->root().getDevices()[0].getBytesHeld(), uint64_t{1 << 16} * kLabelBytes);
  Digest od = Blake2b256(AsView(order.payload));
  EXPECT_EQ(Bytes(report->root().getOrderDigest().begin(), report->root().getOrderDigest().end()),
            Bytes(od.begin(), od.end()));

  TranscriptHasher mine;
  ASSERT_TRUE(mine.AddOrder(AsView(order.payload)).ok());
  ASSERT_TRUE(mine.AddReport(AsView(report_env.payload)).ok());
  for (uint32_t r = 0; r < 2; ++r) {
    capnp::MallocMessageBuilder rm;
    auto round = rm.initRoot<ChallengeRound>();
    round.setSessionId(capnp::Data::Reader(kSid, sizeof(kSid)));
    round.setRoundIndex(r);
    auto idx = round.initDevices(1)[0].initLabelIndices(4);
    for (uint32_t i = 0; i < 4; ++i) idx.set(i, 256 * (i + 1) + r);
    auto req = agent_.roundRequest();
    req.setRound(round.asReader());
    auto resp = req.send().wait(io_.waitScope);
    RoundAnswer::Reader answer = resp.getAnswer();
    ASSERT_EQ(answer.getLabels().size(), 4 * kLabelBytes);
    uint8_t want[kLabelBytes];
    FakeLabel(256 * 3 + r, want);
    EXPECT_EQ(0, std::memcmp(answer.getLabels().begin() + 2 * kLabelBytes, want, kLabelBytes));
    ASSERT_TRUE(mine.AddRound(round.asReader(), answer).ok());
  }

  capnp::MallocMessageBuilder vm;
  auto verdict = vm.initRoot<Verdict>();
  verdict.setSessionId(capnp::Data::Reader(kSid, sizeof(kSid)));
  verdict.setOrderDigest(capnp::Data::Reader(od.data(), od.size()));
  verdict.setPass(true);
  auto verdict_env = SignMessage(verdict.asReader(), challenger_);
  ASSERT_TRUE(verdict_env.ok());
  auto fin = agent_.finishRequest();
  WriteEnvelope(*verdict_env, fin.initVerdict());
  auto fin_resp = fin.send().wait(io_.waitScope);
  auto transcript = VerifyAndParse<TranscriptDigest>(fin_resp.getTranscript(), node_.public_key);
  ASSERT_TRUE(transcript.ok()) << transcript.status().ToString();
  auto digest = mine.Finish();
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(Bytes(transcript->root().getDigest().begin(), transcript->root().getDigest().end()),
            Bytes(digest->begin(), digest->end()));
  EXPECT_EQ(transcript->root().getRoundCount(), 2u);
  EXPECT_EQ(agent_.statusRequest().send().wait(io_.waitScope).getStatus().getPhase(), AgentPhase::IDLE);
}

TEST_F(ProtoRpcTest, RefusalsArriveAsTypedStatus) {
  SignedEnvelope order = Order();
  SignedEnvelope report;
  SignedEnvelope tampered = order;
  tampered.payload[8] ^= 1;
  Status s = StartSession(tampered, &report);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("signature does not verify"), std::string::npos) << s.ToString();

  auto wrong_signer = SignEnvelope(MessageKind::WIPE_ORDER, AsView(order.payload), challenger_);
  ASSERT_TRUE(wrong_signer.ok());
  EXPECT_EQ(StartSession(*wrong_signer, &report).code(), StatusCode::kPermissionDenied);

  ASSERT_TRUE(StartSession(order, &report).ok());
  Status second = StartSession(order, &report);
  EXPECT_EQ(second.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.message(), "a session is already running");
}

// capnp 0.9.2 checks the limit on both ends: the agent, built with RpcReaderOptions too, refuses to
// send the oversized answer and the call fails; a peer with a larger limit would have its message
// refused on receipt ("Message is too large").
TEST_F(ProtoRpcTest, AnswerOverRpcLimitFailsTheCall) {
  SignedEnvelope report;
  ASSERT_TRUE(StartSession(Order(), &report).ok());
  agent_impl_->oversize_answer_bytes = kMaxRpcMessageBytes + 64;
  capnp::MallocMessageBuilder rm;
  auto round = rm.initRoot<ChallengeRound>();
  round.setSessionId(capnp::Data::Reader(kSid, sizeof(kSid)));
  round.initDevices(1)[0].initLabelIndices(1).set(0, 5);
  auto req = agent_.roundRequest();
  req.setRound(round.asReader());
  try {
    req.send().wait(io_.waitScope);
    FAIL() << "an answer over kMaxRpcMessageBytes was accepted";
  } catch (const kj::Exception& e) {
    EXPECT_NE(std::string(e.getDescription().cStr()).find("traversalLimitInWords"), std::string::npos)
        << e.getDescription().cStr();
  }
}

}  // namespace
}  // namespace wipeproof::proto
