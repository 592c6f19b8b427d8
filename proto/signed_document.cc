#include "proto/signed_document.h"

#include <sodium.h>

#include <nlohmann/json.hpp>

#include "common/hex.h"
#include "common/json_nesting.h"

namespace wipeproof::proto {

namespace {

constexpr DocumentTypeInfo kNodeProfileInfo{"wipeproof/v1/node-profile", "wipeproof-node-profile-signed-v1", "profile",
                                            "node profile"};
constexpr DocumentTypeInfo kParameterProfileInfo{
    "wipeproof/v1/parameter-profile", "wipeproof-parameter-profile-signed-v1", "profile", "parameter profile"};
constexpr DocumentTypeInfo kAdversaryClassesInfo{
    "wipeproof/v1/adversary-classes", "wipeproof-adversary-classes-signed-v1", "classes", "adversary classes"};

std::string Prefix(const DocumentTypeInfo& info) { return std::string("signed ") + info.what + ": "; }

Bytes SignedBytes(const DocumentTypeInfo& info, const std::string& text) {
  const std::string context = info.context;
  Bytes message(context.size() + text.size());
  std::copy(context.begin(), context.end(), message.begin());
  std::copy(text.begin(), text.end(), message.begin() + static_cast<ptrdiff_t>(context.size()));
  return message;
}

Status CheckTextSize(const DocumentTypeInfo& info, const std::string& text) {
  if (text.empty()) return InvalidArgumentError(std::string(info.what) + ": empty");
  if (text.size() > kMaxSignedDocumentBytes) {
    return InvalidArgumentError(std::string(info.what) + ": " + std::to_string(text.size()) +
                                " bytes, over the limit of " + std::to_string(kMaxSignedDocumentBytes));
  }
  return Status::Ok();
}

// The string field `key` of `doc`. Errors: INVALID_ARGUMENT naming it.
StatusOr<std::string> StringField(const DocumentTypeInfo& info, const nlohmann::json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end()) return InvalidArgumentError(Prefix(info) + key + ": missing");
  if (!it->is_string()) return InvalidArgumentError(Prefix(info) + key + ": want a string");
  return it->get<std::string>();
}

// The wrapper parsed as JSON, bounded in size and nesting. Errors: INVALID_ARGUMENT.
StatusOr<nlohmann::json> ParseWrapper(const DocumentTypeInfo& info, const std::string& signed_document) {
  if (signed_document.size() > 2 * kMaxSignedDocumentBytes + 4096) {
    return InvalidArgumentError(Prefix(info) + "too large");
  }
  WP_RETURN_IF_ERROR(CheckJsonNesting(signed_document, "signed " + std::string(info.what)));
  nlohmann::json doc = nlohmann::json::parse(signed_document, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return InvalidArgumentError(Prefix(info) + "not valid JSON");
  if (!doc.is_object()) return InvalidArgumentError(Prefix(info) + "want a JSON object");
  return doc;
}

}  // namespace

const DocumentTypeInfo& InfoOf(DocumentType type) {
  switch (type) {
    case DocumentType::kNodeProfile:
      return kNodeProfileInfo;
    case DocumentType::kParameterProfile:
      return kParameterProfileInfo;
    case DocumentType::kAdversaryClasses:
      return kAdversaryClassesInfo;
  }
  return kNodeProfileInfo;  // unreachable: every enumerator is handled above
}

StatusOr<std::string> SignDocument(DocumentType type, const std::string& text, const KeyPair& signer) {
  const DocumentTypeInfo& info = InfoOf(type);
  WP_RETURN_IF_ERROR(InitSodium());
  WP_RETURN_IF_ERROR(CheckTextSize(info, text));
  const Bytes message = SignedBytes(info, text);
  Signature signature{};
  crypto_sign_ed25519_detached(signature.data(), nullptr, message.data(), message.size(), signer.secret_key.data());
  nlohmann::ordered_json doc;
  doc["format"] = info.format;
  doc["signer_key_id"] = KeyIdHex(KeyIdOf(signer.public_key));
  doc["signature"] = HexEncode(signature.data(), signature.size());
  doc[info.field] = text;
  try {
    return doc.dump(2) + "\n";
  } catch (const nlohmann::json::type_error& e) {
    // dump() refuses a string that is not UTF-8 (found by tests/fuzz/fuzz_node_profile).
    return InvalidArgumentError(std::string(info.what) + ": not valid UTF-8: " + e.what());
  }
}

bool IsSignedDocument(DocumentType type, const std::string& file_text) {
  auto doc = ParseWrapper(InfoOf(type), file_text);
  if (!doc.ok()) return false;
  auto it = doc->find("format");
  return it != doc->end() && it->is_string() && it->get<std::string>() == InfoOf(type).format;
}

StatusOr<SignedDocumentParts> ReadSignedDocument(DocumentType type, const std::string& signed_document) {
  const DocumentTypeInfo& info = InfoOf(type);
  WP_ASSIGN_OR_RETURN(nlohmann::json doc, ParseWrapper(info, signed_document));
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() != "format" && it.key() != "signer_key_id" && it.key() != "signature" && it.key() != info.field) {
      return InvalidArgumentError(Prefix(info) + "unknown field '" + it.key() + "'");
    }
  }
  WP_ASSIGN_OR_RETURN(std::string format, StringField(info, doc, "format"));
  if (format != info.format) {
    return InvalidArgumentError(Prefix(info) + "format '" + format + "', want '" + info.format + "'");
  }
  WP_ASSIGN_OR_RETURN(std::string key_id_hex, StringField(info, doc, "signer_key_id"));
  WP_ASSIGN_OR_RETURN(std::string signature_hex, StringField(info, doc, "signature"));
  SignedDocumentParts parts;
  WP_ASSIGN_OR_RETURN(parts.text, StringField(info, doc, info.field));
  const std::string key_id_what = Prefix(info) + "signer_key_id";
  const std::string signature_what = Prefix(info) + "signature";
  WP_RETURN_IF_ERROR(
      HexDecodeExact(key_id_hex, parts.signer_key_id.size(), parts.signer_key_id.data(), key_id_what.c_str()));
  WP_RETURN_IF_ERROR(
      HexDecodeExact(signature_hex, parts.signature.size(), parts.signature.data(), signature_what.c_str()));
  WP_RETURN_IF_ERROR(CheckTextSize(info, parts.text));
  return parts;
}

StatusOr<VerifiedDocument> VerifyDocument(DocumentType type, const std::string& signed_document,
                                          const PublicKey& trusted, const std::string& trusted_name) {
  const DocumentTypeInfo& info = InfoOf(type);
  WP_RETURN_IF_ERROR(InitSodium());
  WP_ASSIGN_OR_RETURN(SignedDocumentParts parts, ReadSignedDocument(type, signed_document));
  const KeyId want = KeyIdOf(trusted);
  if (parts.signer_key_id != want) {
    return PermissionDeniedError(Prefix(info) + "signed by key " + KeyIdHex(parts.signer_key_id) + ", not by " +
                                 trusted_name + " " + KeyIdHex(want));
  }
  const Bytes message = SignedBytes(info, parts.text);
  if (crypto_sign_ed25519_verify_detached(parts.signature.data(), message.data(), message.size(), trusted.data()) !=
      0) {
    return PermissionDeniedError(Prefix(info) + "signature does not verify under " + trusted_name + " " +
                                 KeyIdHex(want) +
                                 " (the document was altered after signing, or signed by another key)");
  }
  VerifiedDocument out;
  out.digest = Blake2b256(ByteView(reinterpret_cast<const uint8_t*>(parts.text.data()), parts.text.size()));
  out.text = std::move(parts.text);
  out.signer_key_id = want;
  return out;
}

}  // namespace wipeproof::proto
