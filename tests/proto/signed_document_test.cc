// Signed documents (proto/signed_document.h): each type verifies only as itself, under the key that
// signed it, byte for byte; a malformed wrapper is a shape error, never a crash.
#include "proto/signed_document.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "proto/crypto.h"
#include "proto/node_profile.h"

namespace wipeproof::proto {
namespace {

KeyPair Key(uint8_t fill) {
  std::array<uint8_t, kKeySeedBytes> seed;
  seed.fill(fill);
  return KeyPairFromSeed(seed);
}

constexpr DocumentType kTypes[] = {DocumentType::kNodeProfile, DocumentType::kParameterProfile,
                                   DocumentType::kAdversaryClasses};

TEST(SignedDocumentTest, EachTypeVerifiesAsItselfWithItsDigest) {
  const KeyPair key = Key(0x11);
  const std::string text = "{\"name\": \"p\", \"x\": 1}\n";
  for (DocumentType type : kTypes) {
    auto doc = SignDocument(type, text, key);
    ASSERT_TRUE(doc.ok()) << doc.status().ToString();
    EXPECT_TRUE(IsSignedDocument(type, *doc));
    auto verified = VerifyDocument(type, *doc, key.public_key, "the key");
    ASSERT_TRUE(verified.ok()) << verified.status().ToString();
    EXPECT_EQ(verified->text, text);
    EXPECT_EQ(verified->signer_key_id, KeyIdOf(key.public_key));
    EXPECT_EQ(verified->digest, Blake2b256(ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size())));
    const nlohmann::json wrapper = nlohmann::json::parse(*doc);
    EXPECT_EQ(wrapper.at("format"), InfoOf(type).format);
    EXPECT_EQ(wrapper.at(InfoOf(type).field), text);
    // Never as another type, even under the same key: the format differs, and so would the context.
    for (DocumentType other : kTypes) {
      if (other == type) continue;
      EXPECT_FALSE(IsSignedDocument(other, *doc));
      EXPECT_EQ(VerifyDocument(other, *doc, key.public_key, "the key").status().code(), StatusCode::kInvalidArgument);
    }
  }
}

// A wrapper relabelled as another type (format and field renamed) fails the signature: the context
// is part of the signed bytes.
TEST(SignedDocumentTest, ContextsSeparateTypes) {
  const KeyPair key = Key(0x11);
  auto doc = SignDocument(DocumentType::kNodeProfile, "{}", key);
  ASSERT_TRUE(doc.ok());
  nlohmann::json j = nlohmann::json::parse(*doc);
  j["format"] = InfoOf(DocumentType::kParameterProfile).format;
  auto relabelled = VerifyDocument(DocumentType::kParameterProfile, j.dump(), key.public_key, "the key");
  EXPECT_EQ(relabelled.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(relabelled.status().message().find("does not verify"), std::string::npos);
}

TEST(SignedDocumentTest, AlteredOrForeignDocumentsAreRefused) {
  const KeyPair key = Key(0x11), other = Key(0x22);
  const std::string text = "{\"round_deadline_us\": 7}";
  auto doc = SignDocument(DocumentType::kParameterProfile, text, key);
  ASSERT_TRUE(doc.ok());
  nlohmann::json altered = nlohmann::json::parse(*doc);
  altered["profile"] = "{\"round_deadline_us\": 6}";
  auto a = VerifyDocument(DocumentType::kParameterProfile, altered.dump(), key.public_key, "the authority key");
  EXPECT_EQ(a.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(a.status().message().find("altered after signing"), std::string::npos);
  // Signed by another key: refused on the key id, naming both.
  auto foreign =
      VerifyDocument(DocumentType::kParameterProfile, *SignDocument(DocumentType::kParameterProfile, text, other),
                     key.public_key, "the authority key");
  EXPECT_EQ(foreign.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(foreign.status().message().find(KeyIdHex(KeyIdOf(other.public_key))), std::string::npos);
  EXPECT_NE(foreign.status().message().find("the authority key " + KeyIdHex(KeyIdOf(key.public_key))),
            std::string::npos);
  // The other key's signature with this key's id claimed: the signature fails.
  nlohmann::json claimed = nlohmann::json::parse(*SignDocument(DocumentType::kParameterProfile, text, other));
  claimed["signer_key_id"] = KeyIdHex(KeyIdOf(key.public_key));
  EXPECT_EQ(VerifyDocument(DocumentType::kParameterProfile, claimed.dump(), key.public_key, "k").status().code(),
            StatusCode::kPermissionDenied);
}

TEST(SignedDocumentTest, MalformedWrappersAreShapeErrors) {
  const KeyPair key = Key(0x11);
  const std::string good = *SignDocument(DocumentType::kAdversaryClasses, "{}", key);
  nlohmann::json j = nlohmann::json::parse(good);
  std::vector<std::string> bad = {"", "[]", "{", "{\"format\": 1}", std::string(100, '[')};
  nlohmann::json extra = j;
  extra["note"] = "x";
  bad.push_back(extra.dump());
  nlohmann::json short_sig = j;
  short_sig["signature"] = "00";
  bad.push_back(short_sig.dump());
  nlohmann::json no_text = j;
  no_text.erase("classes");
  bad.push_back(no_text.dump());
  nlohmann::json empty_text = j;
  empty_text["classes"] = "";
  bad.push_back(empty_text.dump());
  for (const std::string& b : bad) {
    EXPECT_EQ(VerifyDocument(DocumentType::kAdversaryClasses, b, key.public_key, "k").status().code(),
              StatusCode::kInvalidArgument)
        << b;
  }
  EXPECT_FALSE(IsSignedDocument(DocumentType::kAdversaryClasses, "{\"classes\": []}"));  // a plain document
  EXPECT_EQ(SignDocument(DocumentType::kAdversaryClasses, "", key).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SignDocument(DocumentType::kAdversaryClasses, "\xff", key).status().code(), StatusCode::kInvalidArgument);
}

// The node-profile functions are the helper with the node key's wording.
TEST(SignedDocumentTest, NodeProfileWrappersKeepTheirFormat) {
  const KeyPair node = Key(0x33), other = Key(0x44);
  auto doc = SignNodeProfile("{\"p\": 1}", node);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(nlohmann::json::parse(*doc).at("format"), "wipeproof-node-profile-signed-v1");
  EXPECT_EQ(*VerifyNodeProfile(*doc, node.public_key), "{\"p\": 1}");
  auto foreign = VerifyNodeProfile(*doc, other.public_key);
  EXPECT_EQ(foreign.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(foreign.status().message().find("not by the node's key"), std::string::npos);
  EXPECT_NE(foreign.status().message().find("(from the inventory)"), std::string::npos);
}

}  // namespace
}  // namespace wipeproof::proto
