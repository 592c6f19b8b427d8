// Envelopes: signing, verification before parsing, and every rejection path of proto/signing.h.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>
#include <sodium.h>

#include <cstring>
#include <string>

#include "adversary/fixed_keys.h"
#include "common/hex.h"
#include "proto/label_wire.h"
#include "proto/signing.h"

namespace wipeproof::proto {
namespace {


// A well-formed order: two devices, m = 4096, c1.
void FillOrder(WipeOrder::Builder order, size_t session_id_bytes = kSessionIdBytes) {
  uint8_t session_id[32], node_key_id[kKeyIdBytes], seed[kSessionSeedBytes];
  for (size_t i = 0; i < sizeof(session_id); ++i) session_id[i] = static_cast<uint8_t>(i + 1);
  for (size_t i = 0; i < sizeof(node_key_id); ++i) node_key_id[i] = static_cast<uint8_t>(0xa0 + i);
  for (size_t i = 0; i < sizeof(seed); ++i) seed[i] = static_cast<uint8_t>(0x40 + i);
  order.setProtocolVersion(PROTOCOL_VERSION);
  order.setSessionId(proto::AsView(session_id, session_id_bytes));
  order.setIssuedAtUnixUs(1'700'000'000'000'000);
  order.setExpiresAtUnixUs(1'700'000'060'000'000);
  order.setNodeName("node-a");
  order.setNodeKeyId(proto::AsView(node_key_id, sizeof(node_key_id)));
  order.setSeed(proto::AsView(seed, sizeof(seed)));
  order.setFormat(LabelFormat::POSEDB_BLAKE3_C1);
  order.setChunkLabels(4096);
  auto devices = order.initDevices(2);
  devices[0].setSelector("host");
  devices[0].setFirstLabel(0);
  devices[0].setLabelCount(1 << 20);
  devices[0].setAllowedReserveBytes(64 << 20);
  devices[0].setLabelsPerRound(64);
  devices[0].setCapacityBytes(uint64_t{32} << 20);
  devices[0].setFillDeadlineUs(40'000'000);
  devices[1].setSelector("GPU-8c6f0d1e-0000-1111-2222-333344445555");
  devices[1].setFirstLabel(1 << 20);
  devices[1].setLabelCount(1 << 21);
  devices[1].setLabelsPerRound(192);
  devices[1].setFillDeadlineUs(30'000'000);
  order.setFillDeadlineUs(40'000'000);
  order.setChallengerKeyId(proto::AsView(node_key_id, sizeof(node_key_id)));
  order.setRoundDeadlineUs(900);
  auto profile = order.initProfile();
  profile.setName("default-uncalibrated");
  profile.setAdversaryClass("commodity-cpu");
  profile.setTMinPs(40'000);
  profile.setSafetyFactor(2.0);
  profile.setConfidence(0.99);
  order.setHostMemoryInPlan(true);
}

// threat-model: T-ORDER-FORGED
class ProtoSigningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(InitSodium().ok());
    capnp::MallocMessageBuilder message;
    FillOrder(message.initRoot<WipeOrder>());
    auto signed_or = SignMessage(message.getRoot<WipeOrder>().asReader(), authority_);
    ASSERT_TRUE(signed_or.ok()) << signed_or.status().ToString();
    envelope_ = *signed_or;
  }

  const KeyPair authority_ = adversary::FixedKey(1);
  const KeyPair other_ = adversary::FixedKey(2);
  SignedEnvelope envelope_;
};

// RFC 8032 §7.1, TEST 1: secret key (seed) 9d61b1..7f60 has public key d75a98..511a.
TEST(ProtoCryptoTest, KeyPairFromSeedMatchesRfc8032Test1) {
  std::array<uint8_t, kKeySeedBytes> seed;
  ASSERT_TRUE(HexDecodeExact("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", seed.size(),
                             seed.data(), "seed")
                  .ok());
  KeyPair pair = KeyPairFromSeed(seed);
  EXPECT_EQ(HexEncode(pair.public_key.data(), pair.public_key.size()),
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  EXPECT_EQ(pair.seed(), seed);
}

// BLAKE2b-256("abc"): RFC 7693 test vectors list BLAKE2b-512 only; this 256-bit value is the one
// libsodium and Python's hashlib.blake2b(b"abc", digest_size=32) give.
TEST(ProtoCryptoTest, Blake2b256KnownAnswer) {
  const uint8_t abc[] = {'a', 'b', 'c'};
  Digest d = Blake2b256(ByteView(abc, 3));
  EXPECT_EQ(HexEncode(d.data(), d.size()), "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319");
}

TEST(ProtoCryptoTest, KeyIdIsFirstEightBytesOfBlake2bOfPublicKey) {
  KeyPair pair = adversary::FixedKey(7);
  Digest d = Blake2b256(AsView(pair.public_key));
  KeyId id = KeyIdOf(pair.public_key);
  EXPECT_EQ(0, std::memcmp(id.data(), d.data(), kKeyIdBytes));
  EXPECT_EQ(KeyIdHex(id).size(), 16u);
  EXPECT_NE(KeyIdOf(adversary::FixedKey(8).public_key), id);
}

TEST_F(ProtoSigningTest, SignedBytesAreContextKindAndPayload) {
  // Independent check of the signature rule written in wipe.capnp.
  std::string message = "wipeproof/v1/envelope";
  message.push_back(static_cast<char>(1));  // MessageKind::WIPE_ORDER, UInt16 LE
  message.push_back(0);
  message.append(reinterpret_cast<const char*>(envelope_.payload.data()), envelope_.payload.size());
  EXPECT_EQ(0, crypto_sign_ed25519_verify_detached(envelope_.signature.data(),
                                                   reinterpret_cast<const uint8_t*>(message.data()), message.size(),
                                                   authority_.public_key.data()));
  EXPECT_EQ(envelope_.signer_key_id, KeyIdOf(authority_.public_key));
  EXPECT_EQ(envelope_.kind, MessageKind::WIPE_ORDER);
}

TEST_F(ProtoSigningTest, RoundTripThroughWireStructAndParse) {
  capnp::MallocMessageBuilder wire;  // as in RPC params
  WriteEnvelope(envelope_, wire.initRoot<Envelope>());
  auto parsed = VerifyAndParse<WipeOrder>(wire.getRoot<Envelope>().asReader(), authority_.public_key);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  WipeOrder::Reader order = parsed->root();
  EXPECT_EQ(order.getNodeName(), "node-a");
  EXPECT_EQ(order.getChunkLabels(), 4096u);
  ASSERT_EQ(order.getDevices().size(), 2u);
  EXPECT_EQ(order.getDevices()[1].getFirstLabel(), uint64_t{1} << 20);
  EXPECT_EQ(order.getDevices()[1].getLabelsPerRound(), 192u);
  EXPECT_EQ(order.getSeed()[31], 0x40 + 31);
  EXPECT_EQ(order.getProfile().getTMinPs(), 40'000u);
  EXPECT_EQ(order.getRoundDeadlineUs(), 900u);
  EXPECT_EQ(Bytes(parsed->bytes().begin(), parsed->bytes().end()), envelope_.payload);
}

TEST_F(ProtoSigningTest, RoundTripThroughEncodedBytes) {
  Bytes bytes = EncodeEnvelope(envelope_);
  EXPECT_EQ(bytes.size() % 8, 0u);
  auto payload = VerifyEnvelope(AsView(bytes), MessageKind::WIPE_ORDER, authority_.public_key);
  ASSERT_TRUE(payload.ok()) << payload.status().ToString();
  EXPECT_EQ(*payload, envelope_.payload);
  auto decoded = DecodeEnvelope(AsView(bytes));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->signature, envelope_.signature);
  EXPECT_EQ(EncodeEnvelope(*decoded), bytes);
}

TEST_F(ProtoSigningTest, FlippedPayloadByteFailsSignatureAtEveryPosition) {
  for (size_t i = 0; i < envelope_.payload.size(); i += 7) {
    SignedEnvelope tampered = envelope_;
    tampered.payload[i] ^= 0x01;
    Status s = VerifySignature(tampered, MessageKind::WIPE_ORDER, authority_.public_key);
    ASSERT_EQ(s.code(), StatusCode::kPermissionDenied) << "byte " << i << ": " << s.ToString();
    EXPECT_NE(s.message().find("signature does not verify"), std::string::npos);
  }
}

TEST_F(ProtoSigningTest, GarbagePayloadFailsAsSignatureNotAsParse) {
  SignedEnvelope tampered = envelope_;
  std::fill(tampered.payload.begin(), tampered.payload.end(), 0xff);  // would not parse either
  auto parsed = VerifyAndParse<WipeOrder>(tampered, authority_.public_key);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kPermissionDenied) << parsed.status().ToString();
  EXPECT_EQ(parsed.status().message().find("WipeOrder"), std::string::npos);  // parser never ran
}

TEST_F(ProtoSigningTest, FlippedSignatureByteRejected) {
  for (size_t i : {size_t{0}, size_t{31}, size_t{32}, size_t{63}}) {
    SignedEnvelope tampered = envelope_;
    tampered.signature[i] ^= 0x80;
    EXPECT_EQ(VerifySignature(tampered, MessageKind::WIPE_ORDER, authority_.public_key).code(),
              StatusCode::kPermissionDenied)
        << "signature byte " << i;
  }
}

TEST_F(ProtoSigningTest, WrongTrustedKeyRejectedNamingBothKeyIds) {
  Status s = VerifySignature(envelope_, MessageKind::WIPE_ORDER, other_.public_key);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("signed by key " + KeyIdHex(KeyIdOf(authority_.public_key))), std::string::npos);
  EXPECT_NE(s.message().find("expected key " + KeyIdHex(KeyIdOf(other_.public_key))), std::string::npos);
}

TEST_F(ProtoSigningTest, ForgedKeyIdStillFailsSignature) {
  SignedEnvelope forged = envelope_;
  forged.signer_key_id = KeyIdOf(other_.public_key);
  Status s = VerifySignature(forged, MessageKind::WIPE_ORDER, other_.public_key);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("signature does not verify"), std::string::npos);
}

TEST_F(ProtoSigningTest, WrongKindRejected) {
  Status s = VerifySignature(envelope_, MessageKind::FILL_REPORT, authority_.public_key);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "expected a fillReport envelope, got wipeOrder");
}

TEST_F(ProtoSigningTest, KindIsCoveredBySignature) {
  SignedEnvelope relabelled = envelope_;
  relabelled.kind = MessageKind::FILL_REPORT;
  EXPECT_EQ(VerifySignature(relabelled, MessageKind::FILL_REPORT, authority_.public_key).code(),
            StatusCode::kPermissionDenied);
}

TEST_F(ProtoSigningTest, TruncatedEnvelopeBytesRejected) {
  Bytes bytes = EncodeEnvelope(envelope_);
  for (size_t len = 0; len < bytes.size(); ++len) {
    auto payload = VerifyEnvelope(ByteView(bytes.data(), len), MessageKind::WIPE_ORDER, authority_.public_key);
    ASSERT_FALSE(payload.ok()) << "length " << len;
    EXPECT_EQ(payload.status().code(), StatusCode::kInvalidArgument) << len << ": " << payload.status().ToString();
  }
}

TEST_F(ProtoSigningTest, TruncatedPayloadRejectedAsSignatureFailure) {
  SignedEnvelope truncated = envelope_;
  truncated.payload.resize(truncated.payload.size() - 8);
  EXPECT_EQ(VerifySignature(truncated, MessageKind::WIPE_ORDER, authority_.public_key).code(),
            StatusCode::kPermissionDenied);
}

TEST_F(ProtoSigningTest, WrongSizedSignatureOrKeyIdInWireStructRejected) {
  capnp::MallocMessageBuilder wire;
  auto env = wire.initRoot<Envelope>();
  WriteEnvelope(envelope_, env);
  env.setSignature(proto::AsView(envelope_.signature.data(), 63));
  auto r1 = VerifyEnvelope(env.asReader(), MessageKind::WIPE_ORDER, authority_.public_key);
  EXPECT_EQ(r1.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r1.status().message(), "envelope signature: 63 bytes, want 64");
  WriteEnvelope(envelope_, env);
  env.setSignerKeyId(proto::AsView(envelope_.signer_key_id.data(), 4));
  auto r2 = VerifyEnvelope(env.asReader(), MessageKind::WIPE_ORDER, authority_.public_key);
  EXPECT_EQ(r2.status().code(), StatusCode::kInvalidArgument);
  WriteEnvelope(envelope_, env);
  env.setKind(MessageKind::UNKNOWN);
  auto r3 = VerifyEnvelope(env.asReader(), MessageKind::WIPE_ORDER, authority_.public_key);
  EXPECT_EQ(r3.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ProtoSigningTest, OversizedPayloadRejectedBeforeSignature) {
  Bytes big(kMaxOrderBytes + 8, 0);
  auto signed_big = SignEnvelope(MessageKind::WIPE_ORDER, AsView(big), authority_);
  EXPECT_EQ(signed_big.status().code(), StatusCode::kInvalidArgument);
  // An envelope that claims the kind but carries too much: size check comes first.
  SignedEnvelope oversized = envelope_;
  oversized.payload = big;
  Status s = VerifySignature(oversized, MessageKind::WIPE_ORDER, authority_.public_key);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("over the limit of 1048576"), std::string::npos) << s.ToString();
  // The same through the wire struct (RPC path).
  capnp::MallocMessageBuilder wire;
  auto env = wire.initRoot<Envelope>();
  WriteEnvelope(oversized, env);
  EXPECT_EQ(VerifyEnvelope(env.asReader(), MessageKind::WIPE_ORDER, authority_.public_key).status().code(),
            StatusCode::kInvalidArgument);
  // And encoded envelope bytes beyond kMaxEnvelopeBytes.
  Bytes huge(kMaxEnvelopeBytes + 8, 0);
  EXPECT_EQ(DecodeEnvelope(AsView(huge)).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ProtoSigningTest, UnsignableKindsRefused) {
  EXPECT_EQ(SignEnvelope(MessageKind::UNKNOWN, AsView(envelope_.payload), authority_).status().code(),
            StatusCode::kInvalidArgument);
  Bytes odd(13, 0);
  EXPECT_EQ(SignEnvelope(MessageKind::WIPE_ORDER, AsView(odd), authority_).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(ProtoSigningTest, SignedGarbageParsesAsInvalidArgument) {
  Bytes garbage(64, 0xff);
  auto env = SignEnvelope(MessageKind::WIPE_ORDER, AsView(garbage), authority_);
  ASSERT_TRUE(env.ok());
  ASSERT_TRUE(VerifyEnvelope(*env, MessageKind::WIPE_ORDER, authority_.public_key).ok());
  auto parsed = VerifyAndParse<WipeOrder>(*env, authority_.public_key);
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message().rfind("WipeOrder: ", 0), 0u) << parsed.status().ToString();
}

TEST_F(ProtoSigningTest, SignedMessageOfAnotherTypeRejected) {
  capnp::MallocMessageBuilder message;
  auto round = message.initRoot<ChallengeRound>();
  uint8_t sid[kSessionIdBytes] = {};
  round.setSessionId(proto::AsView(sid, sizeof(sid)));
  round.setRoundIndex(3);
  auto devices = round.initDevices(1);
  devices[0].initLabelIndices(4);
  auto bytes = EncodeCanonical(round.asReader());
  ASSERT_TRUE(bytes.ok());
  auto env = SignEnvelope(MessageKind::WIPE_ORDER, AsView(*bytes), authority_);
  ASSERT_TRUE(env.ok());
  auto parsed = VerifyAndParse<WipeOrder>(*env, authority_.public_key);
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << parsed.status().ToString();
}

TEST_F(ProtoSigningTest, SignedNonCanonicalPayloadRejected) {
  capnp::MallocMessageBuilder message;
  FillOrder(message.initRoot<WipeOrder>());
  kj::Array<capnp::word> flat = capnp::messageToFlatArray(message);  // has a segment table
  auto bytes = flat.asBytes();
  auto env = SignEnvelope(MessageKind::WIPE_ORDER, ByteView(bytes.begin(), bytes.size()), authority_);
  ASSERT_TRUE(env.ok());
  auto parsed = VerifyAndParse<WipeOrder>(*env, authority_.public_key);
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ProtoSigningTest, SignedOrderWithShortSessionIdRejectedByShapeCheck) {
  capnp::MallocMessageBuilder message;
  FillOrder(message.initRoot<WipeOrder>(), /*session_id_bytes=*/15);
  auto env = SignMessage(message.getRoot<WipeOrder>().asReader(), authority_);
  ASSERT_TRUE(env.ok());
  auto parsed = VerifyAndParse<WipeOrder>(*env, authority_.public_key);
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(), "WipeOrder: sessionId: 15 bytes, want 16");
}

}  // namespace
}  // namespace wipeproof::proto
