#include "proto/crypto.h"

#include <sodium.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/hex.h"

namespace wipeproof::proto {

static_assert(kPublicKeyBytes == crypto_sign_ed25519_PUBLICKEYBYTES);
static_assert(kSecretKeyBytes == crypto_sign_ed25519_SECRETKEYBYTES);
static_assert(kKeySeedBytes == crypto_sign_ed25519_SEEDBYTES);
static_assert(kSignatureBytes == crypto_sign_ed25519_BYTES);
static_assert(kDigestBytes >= crypto_generichash_BYTES_MIN && kDigestBytes <= crypto_generichash_BYTES_MAX);
static_assert(kKeyIdBytes <= kDigestBytes);

namespace {

bool SodiumReady() {
  static const bool ready = sodium_init() >= 0;
  return ready;
}

// libsodium cannot start only when the platform has no usable entropy source or CPU feature
// detection fails; nothing here can work then, so this is a broken invariant, not a Status.
void EnsureSodium() {
  if (!SodiumReady()) {
    std::fprintf(stderr, "wipeproof: sodium_init() failed\n");
    std::abort();
  }
}

}  // namespace

Status InitSodium() {
  if (!SodiumReady()) return InternalError("sodium_init() failed");
  return Status::Ok();
}

KeyPair::~KeyPair() { sodium_memzero(secret_key.data(), secret_key.size()); }

std::array<uint8_t, kKeySeedBytes> KeyPair::seed() const {
  std::array<uint8_t, kKeySeedBytes> out;
  std::memcpy(out.data(), secret_key.data(), out.size());
  return out;
}

KeyPair GenerateKeyPair() {
  EnsureSodium();
  KeyPair pair;
  crypto_sign_ed25519_keypair(pair.public_key.data(), pair.secret_key.data());
  return pair;
}

KeyPair KeyPairFromSeed(const std::array<uint8_t, kKeySeedBytes>& seed) {
  EnsureSodium();
  KeyPair pair;
  crypto_sign_ed25519_seed_keypair(pair.public_key.data(), pair.secret_key.data(), seed.data());
  return pair;
}

KeyId KeyIdOf(const PublicKey& public_key) {
  Digest digest = Blake2b256(AsView(public_key));
  KeyId id;
  std::memcpy(id.data(), digest.data(), id.size());
  return id;
}

std::string KeyIdHex(const KeyId& key_id) { return HexEncode(key_id.data(), key_id.size()); }

Digest Blake2b256(ByteView bytes) {
  EnsureSodium();
  Digest out;
  crypto_generichash(out.data(), out.size(), bytes.begin(), bytes.size(), nullptr, 0);
  return out;
}

void RandomBytes(uint8_t* out, size_t size) {
  EnsureSodium();
  randombytes_buf(out, size);
}

bool SameSecretBytes(ByteView a, const uint8_t* b, size_t b_size) {
  return a.size() == b_size && sodium_memcmp(a.begin(), b, b_size) == 0;
}

}  // namespace wipeproof::proto
