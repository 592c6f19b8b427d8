#include "proto/signing.h"

#include <sodium.h>

#include <cstring>

#include "common/hex.h"

namespace wipeproof::proto {

namespace {

constexpr size_t kContextBytes = sizeof(kEnvelopeSigningContext) - 1;  // without the NUL
static_assert(kContextBytes == 21);

// context || kind (UInt16 LE) || payload: the byte string the signature covers.
Bytes SignedBytes(MessageKind kind, ByteView payload) {
  Bytes message(kContextBytes + 2 + payload.size());
  std::memcpy(message.data(), kEnvelopeSigningContext, kContextBytes);
  const auto k = static_cast<uint16_t>(kind);
  message[kContextBytes] = static_cast<uint8_t>(k & 0xff);
  message[kContextBytes + 1] = static_cast<uint8_t>(k >> 8);
  if (payload.size() > 0) std::memcpy(message.data() + kContextBytes + 2, payload.begin(), payload.size());
  return message;
}

Status CheckPayloadSize(MessageKind kind, size_t size) {
  const size_t max = MaxPayloadBytes(kind);
  if (max == 0) return InvalidArgumentError("envelope kind " + MessageKindName(kind) + " is not signable");
  if (size > max) {
    return InvalidArgumentError(MessageKindName(kind) + " payload of " + std::to_string(size) +
                                " bytes is over the limit of " + std::to_string(max));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<SignedEnvelope> SignEnvelope(MessageKind kind, ByteView payload, const KeyPair& key) {
  WP_RETURN_IF_ERROR(CheckPayloadSize(kind, payload.size()));
  if (payload.size() == 0 || payload.size() % sizeof(capnp::word) != 0) {
    return InvalidArgumentError("payload is not canonical message bytes (" + std::to_string(payload.size()) +
                                " bytes)");
  }
  WP_RETURN_IF_ERROR(InitSodium());
  SignedEnvelope out;
  out.kind = kind;
  out.payload.assign(payload.begin(), payload.end());
  const Bytes message = SignedBytes(kind, payload);
  crypto_sign_ed25519_detached(out.signature.data(), nullptr, message.data(), message.size(), key.secret_key.data());
  out.signer_key_id = KeyIdOf(key.public_key);
  return out;
}

void WriteEnvelope(const SignedEnvelope& envelope, Envelope::Builder out) {
  out.setKind(envelope.kind);
  out.setPayload(capnp::Data::Reader(envelope.payload.data(), envelope.payload.size()));
  out.setSignature(capnp::Data::Reader(envelope.signature.data(), envelope.signature.size()));
  out.setSignerKeyId(capnp::Data::Reader(envelope.signer_key_id.data(), envelope.signer_key_id.size()));
}

Bytes EncodeEnvelope(const SignedEnvelope& envelope) {
  capnp::MallocMessageBuilder message;
  WriteEnvelope(envelope, message.initRoot<Envelope>());
  kj::Array<capnp::word> words = capnp::canonicalize(message.getRoot<Envelope>().asReader());
  kj::ArrayPtr<const kj::byte> bytes = words.asBytes();
  return Bytes(bytes.begin(), bytes.end());
}

StatusOr<SignedEnvelope> DecodeEnvelope(Envelope::Reader envelope) {
  SignedEnvelope out;
  try {
    out.kind = envelope.getKind();
    capnp::Data::Reader payload = envelope.getPayload();
    capnp::Data::Reader signature = envelope.getSignature();
    capnp::Data::Reader key_id = envelope.getSignerKeyId();
    if (MaxPayloadBytes(out.kind) == 0) {
      return InvalidArgumentError("envelope kind " + MessageKindName(out.kind) + " is not valid");
    }
    WP_RETURN_IF_ERROR(CheckPayloadSize(out.kind, payload.size()));
    if (signature.size() != kSignatureBytes) {
      return InvalidArgumentError("envelope signature: " + std::to_string(signature.size()) + " bytes, want " +
                                  std::to_string(kSignatureBytes));
    }
    if (key_id.size() != kKeyIdBytes) {
      return InvalidArgumentError("envelope signerKeyId: " + std::to_string(key_id.size()) + " bytes, want " +
                                  std::to_string(kKeyIdBytes));
    }
    out.payload.assign(payload.begin(), payload.end());
    std::memcpy(out.signature.data(), signature.begin(), kSignatureBytes);
    std::memcpy(out.signer_key_id.data(), key_id.begin(), kKeyIdBytes);
  } catch (const kj::Exception& e) {
    return InvalidArgumentError(std::string("malformed envelope: ") + e.getDescription().cStr());
  }
  return out;
}

StatusOr<SignedEnvelope> DecodeEnvelope(ByteView envelope_bytes) {
  if (envelope_bytes.size() > kMaxEnvelopeBytes) {
    return InvalidArgumentError("envelope of " + std::to_string(envelope_bytes.size()) +
                                " bytes is over the limit of " + std::to_string(kMaxEnvelopeBytes));
  }
  if (envelope_bytes.size() == 0 || envelope_bytes.size() % sizeof(capnp::word) != 0) {
    return InvalidArgumentError("envelope of " + std::to_string(envelope_bytes.size()) +
                                " bytes is not a positive whole number of 8-byte words");
  }
  const size_t words = envelope_bytes.size() / sizeof(capnp::word);
  kj::Array<capnp::word> aligned = kj::heapArray<capnp::word>(words);
  std::memcpy(aligned.begin(), envelope_bytes.begin(), envelope_bytes.size());
  kj::ArrayPtr<const capnp::word> segments[1] = {aligned.asPtr()};
  capnp::ReaderOptions options;
  options.traversalLimitInWords = 2 * words + 64;  // an envelope is read once; see codec.h
  options.nestingLimit = kNestingLimit;
  try {
    capnp::SegmentArrayMessageReader reader(kj::arrayPtr(segments, 1), options);
    if (!reader.isCanonical()) return InvalidArgumentError("envelope is not in canonical form");
    return DecodeEnvelope(reader.getRoot<Envelope>());
  } catch (const kj::Exception& e) {
    return InvalidArgumentError(std::string("malformed envelope: ") + e.getDescription().cStr());
  }
}

Status VerifySignature(const SignedEnvelope& envelope, MessageKind expected, const PublicKey& trusted) {
  if (envelope.kind != expected) {
    return InvalidArgumentError("expected a " + MessageKindName(expected) + " envelope, got " +
                                MessageKindName(envelope.kind));
  }
  WP_RETURN_IF_ERROR(CheckPayloadSize(envelope.kind, envelope.payload.size()));
  const KeyId trusted_id = KeyIdOf(trusted);
  if (envelope.signer_key_id != trusted_id) {
    return PermissionDeniedError(MessageKindName(expected) + " signed by key " + KeyIdHex(envelope.signer_key_id) +
                                 ", expected key " + KeyIdHex(trusted_id));
  }
  WP_RETURN_IF_ERROR(InitSodium());
  const Bytes message = SignedBytes(envelope.kind, AsView(envelope.payload));
  if (crypto_sign_ed25519_verify_detached(envelope.signature.data(), message.data(), message.size(), trusted.data()) !=
      0) {
    return PermissionDeniedError(MessageKindName(expected) + " signature does not verify under key " +
                                 KeyIdHex(trusted_id));
  }
  return Status::Ok();
}

StatusOr<Bytes> VerifyEnvelope(const SignedEnvelope& envelope, MessageKind expected, const PublicKey& trusted) {
  WP_RETURN_IF_ERROR(VerifySignature(envelope, expected, trusted));
  return envelope.payload;
}

StatusOr<Bytes> VerifyEnvelope(Envelope::Reader envelope, MessageKind expected, const PublicKey& trusted) {
  WP_ASSIGN_OR_RETURN(SignedEnvelope decoded, DecodeEnvelope(envelope));
  WP_RETURN_IF_ERROR(VerifySignature(decoded, expected, trusted));
  return std::move(decoded.payload);
}

StatusOr<Bytes> VerifyEnvelope(ByteView envelope_bytes, MessageKind expected, const PublicKey& trusted) {
  WP_ASSIGN_OR_RETURN(SignedEnvelope decoded, DecodeEnvelope(envelope_bytes));
  WP_RETURN_IF_ERROR(VerifySignature(decoded, expected, trusted));
  return std::move(decoded.payload);
}

}  // namespace wipeproof::proto
