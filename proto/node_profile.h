// Signed node profiles: the figures `wipeproof-prover bench --what=all` measured on a node (fill
// rates, lookup latency, sequential compression time; docs/calibration.md "The node profile"),
// signed with the node key so `wipeproof-challenger calibrate` can check that they come from the
// node its inventory names. The profile is data the node *claims*: the challenger uses it only to
// make parameters stricter (challenger/calibration/calibration_rule.h), so a signature proves origin, not truth.
//
// Document (one JSON object, a file the operator copies to the challenger like a .pub file):
//   {"format": "wipeproof-node-profile-signed-v1",
//    "signer_key_id": "<16 hex digits>",       KeyIdOf(node public key); a hint, not trusted
//    "signature": "<128 hex digits>",          Ed25519 detached, see below
//    "profile": "<the profile JSON text>"}     signed byte for byte, as a string
// Signature rule: Ed25519-detached over
//   "wipeproof/v1/node-profile" (25 ASCII bytes) || the UTF-8 bytes of "profile"
// The profile stays a string so no JSON re-serialisation can change the signed bytes; readers
// verify before they parse it (as with envelopes, proto/signing.h), so a tampered profile fails
// as a signature failure, never as a parse failure.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof::proto {

inline constexpr char kNodeProfileSigningContext[] = "wipeproof/v1/node-profile";
inline constexpr char kSignedNodeProfileFormat[] = "wipeproof-node-profile-signed-v1";
// Largest profile text accepted (bytes); a profile is a few KiB.
inline constexpr size_t kMaxNodeProfileBytes = size_t{1} << 20;

// The signed document for `profile_json` (any text; by convention a JSON object).
// Errors: INVALID_ARGUMENT when the profile is empty, over kMaxNodeProfileBytes, or not UTF-8.
StatusOr<std::string> SignNodeProfile(const std::string& profile_json, const KeyPair& node_key);

// Checks, in order: the document's shape and format (INVALID_ARGUMENT), signer_key_id ==
// KeyIdOf(trusted) (PERMISSION_DENIED naming both ids), the signature (PERMISSION_DENIED).
// Returns the verified profile text, unparsed.
StatusOr<std::string> VerifyNodeProfile(const std::string& signed_document, const PublicKey& trusted);

}  // namespace wipeproof::proto
