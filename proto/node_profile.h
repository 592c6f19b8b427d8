// Signed node profiles: the figures `wipeproof-prover bench --what=all` measured on a node (fill
// rates, lookup latency, sequential compression time; docs/calibration.md "The node profile"),
// signed with the node key so `wipeproof-challenger calibrate` can check that they come from the
// node its inventory names. The profile is data the node *claims*: the challenger uses it only to
// make parameters stricter (challenger/calibration/calibration_rule.h), so a signature proves origin, not truth.
//
// The document is a signed document of type kNodeProfile (proto/signed_document.h: format
// "wipeproof-node-profile-signed-v1", the profile text in field "profile", Ed25519 over
// "wipeproof/v1/node-profile" || the profile's bytes); these two functions are that helper with the
// node key's wording.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof::proto {

// The signed document for `profile_json` (any text; by convention a JSON object).
// Errors: INVALID_ARGUMENT when the profile is empty, over kMaxSignedDocumentBytes, or not UTF-8.
StatusOr<std::string> SignNodeProfile(const std::string& profile_json, const KeyPair& node_key);

// Checks, in order: the document's shape and format (INVALID_ARGUMENT), signer_key_id ==
// KeyIdOf(trusted) (PERMISSION_DENIED naming both ids, "... not by the node's key <id> (from the
// inventory)"), the signature (PERMISSION_DENIED). Returns the verified profile text, unparsed.
StatusOr<std::string> VerifyNodeProfile(const std::string& signed_document, const PublicKey& trusted);

}  // namespace wipeproof::proto
