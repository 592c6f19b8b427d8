// The authority's delegation (proto/delegation.h) on hand-built orders: an order stands under it
// only when the delegation verifies under the authority key, names the challenger key, is in force
// at the order's issue time and at `now`, and lists the order's profile field for field (or allows
// an unsigned one); each refusal names what failed.
// threat-model: T-DELEGATION
#include "proto/delegation.h"

#include <capnp/message.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace wipeproof::proto {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kHourUs = int64_t{3600} * 1'000'000;
constexpr int64_t kIssued = 1'800'000'000'000'000;  // the order's issue time

KeyPair Key(uint8_t byte) {
  std::array<uint8_t, kKeySeedBytes> seed{};
  seed.fill(byte);
  return KeyPairFromSeed(seed);
}

// The signed profile the authority delegates: fpga-asic, t_min 5000 ps, safety 2.
void WriteSignedProfile(ParameterProfile::Builder p, const KeyPair& authority) {
  p.setName("rack-fpga-2^14");
  p.setCalibrated(true);
  p.setAdversaryClass("fpga-asic");
  p.setTMinPs(5000);
  p.setSafetyFactor(2);
  p.setConfidence(0.99);
  const KeyId id = KeyIdOf(authority.public_key);
  p.setAuthorityKeyId(AsView(id));
  Digest digest{};
  digest.fill(0xd0);
  p.setDocumentDigest(AsView(digest));
  p.setChunkLabels(16384);
  p.setFormat(LabelFormat::POSEDB_BLAKE3_C1);
  p.setRoundDeadlineUs(500);
}

struct DelegationSpec {
  KeyPair signer = Key(0x11);
  PublicKey challenger = Key(0x22).public_key;
  int64_t not_before = kIssued - kHourUs;
  int64_t not_after = kIssued + kHourUs;
  bool list_profile = true;
  bool allow_unsigned = false;
};

Bytes MakeDelegation(const DelegationSpec& spec) {
  capnp::MallocMessageBuilder message;
  auto d = message.initRoot<Delegation>();
  d.setChallengerPublicKey(AsView(spec.challenger));
  d.setNotBeforeUnixUs(spec.not_before);
  d.setNotAfterUnixUs(spec.not_after);
  d.setName("challenger-1 test");
  d.setAllowUnsignedProfiles(spec.allow_unsigned);
  if (spec.list_profile) WriteSignedProfile(d.initProfiles(1)[0], Key(0x11));
  auto envelope = SignMessage(d.asReader(), spec.signer);
  EXPECT_TRUE(envelope.ok()) << envelope.status().ToString();
  return EncodeEnvelope(*envelope);
}

class DelegationTest : public ::testing::Test {
 protected:
  KeyPair authority_ = Key(0x11);
  KeyPair challenger_ = Key(0x22);
  std::unique_ptr<capnp::MallocMessageBuilder> message_ = std::make_unique<capnp::MallocMessageBuilder>();
  WipeOrder::Builder order_ = message_->initRoot<WipeOrder>();

  void SetUp() override {
    order_.setIssuedAtUnixUs(kIssued);
    order_.setChunkLabels(16384);
    order_.setFormat(LabelFormat::POSEDB_BLAKE3_C1);
    order_.setRoundDeadlineUs(500);
    WriteSignedProfile(order_.initProfile(), authority_);
  }
  Status Check(const Bytes& delegation, int64_t now = kIssued, int64_t skew = 0) {
    order_.setDelegation(AsView(delegation));
    return CheckOrderDelegation(order_.asReader(), authority_.public_key, challenger_.public_key, now, skew).status();
  }
};

TEST_F(DelegationTest, AnOrderUnderItsDelegationStands) {
  EXPECT_TRUE(Check(MakeDelegation({})).ok());
  auto parsed = CheckOrderDelegation(order_.asReader(), authority_.public_key, challenger_.public_key, kIssued, 0);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(std::string(parsed->root().getName().cStr()), "challenger-1 test");
  EXPECT_THAT(DescribeDelegation(parsed->root()),
              HasSubstr("to challenger key " + KeyIdHex(KeyIdOf(challenger_.public_key))));
}

TEST_F(DelegationTest, AnOrderWithoutADelegationIsRefused) {
  const Status s = Check(Bytes{});
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("carries no delegation"));
}

TEST_F(DelegationTest, ADelegationSignedByAnotherKeyIsRefused) {
  DelegationSpec spec;
  spec.signer = Key(0x33);  // the challenger host's own made-up "authority"
  const Status s = Check(MakeDelegation(spec));
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("does not verify under the authority key " + KeyIdHex(KeyIdOf(authority_.public_key))));
}

TEST_F(DelegationTest, AnAlteredDelegationIsRefused) {
  Bytes bytes = MakeDelegation({});
  bytes[bytes.size() / 2] ^= 0x01;
  const Status s = Check(bytes);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
}

TEST_F(DelegationTest, ADelegationToAnotherChallengerIsRefused) {
  DelegationSpec spec;
  spec.challenger = Key(0x44).public_key;
  const Status s = Check(MakeDelegation(spec));
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("is not for the challenger key " + KeyIdHex(KeyIdOf(challenger_.public_key))));
}

TEST_F(DelegationTest, OnlyInForceDuringItsPeriod) {
  DelegationSpec expired;
  expired.not_before = kIssued - 2 * kHourUs;
  expired.not_after = kIssued;  // ends the moment the order is issued: not covered
  EXPECT_THAT(Check(MakeDelegation(expired)).message(), HasSubstr("the order was issued"));
  DelegationSpec early;
  early.not_before = kIssued + 1;
  EXPECT_EQ(Check(MakeDelegation(early)).code(), StatusCode::kPermissionDenied);
  // Issued inside the period, but received after it ended (the agent's clock): refused.
  const Status late = Check(MakeDelegation({}), kIssued + 2 * kHourUs);
  EXPECT_EQ(late.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(late.message(), HasSubstr("it is now"));
  // The agent's clock skew is allowed for its own clock, at both ends...
  EXPECT_TRUE(Check(MakeDelegation({}), kIssued + kHourUs + 10, 60'000'000).ok());
  // ...never for the order's issue time, which the audits check exactly.
  DelegationSpec ended;
  ended.not_after = kIssued - 1;
  ended.not_before = kIssued - kHourUs;
  EXPECT_THAT(Check(MakeDelegation(ended), kIssued - 2, 60'000'000).message(), HasSubstr("the order was issued"));
}

// The deadline rule's inputs outside the profile struct (m, format, round deadline) must be the
// listed profile's: a rogue challenger widening the round deadline through a larger m is refused.
TEST_F(DelegationTest, TheOrdersMFormatAndDeadlineAreTheDelegatedProfiles) {
  EXPECT_TRUE(Check(MakeDelegation({})).ok());
  for (const std::function<void()>& change : std::vector<std::function<void()>>{
           [&] { order_.setChunkLabels(262144); },
           [&] { order_.setFormat(LabelFormat::POSEDB_BLAKE3_N192); },
           [&] { order_.setRoundDeadlineUs(7800); }}) {
    change();
    const Status s = Check(MakeDelegation({}));
    EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
    EXPECT_THAT(s.message(), HasSubstr("are not its delegated profile 'rack-fpga-2^14'"));
    order_.setChunkLabels(16384);
    order_.setFormat(LabelFormat::POSEDB_BLAKE3_C1);
    order_.setRoundDeadlineUs(500);
  }
}

TEST_F(DelegationTest, AProfileTheAuthorityDidNotListIsRefused) {
  // The challenger keeps the signed profile's name and digest but orders under a faster class.
  order_.getProfile().setTMinPs(1'000'000);
  const Status s = Check(MakeDelegation({}));
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("is not one the delegation"));
  EXPECT_THAT(s.message(), HasSubstr("tMinPs 1000000"));
  order_.getProfile().setTMinPs(5000);
  order_.getProfile().setSafetyFactor(0.5);
  EXPECT_EQ(Check(MakeDelegation({})).code(), StatusCode::kPermissionDenied);
}

TEST_F(DelegationTest, UnsignedProfilesOnlyWhereTheDelegationAllowsThem) {
  WipeOrder::Builder order = order_;
  auto profile = order.initProfile();  // names no signature: a made-up class
  profile.setName("made-up");
  profile.setAdversaryClass("made-up");
  profile.setTMinPs(1'000'000);
  profile.setSafetyFactor(1);
  const Status refused = Check(MakeDelegation({}));
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(), HasSubstr("is not signed by the authority"));
  DelegationSpec lab;
  lab.allow_unsigned = true;
  EXPECT_TRUE(Check(MakeDelegation(lab)).ok());
  // A profile naming a signature is never let through as "unsigned".
  profile.setAuthorityKeyId(AsView(KeyIdOf(authority_.public_key)));
  EXPECT_EQ(Check(MakeDelegation(lab)).code(), StatusCode::kPermissionDenied);
}

TEST_F(DelegationTest, ADelegationThatDelegatesNothingIsMalformed) {
  DelegationSpec nothing;
  nothing.list_profile = false;
  const Status s = Check(MakeDelegation(nothing));
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("delegates nothing"));
}

}  // namespace
}  // namespace wipeproof::proto
