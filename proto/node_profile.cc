#include "proto/node_profile.h"

#include "proto/signed_document.h"

namespace wipeproof::proto {

StatusOr<std::string> SignNodeProfile(const std::string& profile_json, const KeyPair& node_key) {
  return SignDocument(DocumentType::kNodeProfile, profile_json, node_key);
}

StatusOr<std::string> VerifyNodeProfile(const std::string& signed_document, const PublicKey& trusted) {
  auto verified = VerifyDocument(DocumentType::kNodeProfile, signed_document, trusted, "the node's key");
  if (!verified.ok()) {
    if (verified.status().code() == StatusCode::kPermissionDenied &&
        verified.status().message().find("signed by key") != std::string::npos) {
      return PermissionDeniedError(verified.status().message() + " (from the inventory)");
    }
    return verified.status();
  }
  return std::move(verified->text);
}

}  // namespace wipeproof::proto
