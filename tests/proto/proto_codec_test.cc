// Canonical encoding, bounded parsing, shape checks, the transcript digest and Status over RPC.
#include <capnp/message.h>
#include <gtest/gtest.h>
#include <sodium.h>

#include <memory>
#include <random>
#include <string>

#include "common/hex.h"
#include "proto/codec.h"
#include "proto/label_wire.h"
#include "proto/rpc_status.h"
#include "proto/transcript.h"
#include "proto/validate.h"

namespace wipeproof::proto {
namespace {

const uint8_t kSid[kSessionIdBytes] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

void FillRound(ChallengeRound::Builder round, uint32_t index) {
  round.setSessionId(capnp::Data::Reader(kSid, sizeof(kSid)));
  round.setRoundIndex(index);
  auto devices = round.initDevices(2);
  devices[0].setDeviceIndex(0);
  auto a = devices[0].initLabelIndices(2);
  a.set(0, 17);
  a.set(1, 5000);
  devices[1].setDeviceIndex(1);
  devices[1].initLabelIndices(1).set(0, 1u << 20);
}

void FillAnswer(RoundAnswer::Builder answer, uint32_t index, uint8_t label_fill) {
  answer.setSessionId(capnp::Data::Reader(kSid, sizeof(kSid)));
  answer.setRoundIndex(index);
  auto labels = answer.initLabels(3 * kLabelBytes);
  std::fill(labels.begin(), labels.end(), label_fill);
  answer.setAgentMicros(12);
}

TEST(ProtoCodecTest, CanonicalBytesDoNotDependOnBuildOrder) {
  capnp::MallocMessageBuilder a, b;
  FillAnswer(a.initRoot<RoundAnswer>(), 4, 0x5a);
  auto rb = b.initRoot<RoundAnswer>();  // same values, set in another order, after a resize
  rb.setAgentMicros(12);
  rb.initLabels(7);
  auto labels = rb.initLabels(3 * kLabelBytes);
  std::fill(labels.begin(), labels.end(), 0x5a);
  rb.setRoundIndex(4);
  rb.setSessionId(capnp::Data::Reader(kSid, sizeof(kSid)));
  auto ea = EncodeCanonical(a.getRoot<RoundAnswer>().asReader());
  auto eb = EncodeCanonical(rb.asReader());
  ASSERT_TRUE(ea.ok() && eb.ok());
  EXPECT_EQ(*ea, *eb);
  // root pointer + 1 data word + 2 pointers + 2 words session id + 12 words labels
  EXPECT_EQ(ea->size(), 8u * (1 + 1 + 2 + 2 + 12));
}

TEST(ProtoCodecTest, ParseRoundTripAndLimits) {
  capnp::MallocMessageBuilder m;
  FillAnswer(m.initRoot<RoundAnswer>(), 9, 0x11);
  auto bytes = EncodeCanonical(m.getRoot<RoundAnswer>().asReader());
  ASSERT_TRUE(bytes.ok());
  auto parsed = ParseMessage<RoundAnswer>(AsView(*bytes));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->root().getRoundIndex(), 9u);
  EXPECT_EQ(parsed->root().getLabels().size(), 96u);
  EXPECT_EQ(parsed->root().getLabels()[95], 0x11);

  Bytes odd(bytes->begin(), bytes->end() - 3);
  EXPECT_EQ(ParseMessage<RoundAnswer>(AsView(odd)).status().code(), StatusCode::kInvalidArgument);
  Bytes empty;
  EXPECT_EQ(ParseMessage<RoundAnswer>(AsView(empty)).status().code(), StatusCode::kInvalidArgument);
  Bytes big(kMaxChallengeRoundBytes + 8, 0);
  auto too_big = ParseMessage<ChallengeRound>(AsView(big));
  EXPECT_EQ(too_big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(too_big.status().message(), "ChallengeRound: 4194312 bytes, over the limit of 4194304");
}

TEST(ProtoCodecTest, AnswerWithPartialLabelRejected) {
  capnp::MallocMessageBuilder m;
  auto answer = m.initRoot<RoundAnswer>();
  FillAnswer(answer, 0, 1);
  answer.initLabels(33);
  auto bytes = EncodeCanonical(answer.asReader());
  ASSERT_TRUE(bytes.ok());
  auto parsed = ParseMessage<RoundAnswer>(AsView(*bytes));
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(), "RoundAnswer: labels: 33 bytes is not a whole number of 32-byte labels");
}

TEST(ProtoCodecTest, WalkCatchesPointerOfWrongType) {
  // A ChallengeRound read as a RoundAnswer: pointer 1 is a struct list where Data (a byte list)
  // is expected. capnp raises only when the field is read; the walk reads every field, so the
  // error surfaces in ParseMessage and not later in the caller.
  capnp::MallocMessageBuilder m;
  FillRound(m.initRoot<ChallengeRound>(), 0);
  auto bytes = EncodeCanonical(m.getRoot<ChallengeRound>().asReader());
  ASSERT_TRUE(bytes.ok());
  auto parsed = ParseMessage<RoundAnswer>(AsView(*bytes));
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message().rfind("RoundAnswer: malformed", 0), 0u) << parsed.status().ToString();
}

// Mutated bytes never crash the parser: each result is OK or INVALID_ARGUMENT, and an accepted
// message can be read in full without an exception.
TEST(ProtoCodecTest, MutatedBytesAreAcceptedOrRejectedCleanly) {
  capnp::MallocMessageBuilder m;
  auto round = m.initRoot<ChallengeRound>();
  FillRound(round, 7);
  auto good = EncodeCanonical(round.asReader());
  ASSERT_TRUE(good.ok());
  std::mt19937 rng(20240601);  // fixed seed: the same mutations every run
  int accepted = 0, rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Bytes bytes = *good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    auto parsed = ParseMessage<ChallengeRound>(AsView(bytes));
    if (!parsed.ok()) {
      ASSERT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << parsed.status().ToString();
      ++rejected;
      continue;
    }
    ++accepted;
    uint64_t sum = 0;
    EXPECT_NO_THROW({
      for (auto d : parsed->root().getDevices()) {
        for (uint64_t index : d.getLabelIndices()) sum += index;
      }
    });
    (void)sum;
  }
  EXPECT_GT(accepted, 0);  // flips inside plain values leave a valid message
  EXPECT_GT(rejected, 0);  // flips in pointers or the session id do not
}

class ProtoOrderShapeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WipeOrder::Builder order_ = message_->initRoot<WipeOrder>();
    uint8_t key_id[kKeyIdBytes] = {}, seed[kSessionSeedBytes] = {};
    order_.setProtocolVersion(PROTOCOL_VERSION);
    order_.setSessionId(capnp::Data::Reader(kSid, sizeof(kSid)));
    order_.setNodeKeyId(capnp::Data::Reader(key_id, sizeof(key_id)));
    order_.setChallengerKeyId(capnp::Data::Reader(key_id, sizeof(key_id)));
    order_.setSeed(capnp::Data::Reader(seed, sizeof(seed)));
    order_.setIssuedAtUnixUs(1);
    order_.setExpiresAtUnixUs(2);
    order_.setChunkLabels(1024);
    order_.setRoundDeadlineUs(500);
    order_.setFillDeadlineUs(1'000'000);
    auto d = order_.initDevices(2);
    d[0].setSelector("host");
    d[0].setFirstLabel(0);
    d[0].setLabelCount(4096);
    d[0].setLabelsPerRound(4);
    d[0].setFillDeadlineUs(1'000'000);
    d[1].setSelector("GPU-1");
    d[1].setFirstLabel(4096);
    d[1].setLabelCount(2048);
    d[1].setLabelsPerRound(2);
    d[1].setFillDeadlineUs(500'000);
  }
  std::string Check() { return ValidateShape(order().asReader()).message(); }
  WipeOrder::Builder order() { return message_->getRoot<WipeOrder>(); }

  // unique_ptr: MallocMessageBuilder's destructor is noexcept(false), gtest's fixtures are not.
  std::unique_ptr<capnp::MallocMessageBuilder> message_ = std::make_unique<capnp::MallocMessageBuilder>();
};

TEST_F(ProtoOrderShapeTest, ValidOrderPasses) { EXPECT_TRUE(ValidateShape(order().asReader()).ok()) << Check(); }

TEST_F(ProtoOrderShapeTest, EachBadFieldNamed) {
  order().setProtocolVersion(2);  // v2 orders were the authority's: no delegation
  EXPECT_EQ(Check(), "protocolVersion 2, want 3");
  order().setProtocolVersion(3);
  order().setChunkLabels(0);
  EXPECT_EQ(Check(), "chunkLabels 0 is outside [1, 2^20]");
  order().setChunkLabels((1u << 20) + 1);
  EXPECT_EQ(Check(), "chunkLabels 1048577 is outside [1, 2^20]");
  order().setChunkLabels(1024);
  order().setExpiresAtUnixUs(1);
  EXPECT_EQ(Check(), "expiresAtUnixUs is not after issuedAtUnixUs");
  order().setExpiresAtUnixUs(2);
  order().getDevices()[1].setFirstLabel(4000);  // overlaps device 0
  EXPECT_EQ(Check(), "devices: label ranges overlap or share a chunk at label 4000");
  order().getDevices()[1].setFirstLabel(4096 + 100);  // chunk 4 shared? no: device 0 ends in chunk 3
  EXPECT_TRUE(ValidateShape(order().asReader()).ok()) << Check();
  order().getDevices()[0].setLabelCount(4097);  // device 0 now ends in chunk 4, device 1 starts there
  EXPECT_EQ(Check(), "devices: label ranges overlap or share a chunk at label 4196");
  order().getDevices()[0].setLabelCount(4096);
  order().setFormat(LabelFormat::POSEDB_BLAKE3_N192);  // device 1 starts mid-chunk
  EXPECT_EQ(Check(), "devices[1]: posedbBlake3N192 plans must cover whole chunks");
  order().getDevices()[1].setFirstLabel(4096);
  EXPECT_TRUE(ValidateShape(order().asReader()).ok()) << Check();
  order().getDevices()[1].setLabelsPerRound(0);
  EXPECT_EQ(Check(), "devices[1]: labelsPerRound is 0");
  order().getDevices()[1].setLabelsPerRound(3);  // 2048 labels = 2 chunks of 1024
  EXPECT_EQ(Check(), "devices[1]: labelsPerRound 3 exceeds the 2 chunks of its range");
  order().getDevices()[1].setLabelsPerRound(2);
  EXPECT_TRUE(ValidateShape(order().asReader()).ok()) << Check();
  // The label engine's index space ends at 2^62: a range past it is refused with the order, before
  // an agent holds memory for it. Ending exactly at 2^62 is the largest allowed.
  const uint64_t limit = uint64_t{1} << 62;
  order().getDevices()[1].setFirstLabel(limit - 2048);
  EXPECT_TRUE(ValidateShape(order().asReader()).ok()) << Check();
  order().getDevices()[1].setFirstLabel(limit - 1024);
  EXPECT_EQ(Check(), "devices[1]: label range [4611686018427386880, +2048) exceeds the index space (2^62)");
  order().getDevices()[1].setFirstLabel(uint64_t{1} << 63);
  EXPECT_EQ(Check(), "devices[1]: label range [9223372036854775808, +2048) exceeds the index space (2^62)");
  order().getDevices()[1].setFirstLabel(4096);
  EXPECT_TRUE(ValidateShape(order().asReader()).ok()) << Check();
}

TEST(ProtoMessageKindTest, NamesAndLimits) {
  EXPECT_EQ(MessageKindName(MessageKind::WIPE_ORDER), "wipeOrder");
  EXPECT_EQ(MessageKindName(MessageKind::LEDGER_ENTRY), "ledgerEntry");
  EXPECT_EQ(MessageKindName(static_cast<MessageKind>(99)), "kind(99)");
  EXPECT_EQ(MaxPayloadBytes(MessageKind::WIPE_ORDER), size_t{1} << 20);
  EXPECT_EQ(MaxPayloadBytes(MessageKind::UNKNOWN), 0u);
  EXPECT_EQ(MaxPayloadBytes(static_cast<MessageKind>(99)), 0u);
  EXPECT_EQ(RpcReaderOptions().traversalLimitInWords, uint64_t{4} << 20);
}

// The transcript digest, recomputed here straight from the rule written in proto/transcript.h.
Digest ReferenceTranscript(const Bytes& order, const std::vector<Bytes>& notices, const Bytes& report,
                           const std::vector<Bytes>& items, uint32_t rounds) {
  auto item = [](crypto_generichash_state* st, uint8_t tag, const Bytes& b) {
    uint8_t h[9] = {tag};
    for (int i = 0; i < 8; ++i) h[1 + i] = static_cast<uint8_t>(uint64_t{b.size()} >> (8 * i));
    crypto_generichash_update(st, h, 9);
    crypto_generichash_update(st, b.data(), b.size());
  };
  crypto_generichash_state rs;
  crypto_generichash_init(&rs, nullptr, 0, 32);
  for (size_t i = 0; i < items.size(); ++i) item(&rs, i % 2 == 0 ? 3 : 4, items[i]);
  Bytes rounds_digest(32);
  crypto_generichash_final(&rs, rounds_digest.data(), rounds_digest.size());

  crypto_generichash_state st;
  crypto_generichash_init(&st, nullptr, 0, 32);
  const std::string context = "wipeproof/v2/transcript";
  crypto_generichash_update(&st, reinterpret_cast<const uint8_t*>(context.data()), context.size());
  item(&st, 1, order);
  for (const Bytes& n : notices) item(&st, 6, n);
  item(&st, 2, report);
  item(&st, 7, rounds_digest);
  item(&st, 5,
       Bytes{static_cast<uint8_t>(rounds), static_cast<uint8_t>(rounds >> 8), static_cast<uint8_t>(rounds >> 16),
             static_cast<uint8_t>(rounds >> 24)});
  Digest d;
  crypto_generichash_final(&st, d.data(), d.size());
  return d;
}

TEST(ProtoTranscriptTest, MatchesWrittenRuleAndBothSidesAgreeWhateverTheInterleaving) {
  ASSERT_TRUE(InitSodium().ok());
  const Bytes order(40, 0xaa), report(24, 0xbb), notice0(16, 0xc0), notice1(16, 0xc1);
  TranscriptHasher challenger, agent;
  std::vector<Bytes> items;
  ASSERT_TRUE(challenger.AddOrder(AsView(order)).ok());
  ASSERT_TRUE(agent.AddOrder(AsView(order)).ok());
  // The agent sends device 1's notice first and answers a round on it before device 0 fills and
  // before the report; the challenger receives them in another order. Same digest.
  ASSERT_TRUE(agent.AddNotice(1, AsView(notice1)).ok());
  ASSERT_TRUE(challenger.AddNotice(1, AsView(notice1)).ok());
  for (uint32_t r = 0; r < 3; ++r) {
    if (r == 1) {
      ASSERT_TRUE(challenger.AddReport(AsView(report)).ok());
      ASSERT_TRUE(challenger.AddNotice(0, AsView(notice0)).ok());
      ASSERT_TRUE(agent.AddNotice(0, AsView(notice0)).ok());
    }
    if (r == 2) ASSERT_TRUE(agent.AddReport(AsView(report)).ok());
    capnp::MallocMessageBuilder rm, am;
    FillRound(rm.initRoot<ChallengeRound>(), r);
    FillAnswer(am.initRoot<RoundAnswer>(), r, static_cast<uint8_t>(r));
    ASSERT_TRUE(
        challenger.AddRound(rm.getRoot<ChallengeRound>().asReader(), am.getRoot<RoundAnswer>().asReader()).ok());
    // The agent hashes copies parsed from canonical bytes (as if received over the wire).
    auto rb = EncodeCanonical(rm.getRoot<ChallengeRound>().asReader());
    auto ab = EncodeCanonical(am.getRoot<RoundAnswer>().asReader());
    ASSERT_TRUE(rb.ok() && ab.ok());
    auto rp = ParseMessage<ChallengeRound>(AsView(*rb));
    auto ap = ParseMessage<RoundAnswer>(AsView(*ab));
    ASSERT_TRUE(rp.ok() && ap.ok());
    ASSERT_TRUE(agent.AddRound(rp->root(), ap->root()).ok());
    items.push_back(*rb);
    items.push_back(*ab);
  }
  EXPECT_EQ(challenger.round_count(), 3u);
  EXPECT_EQ(challenger.notice_count(), 2u);
  auto dc = challenger.Finish();
  auto da = agent.Finish();
  ASSERT_TRUE(dc.ok() && da.ok());
  EXPECT_EQ(*dc, *da);
  EXPECT_EQ(*dc, ReferenceTranscript(order, {notice0, notice1}, report, items, 3));
  // Any changed answer byte, a missing notice or rounds in another order give another digest.
  EXPECT_NE(*dc, ReferenceTranscript(order, {notice0}, report, items, 3));
  std::vector<Bytes> swapped = items;
  std::swap(swapped[0], swapped[2]);
  std::swap(swapped[1], swapped[3]);
  EXPECT_NE(*dc, ReferenceTranscript(order, {notice0, notice1}, report, swapped, 3));
  items[5][items[5].size() - 1] ^= 1;
  EXPECT_NE(*dc, ReferenceTranscript(order, {notice0, notice1}, report, items, 3));
}

TEST(ProtoTranscriptTest, CallsOutOfOrderRefused) {
  TranscriptHasher h;
  const Bytes b(8, 0);
  EXPECT_EQ(h.AddReport(AsView(b)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(h.AddNotice(0, AsView(b)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(h.Finish().status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(h.AddOrder(AsView(b)).ok());
  EXPECT_EQ(h.AddOrder(AsView(b)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(h.Finish().status().code(), StatusCode::kFailedPrecondition);  // no report yet
  ASSERT_TRUE(h.AddNotice(3, AsView(b)).ok());
  EXPECT_EQ(h.AddNotice(3, AsView(b)).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(h.AddReport(AsView(b)).ok());
  EXPECT_EQ(h.AddReport(AsView(b)).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(h.Finish().ok());
  EXPECT_EQ(h.Finish().status().code(), StatusCode::kFailedPrecondition);
}

TEST(ProtoRpcStatusTest, StatusSurvivesException) {
  Status in = PermissionDeniedError("wipeOrder signature does not verify under key 0011");
  kj::Exception e = StatusToException(in);
  EXPECT_EQ(std::string(e.getDescription().cStr()),
            "wipeproof:PERMISSION_DENIED: wipeOrder signature does not verify under key 0011");
  Status out = ExceptionToStatus(e);
  EXPECT_EQ(out.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(out.message(), in.message());
  // As a remote caller sees it.
  kj::Exception remote(kj::Exception::Type::FAILED, __FILE__, __LINE__,
                       kj::str("remote exception: ", e.getDescription()));
  EXPECT_EQ(ExceptionToStatus(remote).ToString(), in.ToString());
  kj::Exception gone(kj::Exception::Type::DISCONNECTED, __FILE__, __LINE__, kj::str("peer disconnected"));
  EXPECT_EQ(ExceptionToStatus(gone).code(), StatusCode::kUnavailable);
  kj::Exception other(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::str("boom"));
  EXPECT_EQ(ExceptionToStatus(other).ToString(), "INTERNAL: boom");
}

}  // namespace
}  // namespace wipeproof::proto
