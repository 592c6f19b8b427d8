// BLAKE3 hash, keyed_hash, derive_key and their XOF for inputs of at most one BLAKE3 chunk
// (1024 bytes), header-only for host and device. Every message the label engine hashes (chunk-key
// material, 192-byte node messages, key-derivation contexts) fits one chunk, so no tree is needed.
// Source: BLAKE3 specification sections 2.3-2.6 (chunk chaining, root output, modes).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/blake3_compress.h"

namespace wipeproof {

// Hashes `len` <= 1024 bytes of `msg` as one chunk under `key_words` and mode `mode_flags`
// (0, kKeyedHash, kDeriveKeyContext or kDeriveKeyMaterial) and writes `out_len` bytes of the root
// output (XOF) to `out`. REQUIRES: len <= kBlake3ChunkBytes.
WP_HOST_DEVICE void Blake3HashOneChunk(const uint32_t key_words[8], uint32_t mode_flags, const uint8_t* msg,
                                       size_t len, uint8_t* out, size_t out_len) {
  uint32_t cv[8];
  for (int i = 0; i < 8; ++i) cv[i] = key_words[i];
  size_t blocks = len == 0 ? 1 : (len + kBlake3BlockBytes - 1) / kBlake3BlockBytes;
  uint32_t last_block[16];
  uint32_t last_len = 0, last_flags = 0;
  for (size_t b = 0; b < blocks; ++b) {
    uint8_t buf[kBlake3BlockBytes] = {0};
    size_t off = b * kBlake3BlockBytes;
    size_t n = len - off < kBlake3BlockBytes ? len - off : kBlake3BlockBytes;
    if (len == 0) n = 0;
    for (size_t i = 0; i < n; ++i) buf[i] = msg[off + i];
    uint32_t words[16];
    for (int i = 0; i < 16; ++i) words[i] = LoadLe32(buf + 4 * i);
    uint32_t flags = mode_flags | (b == 0 ? kChunkStart : 0u);
    if (b + 1 == blocks) {
      for (int i = 0; i < 16; ++i) last_block[i] = words[i];
      last_len = static_cast<uint32_t>(n);
      last_flags = flags | kChunkEnd | kRoot;
      break;
    }
    Blake3CompressCv(cv, words, 0, kBlake3BlockBytes, flags, cv);
  }
  // Root output: the last block compressed again with output-block counters 0, 1, ... (XOF).
  for (size_t pos = 0, counter = 0; pos < out_len; ++counter) {
    uint32_t o[16];
    Blake3Compress(cv, last_block, counter, last_len, last_flags, o);
    for (int w = 0; w < 16 && pos < out_len; ++w) {
      uint8_t bytes[4];
      StoreLe32(bytes, o[w]);
      for (int k = 0; k < 4 && pos < out_len; ++k) out[pos++] = bytes[k];
    }
  }
}

WP_HOST_DEVICE void Blake3IvWords(uint32_t out[8]) {
  for (int i = 0; i < 8; ++i) out[i] = Blake3IvWord(i);
}

WP_HOST_DEVICE void Blake3KeyWords(const uint8_t key[kBlake3KeyBytes], uint32_t out[8]) {
  for (int i = 0; i < 8; ++i) out[i] = LoadLe32(key + 4 * i);
}

// Standard BLAKE3 hash; `out_len` bytes of XOF output.
WP_HOST_DEVICE void Blake3Hash(const uint8_t* msg, size_t len, uint8_t* out, size_t out_len = 32) {
  uint32_t iv[8];
  Blake3IvWords(iv);
  Blake3HashOneChunk(iv, 0, msg, len, out, out_len);
}

// keyed_hash(key32, msg).
WP_HOST_DEVICE void Blake3KeyedHash(const uint8_t key[kBlake3KeyBytes], const uint8_t* msg, size_t len, uint8_t* out,
                                    size_t out_len = 32) {
  uint32_t k[8];
  Blake3KeyWords(key, k);
  Blake3HashOneChunk(k, kKeyedHash, msg, len, out, out_len);
}

// context_key(context): the key derive_key mode uses for material (spec section 1).
// REQUIRES: context_len <= 1024.
WP_HOST_DEVICE void Blake3ContextKey(const char* context, size_t context_len, uint32_t out_words[8]) {
  uint32_t iv[8];
  Blake3IvWords(iv);
  uint8_t key[kBlake3KeyBytes];
  Blake3HashOneChunk(iv, kDeriveKeyContext, reinterpret_cast<const uint8_t*>(context), context_len, key, 32);
  Blake3KeyWords(key, out_words);
}

// derive_key(context, material) = BLAKE3 of material under context_key(context), DERIVE_KEY_MATERIAL.
WP_HOST_DEVICE void Blake3DeriveKey(const char* context, size_t context_len, const uint8_t* material,
                                    size_t material_len, uint8_t* out, size_t out_len = 32) {
  uint32_t k[8];
  Blake3ContextKey(context, context_len, k);
  Blake3HashOneChunk(k, kDeriveKeyMaterial, material, material_len, out, out_len);
}

}  // namespace wipeproof
