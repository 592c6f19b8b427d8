// Profiles and adversary classes as the authority's documents (challenger/parameters/
// authority_documents.h): only a profile signed by the authority, unchanged since, whose class is the
// authority's signed class of that name, may state a bound; everything else loads and runs, and says
// why it states none.
#include "challenger/parameters/authority_documents.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "challenger/parameters/profile_json_writer.h"
#include "proto/signed_document.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

using proto::DocumentType;

class AuthorityDocumentsTest : public ::testing::Test {
 protected:
  AuthorityDocumentsTest() {
    key_.public_key = authority_.public_key;
    key_.name = "the authority key";
    profile_ = testing::TestProfile();
    profile_.name = "p";
    profile_.calibrated = true;
    profile_.adversary = {"test-cpu", 40'000, 1.5};
  }

  std::string ProfileText(const Profile& p) const { return ProfileToJson(p).dump(2) + "\n"; }
  std::string Signed(DocumentType type, const std::string& text, const proto::KeyPair& key) const {
    auto doc = proto::SignDocument(type, text, key);
    EXPECT_TRUE(doc.ok()) << doc.status().ToString();
    return doc.ok() ? *doc : "";
  }
  AdversaryClasses Classes(const std::string& file_text) const {
    auto c = ParseAdversaryClassesDocument(file_text, "classes.json", &key_);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : AdversaryClasses{};
  }
  AdversaryClasses SignedClasses() const { return Classes(testing::SignedTestClasses(authority_)); }
  Profile Load(const std::string& file_text, const AdversaryClasses& classes, const AuthorityKey* key) const {
    auto p = ParseProfileDocument(file_text, "p.json", key, classes);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? *p : Profile{};
  }

  const proto::KeyPair authority_ = testing::TestKey(0x11);
  const proto::KeyPair other_ = testing::TestKey(0x55);
  AuthorityKey key_;
  Profile profile_;
};

TEST_F(AuthorityDocumentsTest, SignedProfileWithItsSignedClassIsEndorsedAndCitable) {
  const std::string text = ProfileText(profile_);
  const Profile p = Load(Signed(DocumentType::kParameterProfile, text, authority_), SignedClasses(), &key_);
  EXPECT_EQ(ProfileEndorsementProblem(p), "");
  ASSERT_NE(p.endorsement.signed_parameters, nullptr);
  EXPECT_TRUE(SameParameters(p, profile_));
  // The verdict's profile names the signer and the digest of the signed text.
  capnp::MallocMessageBuilder message;
  auto wire = message.initRoot<proto::ParameterProfile>();
  WriteProfile(p, wire);
  const proto::KeyId id = proto::KeyIdOf(authority_.public_key);
  ASSERT_EQ(wire.getAuthorityKeyId().size(), id.size());
  EXPECT_TRUE(std::equal(id.begin(), id.end(), wire.getAuthorityKeyId().begin()));
  const proto::Digest digest =
      proto::Blake2b256(proto::ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  ASSERT_EQ(wire.getDocumentDigest().size(), digest.size());
  EXPECT_TRUE(std::equal(digest.begin(), digest.end(), wire.getDocumentDigest().begin()));
}

// threat-model: T-PROFILE-UNSIGNED
TEST_F(AuthorityDocumentsTest, UnsignedAlteredOrForeignProfilesRunButAreNotEndorsed) {
  const AdversaryClasses classes = SignedClasses();
  // Plain text: loads, with the same parameters, but no signature.
  const Profile plain = Load(ProfileText(profile_), classes, &key_);
  EXPECT_TRUE(SameParameters(plain, profile_));
  EXPECT_EQ(ProfileEndorsementProblem(plain), "profile p is not signed by the authority (p.json carries no signature)");
  // Signed, then altered: the parameters inside load (they run), the signature does not verify.
  std::string tampered = Signed(DocumentType::kParameterProfile, ProfileText(profile_), authority_);
  const std::string from = "\\\"round_deadline_us\\\": 1000";
  ASSERT_NE(tampered.find(from), std::string::npos);
  tampered.replace(tampered.find(from), from.size(), "\\\"round_deadline_us\\\": 999");
  const Profile altered = Load(tampered, classes, &key_);
  EXPECT_EQ(altered.round_deadline_us, 999u);
  EXPECT_NE(ProfileEndorsementProblem(altered).find("signature does not verify under the authority key"),
            std::string::npos)
      << ProfileEndorsementProblem(altered);
  // Signed by another key.
  const Profile foreign = Load(Signed(DocumentType::kParameterProfile, ProfileText(profile_), other_), classes, &key_);
  EXPECT_NE(ProfileEndorsementProblem(foreign).find(
                "signed by key " + proto::KeyIdHex(proto::KeyIdOf(other_.public_key)) + ", not by the authority key"),
            std::string::npos)
      << ProfileEndorsementProblem(foreign);
  // Signed, but not checked: no key was given (plan without --authority_pub).
  const Profile unchecked =
      Load(Signed(DocumentType::kParameterProfile, ProfileText(profile_), authority_), classes, nullptr);
  EXPECT_NE(ProfileEndorsementProblem(unchecked).find("not checked"), std::string::npos);
  // None of them writes a signer into the verdict.
  for (const Profile* p : {&plain, &altered, &foreign, &unchecked}) {
    capnp::MallocMessageBuilder message;
    auto wire = message.initRoot<proto::ParameterProfile>();
    WriteProfile(*p, wire);
    EXPECT_EQ(wire.getAuthorityKeyId().size(), 0u);
    EXPECT_EQ(wire.getDocumentDigest().size(), 0u);
  }
  // A malformed wrapper is an error like any malformed file.
  nlohmann::json broken =
      nlohmann::json::parse(Signed(DocumentType::kParameterProfile, ProfileText(profile_), authority_));
  broken["signature"] = "zz";
  EXPECT_EQ(ParseProfileDocument(broken.dump(), "p.json", &key_, classes).status().code(),
            StatusCode::kInvalidArgument);
}

// threat-model: T-PROFILE-UNSIGNED
TEST_F(AuthorityDocumentsTest, AProfileChangedAfterLoadingLosesTheEndorsement) {
  Profile p = Load(Signed(DocumentType::kParameterProfile, ProfileText(profile_), authority_), SignedClasses(), &key_);
  ASSERT_EQ(ProfileEndorsementProblem(p), "");
  p.round_deadline_us += 1;
  EXPECT_NE(ProfileEndorsementProblem(p).find("differs from the document the authority signed"), std::string::npos);
  capnp::MallocMessageBuilder message;
  auto wire = message.initRoot<proto::ParameterProfile>();
  WriteProfile(p, wire);
  EXPECT_EQ(wire.getAuthorityKeyId().size(), 0u);
}

// threat-model: T-CLASS-FOREIGN
TEST_F(AuthorityDocumentsTest, TheClassMustBeTheAuthoritysSignedClass) {
  const std::string signed_profile = Signed(DocumentType::kParameterProfile, ProfileText(profile_), authority_);
  // Built-in classes: never signed.
  EXPECT_EQ(ProfileEndorsementProblem(Load(signed_profile, DefaultAdversaryClasses(), &key_)),
            "class test-cpu is not the authority's (the built-in adversary classes are not signed by the authority)");
  // A plain classes file.
  const std::string classes_text = R"({"classes": [{"name": "test-cpu", "t_min_ps": 40000, "safety_factor": 1.5}]})";
  EXPECT_NE(ProfileEndorsementProblem(Load(signed_profile, Classes(classes_text), &key_)).find("carries no signature"),
            std::string::npos);
  // Classes signed by another key.
  EXPECT_NE(ProfileEndorsementProblem(
                Load(signed_profile, Classes(Signed(DocumentType::kAdversaryClasses, classes_text, other_)), &key_))
                .find("not by the authority key"),
            std::string::npos);
  // The signed classes give the class a larger t_min (the profile claims a slower adversary than the
  // authority's), or another safety factor, or do not have it.
  const std::string slower = R"({"classes": [{"name": "test-cpu", "t_min_ps": 30000, "safety_factor": 1.5}]})";
  EXPECT_EQ(ProfileEndorsementProblem(
                Load(signed_profile, Classes(Signed(DocumentType::kAdversaryClasses, slower, authority_)), &key_)),
            "class test-cpu of profile p (t_min 40000 ps, safety 1.5) differs from the authority's signed class "
            "test-cpu (t_min 30000 ps, safety 1.5)");
  const std::string safer = R"({"classes": [{"name": "test-cpu", "t_min_ps": 40000, "safety_factor": 2}]})";
  EXPECT_NE(ProfileEndorsementProblem(
                Load(signed_profile, Classes(Signed(DocumentType::kAdversaryClasses, safer, authority_)), &key_))
                .find("differs from the authority's signed class"),
            std::string::npos);
  const std::string missing = R"({"classes": [{"name": "fpga-asic", "t_min_ps": 5000}]})";
  EXPECT_NE(ProfileEndorsementProblem(
                Load(signed_profile, Classes(Signed(DocumentType::kAdversaryClasses, missing, authority_)), &key_))
                .find("adversary class 'test-cpu' is not in classes.json"),
            std::string::npos);
}

// threat-model: T-FAST-CORE
TEST_F(AuthorityDocumentsTest, BuiltInDefaultsAreNeverEndorsed) {
  auto p = LoadProfileDocument("", &key_, SignedClasses());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, kDefaultProfileName);
  EXPECT_NE(ProfileEndorsementProblem(*p).find("the built-in profile is not signed"), std::string::npos);
  auto classes = LoadAdversaryClassesDocument("", &key_);
  ASSERT_TRUE(classes.ok());
  EXPECT_FALSE(classes->signed_by_authority);
  EXPECT_EQ(classes->Find("commodity-cpu")->t_min_ps, 25'000u);  // at or below the measured 28-30 ns
}

}  // namespace
}  // namespace wipeproof
