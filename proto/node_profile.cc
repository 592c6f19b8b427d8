#include "proto/node_profile.h"

#include <sodium.h>

#include <nlohmann/json.hpp>

#include "common/hex.h"
#include "common/json_nesting.h"

namespace wipeproof::proto {

namespace {

constexpr size_t kContextBytes = sizeof(kNodeProfileSigningContext) - 1;  // without the NUL
static_assert(kContextBytes == 25);

Bytes SignedBytes(const std::string& profile) {
  Bytes message(kContextBytes + profile.size());
  std::copy(kNodeProfileSigningContext, kNodeProfileSigningContext + kContextBytes, message.begin());
  std::copy(profile.begin(), profile.end(), message.begin() + kContextBytes);
  return message;
}

Status CheckProfileSize(const std::string& profile) {
  if (profile.empty()) return InvalidArgumentError("node profile: empty");
  if (profile.size() > kMaxNodeProfileBytes) {
    return InvalidArgumentError("node profile: " + std::to_string(profile.size()) + " bytes, over the limit of " +
                                std::to_string(kMaxNodeProfileBytes));
  }
  return Status::Ok();
}

// The string field `key` of `doc`. Errors: INVALID_ARGUMENT naming it.
StatusOr<std::string> StringField(const nlohmann::json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end()) return InvalidArgumentError(std::string("signed node profile: ") + key + ": missing");
  if (!it->is_string()) return InvalidArgumentError(std::string("signed node profile: ") + key + ": want a string");
  return it->get<std::string>();
}

}  // namespace

StatusOr<std::string> SignNodeProfile(const std::string& profile_json, const KeyPair& node_key) {
  WP_RETURN_IF_ERROR(InitSodium());
  WP_RETURN_IF_ERROR(CheckProfileSize(profile_json));
  const Bytes message = SignedBytes(profile_json);
  Signature signature{};
  crypto_sign_ed25519_detached(signature.data(), nullptr, message.data(), message.size(), node_key.secret_key.data());
  nlohmann::ordered_json doc;
  doc["format"] = kSignedNodeProfileFormat;
  doc["signer_key_id"] = KeyIdHex(KeyIdOf(node_key.public_key));
  doc["signature"] = HexEncode(signature.data(), signature.size());
  doc["profile"] = profile_json;
  try {
    return doc.dump(2) + "\n";
  } catch (const nlohmann::json::type_error& e) {
    // dump() refuses a string that is not UTF-8 (found by tests/fuzz/fuzz_node_profile).
    return InvalidArgumentError(std::string("node profile: not valid UTF-8: ") + e.what());
  }
}

StatusOr<std::string> VerifyNodeProfile(const std::string& signed_document, const PublicKey& trusted) {
  WP_RETURN_IF_ERROR(InitSodium());
  if (signed_document.size() > 2 * kMaxNodeProfileBytes + 4096) {
    return InvalidArgumentError("signed node profile: too large");
  }
  WP_RETURN_IF_ERROR(CheckJsonNesting(signed_document, "signed node profile"));
  nlohmann::json doc = nlohmann::json::parse(signed_document, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return InvalidArgumentError("signed node profile: not valid JSON");
  if (!doc.is_object()) return InvalidArgumentError("signed node profile: want a JSON object");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() != "format" && it.key() != "signer_key_id" && it.key() != "signature" && it.key() != "profile") {
      return InvalidArgumentError("signed node profile: unknown field '" + it.key() + "'");
    }
  }
  WP_ASSIGN_OR_RETURN(std::string format, StringField(doc, "format"));
  if (format != kSignedNodeProfileFormat) {
    return InvalidArgumentError("signed node profile: format '" + format + "', want '" + kSignedNodeProfileFormat +
                                "'");
  }
  WP_ASSIGN_OR_RETURN(std::string key_id_hex, StringField(doc, "signer_key_id"));
  WP_ASSIGN_OR_RETURN(std::string signature_hex, StringField(doc, "signature"));
  WP_ASSIGN_OR_RETURN(std::string profile, StringField(doc, "profile"));
  KeyId key_id{};
  WP_RETURN_IF_ERROR(HexDecodeExact(key_id_hex, key_id.size(), key_id.data(), "signed node profile: signer_key_id"));
  Signature signature{};
  WP_RETURN_IF_ERROR(
      HexDecodeExact(signature_hex, signature.size(), signature.data(), "signed node profile: signature"));
  WP_RETURN_IF_ERROR(CheckProfileSize(profile));
  const KeyId want = KeyIdOf(trusted);
  if (key_id != want) {
    return PermissionDeniedError("signed node profile: signed by key " + KeyIdHex(key_id) + ", not by the node's key " +
                                 KeyIdHex(want) + " (from the inventory)");
  }
  const Bytes message = SignedBytes(profile);
  if (crypto_sign_ed25519_verify_detached(signature.data(), message.data(), message.size(), trusted.data()) != 0) {
    return PermissionDeniedError("signed node profile: signature does not verify under node key " + KeyIdHex(want) +
                                 " (the profile was altered after signing, or signed by another key)");
  }
  return profile;
}

}  // namespace wipeproof::proto
