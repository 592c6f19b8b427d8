// Byte sizes, Ed25519 key pairs, key ids, BLAKE2b-256 digests and CSPRNG bytes (libsodium), shared
// by the signing, transcript and key-file code.
//
// Thread-safety: all functions are safe to call from any thread (libsodium is initialised once,
// on first use, behind a function-local static).
#pragma once

#include <kj/array.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace wipeproof::proto {

// Sizes in bytes. They match libsodium's crypto_sign_ed25519_* and crypto_generichash constants
// (static_asserts in crypto.cc).
inline constexpr size_t kPublicKeyBytes = 32;  // Ed25519 public key
inline constexpr size_t kSecretKeyBytes = 64;  // Ed25519 secret key, libsodium layout: seed || public key
inline constexpr size_t kKeySeedBytes = 32;    // Ed25519 seed the secret key is derived from
inline constexpr size_t kSignatureBytes = 64;  // Ed25519 detached signature
inline constexpr size_t kKeyIdBytes = 8;       // key id: first 8 bytes of BLAKE2b-256(public key)
inline constexpr size_t kDigestBytes = 32;     // BLAKE2b-256 output
inline constexpr size_t kSessionIdBytes = 16;  // WipeOrder.sessionId
// Label and seed sizes: proto/label_wire.h.

using Bytes = std::vector<uint8_t>;
using ByteView = kj::ArrayPtr<const uint8_t>;  // capnp::Data::Reader converts to this implicitly
using PublicKey = std::array<uint8_t, kPublicKeyBytes>;
using KeyId = std::array<uint8_t, kKeyIdBytes>;
using Signature = std::array<uint8_t, kSignatureBytes>;
using Digest = std::array<uint8_t, kDigestBytes>;

inline ByteView AsView(const Bytes& bytes) { return ByteView(bytes.data(), bytes.size()); }
inline ByteView AsView(const uint8_t* data, size_t size) { return ByteView(data, size); }
template <size_t N>
ByteView AsView(const std::array<uint8_t, N>& bytes) {
  return ByteView(bytes.data(), N);
}

// Initialises libsodium. Every function here does it on first use, so calling this is optional;
// mains call it to fail early. Errors: INTERNAL if sodium_init() fails.
Status InitSodium();

// An Ed25519 key pair. The secret half is zeroed when the object is destroyed.
struct KeyPair {
  PublicKey public_key{};
  std::array<uint8_t, kSecretKeyBytes> secret_key{};  // seed || public key

  KeyPair() = default;
  KeyPair(const KeyPair&) = default;
  KeyPair& operator=(const KeyPair&) = default;
  KeyPair(KeyPair&&) = default;
  KeyPair& operator=(KeyPair&&) = default;
  ~KeyPair();

  // The 32-byte seed (first half of secret_key).
  std::array<uint8_t, kKeySeedBytes> seed() const;
};

// A fresh key pair from libsodium's CSPRNG.
KeyPair GenerateKeyPair();
// The key pair for `seed` (deterministic; used by key files and known-answer tests).
KeyPair KeyPairFromSeed(const std::array<uint8_t, kKeySeedBytes>& seed);

// First kKeyIdBytes of BLAKE2b-256(public_key). Identifies a key in envelopes and logs.
KeyId KeyIdOf(const PublicKey& public_key);
// Lowercase hex of a key id, 16 digits.
std::string KeyIdHex(const KeyId& key_id);

// BLAKE2b-256 (crypto_generichash, no key) of `bytes`.
Digest Blake2b256(ByteView bytes);

// Fills `out[0, size)` from libsodium's CSPRNG (seeds, session ids, challenge indices).
void RandomBytes(uint8_t* out, size_t size);

// Whether `a` equals `b[0, b_size)`, compared in a time that does not depend on where they differ
// (sodium_memcmp): for secrets such as a round channel's token. False when the sizes differ.
bool SameSecretBytes(ByteView a, const uint8_t* b, size_t b_size);

}  // namespace wipeproof::proto
