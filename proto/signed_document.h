// Signed JSON documents: one text document (a node profile, a parameter profile, an adversary-class
// file) wrapped with an Ed25519 signature over its exact bytes, so no JSON re-serialisation can
// change what was signed. Each document type has its own signing context, so a signature made for
// one type never verifies as another, even under the same key.
//
// Document (one JSON object, a file copied around like a .pub file):
//   {"format": "<the type's format string>",
//    "signer_key_id": "<16 hex digits>",       KeyIdOf(signer's public key); a hint, not trusted
//    "signature": "<128 hex digits>",          Ed25519 detached, see below
//    "<the type's field>": "<the document text>"}   signed byte for byte, as a string
// Signature rule: Ed25519-detached over
//   <the type's context> (ASCII, no terminator) || the UTF-8 bytes of the document text
//
//   type                 context                          format                                   field
//   kNodeProfile         "wipeproof/v1/node-profile"      "wipeproof-node-profile-signed-v1"       "profile"
//   kParameterProfile    "wipeproof/v1/parameter-profile" "wipeproof-parameter-profile-signed-v1"  "profile"
//   kAdversaryClasses    "wipeproof/v1/adversary-classes" "wipeproof-adversary-classes-signed-v1"  "classes"
//
// Readers verify before they parse the document text (as with envelopes, proto/signing.h), so a
// tampered document fails as a signature failure, never as a parse failure. The document digest
// (what a verdict cites, wipe.capnp ParameterProfile.documentDigest) is BLAKE2b-256 of the document
// text's bytes.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof::proto {

enum class DocumentType { kNodeProfile, kParameterProfile, kAdversaryClasses };

struct DocumentTypeInfo {
  const char* context;  // signing context, prefixed to the signed bytes
  const char* format;   // the wrapper's "format" value
  const char* field;    // the wrapper's field carrying the document text
  const char* what;     // for messages: "node profile", "parameter profile", "adversary classes"
};
const DocumentTypeInfo& InfoOf(DocumentType type);

// Largest document text accepted (bytes); our documents are a few KiB.
inline constexpr size_t kMaxSignedDocumentBytes = size_t{1} << 20;

// The signed wrapper for `text` (any text; by convention a JSON object), pretty-printed, ending in
// a newline. Errors: INVALID_ARGUMENT when the text is empty, over kMaxSignedDocumentBytes, or not
// UTF-8.
StatusOr<std::string> SignDocument(DocumentType type, const std::string& text, const KeyPair& signer);

// The parts of a signed wrapper, read without checking the signature.
struct SignedDocumentParts {
  std::string text;       // the document text, unverified
  KeyId signer_key_id{};  // as the wrapper claims
  Signature signature{};
};

// True when `file_text` is a JSON object whose "format" is `type`'s format: a signed wrapper of that
// type (well-formed or not), as opposed to a plain document. Never fails.
bool IsSignedDocument(DocumentType type, const std::string& file_text);

// Reads the wrapper's shape: a JSON object with exactly the four fields, the format of `type`, a
// 16-digit key id and a 128-digit signature, the text within the size limit.
// Errors: INVALID_ARGUMENT naming the field.
StatusOr<SignedDocumentParts> ReadSignedDocument(DocumentType type, const std::string& signed_document);

struct VerifiedDocument {
  std::string text;  // the verified document text, unparsed
  KeyId signer_key_id{};
  Digest digest{};  // BLAKE2b-256 of `text`
};

// Checks, in order: the wrapper's shape (INVALID_ARGUMENT, ReadSignedDocument), signer_key_id ==
// KeyIdOf(trusted) (PERMISSION_DENIED naming both ids and `trusted_name`), the signature
// (PERMISSION_DENIED: altered after signing, or signed by another key).
StatusOr<VerifiedDocument> VerifyDocument(DocumentType type, const std::string& signed_document,
                                          const PublicKey& trusted, const std::string& trusted_name);

}  // namespace wipeproof::proto
