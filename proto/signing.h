// Signed envelopes (wipe.capnp Envelope): sign a message's canonical bytes, and verify an envelope
// under a trusted key *before* anything parses its payload.
//
// Signature rule (also in wipe.capnp): Ed25519-detached over
//   "wipeproof/v1/envelope" (21 bytes) || kind (UInt16 little-endian) || payload
// so a message signed as one kind is never accepted as another.
//
// Verification order and errors (VerifyEnvelope):
//   1. decoding the envelope itself (bytes or RPC reader): INVALID_ARGUMENT if malformed, over
//      kMaxEnvelopeBytes, or the signature / key id has the wrong length;
//   2. kind != expected: INVALID_ARGUMENT ("expected a wipeOrder envelope, got fillReport");
//   3. payload over MaxPayloadBytes(kind) (proto/codec.h): INVALID_ARGUMENT;
//   4. signerKeyId != KeyIdOf(trusted key): PERMISSION_DENIED naming both key ids;
//   5. signature does not verify: PERMISSION_DENIED.
// The payload is not looked at until 5 passed; a tampered payload therefore fails as a signature
// failure, never as a parse failure. Parsing afterwards: ParseMessage<T> / VerifyAndParse<T>.
//
// Which key signs what: delegations the authority key (offline); orders the challenger key, under
// the delegation each carries (proto/delegation.h); fill reports and transcript digests the node key;
// verdicts, receipts and ledger entries the challenger key.
//
// Thread-safety: free functions; SignedEnvelope is a value.
#pragma once

#include <kj/exception.h>

#include <string>

#include "common/status.h"
#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::proto {

// Largest encoded Envelope message (bytes): the largest payload plus room for the other fields.
inline constexpr size_t kMaxEnvelopeBytes = kMaxLedgerEntryBytes + 1024;
// Domain-separation prefix of every signed byte string.
inline constexpr char kEnvelopeSigningContext[] = "wipeproof/v1/envelope";

// An envelope as plain C++ values (decoded from, or to be written into, the wire struct).
struct SignedEnvelope {
  MessageKind kind = MessageKind::UNKNOWN;
  Bytes payload;  // canonical message bytes
  Signature signature{};
  KeyId signer_key_id{};
};

// Signs `payload` (canonical bytes of a message of `kind`) with `key`.
// Errors: INVALID_ARGUMENT for kind UNKNOWN, a payload over MaxPayloadBytes(kind), or not a
// whole number of 8-byte words.
StatusOr<SignedEnvelope> SignEnvelope(MessageKind kind, ByteView payload, const KeyPair& key);

// Canonicalises `message` (a reader of T, e.g. builder.asReader()) and signs it as
// MessageTraits<T>::kKind.
template <typename Reader>
StatusOr<SignedEnvelope> SignMessage(Reader message, const KeyPair& key) {
  using T = typename Reader::Reads;
  WP_ASSIGN_OR_RETURN(Bytes payload, EncodeCanonical(message));
  return SignEnvelope(MessageTraits<T>::kKind, AsView(payload), key);
}

// Writes `envelope` into a wire struct (RPC params/results, Receipt.transcript).
void WriteEnvelope(const SignedEnvelope& envelope, Envelope::Builder out);
// Canonical bytes of the Envelope struct (for the ledger and files).
Bytes EncodeEnvelope(const SignedEnvelope& envelope);

// Step 1 above, from a wire reader (RPC) or from EncodeEnvelope bytes. Checks only shapes, not
// the signature. Errors: INVALID_ARGUMENT.
StatusOr<SignedEnvelope> DecodeEnvelope(Envelope::Reader envelope);
StatusOr<SignedEnvelope> DecodeEnvelope(ByteView envelope_bytes);

// Steps 2-5. OK means `envelope.payload` was signed as `expected` by `trusted`.
Status VerifySignature(const SignedEnvelope& envelope, MessageKind expected, const PublicKey& trusted);

// Steps 1-5; returns the verified payload bytes.
StatusOr<Bytes> VerifyEnvelope(const SignedEnvelope& envelope, MessageKind expected, const PublicKey& trusted);
StatusOr<Bytes> VerifyEnvelope(Envelope::Reader envelope, MessageKind expected, const PublicKey& trusted);
StatusOr<Bytes> VerifyEnvelope(ByteView envelope_bytes, MessageKind expected, const PublicKey& trusted);

// Verifies `envelope` as MessageTraits<T>::kKind under `trusted`, then parses and validates the
// payload (ParseMessage<T>). Errors: as VerifyEnvelope, then INVALID_ARGUMENT from parsing.
// Example: WP_ASSIGN_OR_RETURN(auto order, VerifyAndParse<WipeOrder>(params.getOrder(), authority));
template <typename T, typename EnvelopeLike>
StatusOr<Parsed<T>> VerifyAndParse(const EnvelopeLike& envelope, const PublicKey& trusted) {
  WP_ASSIGN_OR_RETURN(Bytes payload, VerifyEnvelope(envelope, MessageTraits<T>::kKind, trusted));
  return ParseMessage<T>(AsView(payload));
}

}  // namespace wipeproof::proto
