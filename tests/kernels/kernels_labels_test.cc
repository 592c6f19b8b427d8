// The label engine against the known-answer vectors (tests/testdata/labels-public.json, produced
// from the label spec by an independent implementation; the 192 cases at m = 2^14 and 2^17 by the
// public PoSE-DB prototype), and the c1 node hash against the keyed-XOF identity of spec §4.
#include <gtest/gtest.h>
#include <sodium.h>

#include <string>
#include <vector>

#include "common/hex.h"
#include "kernels/blake3_small.h"
#include "kernels/node_hash.h"
#include "kernels/region_labeler.h"
#include "tests/support/test_data.h"

namespace wipeproof {
namespace {

std::string Sha256Hex(const std::vector<uint8_t>& bytes) {
  uint8_t digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, bytes.data(), bytes.size());
  return HexEncode(digest, sizeof digest);
}

RegionSpec SpecFromCase(const nlohmann::json& c) {
  RegionSpec spec;
  EXPECT_TRUE(ParseLabelFormat(c["format"], &spec.format));
  EXPECT_TRUE(HexDecodeExact(c["session_seed"], kSeedBytes, spec.seed, "seed").ok());
  spec.chunk_labels = c["chunk_labels"];
  spec.first = c["first"];
  spec.count = c["count"];
  return spec;
}

TEST(LabelVectors, EveryPublicCase) {
  nlohmann::json vectors = testing::LoadTestJson("labels-public.json");
  int cases = 0;
  for (const auto& c : vectors["cases"]) {
    RegionSpec spec = SpecFromCase(c);
    SCOPED_TRACE(std::string(c["format"]) + " m=" + std::to_string(spec.chunk_labels) +
                 " first=" + std::to_string(spec.first) + " count=" + std::to_string(spec.count));
    std::vector<uint8_t> labels(spec.count * 32);
    ASSERT_TRUE(LabelRegion(spec, labels.data()).ok());
    for (const auto& [index, hex] : c["labels"].items()) {
      uint64_t g = std::stoull(index);
      EXPECT_EQ(HexEncode(labels.data() + (g - spec.first) * 32, 32), hex.get<std::string>()) << "label " << g;
    }
    EXPECT_EQ(Sha256Hex(labels), c["sha256_concat"].get<std::string>());
    ++cases;
  }
  EXPECT_EQ(cases, 22);
}

// Spec §4: label(i) is bytes [64 i, 64 i + 32) of the keyed BLAKE3 XOF of pred0 || pred1 under
// chunk_key(c), checked here with the stock keyed_hash on arbitrary predecessor labels.
TEST(LabelC1, NodeHashEqualsKeyedXofSlice) {
  uint8_t seed[kSeedBytes];
  for (int i = 0; i < kSeedBytes; ++i) seed[i] = static_cast<uint8_t>(7 * i + 1);
  ChunkHashParams params = DeriveChunkHashParams(LabelFormat::kC1, seed, 12345, 4096, 4096);
  uint8_t key[32];
  for (int i = 0; i < 8; ++i) StoreLe32(key + 4 * i, params.key[i]);
  for (uint64_t node : {0ull, 1ull, 2ull, 15ull, 200ull}) {
    uint32_t p0[8], p1[8], label[8];
    uint8_t msg[64];
    for (int w = 0; w < 8; ++w) {
      p0[w] = static_cast<uint32_t>(node * 2654435761u + w);
      p1[w] = node % 3 == 0 ? 0 : static_cast<uint32_t>(w * 40503u + node);
      StoreLe32(msg + 4 * w, p0[w]);
      StoreLe32(msg + 32 + 4 * w, p1[w]);
    }
    NodeHashC1(params.key, node, p0, p1, label);
    std::vector<uint8_t> xof(64 * (node + 1));
    Blake3KeyedHash(key, msg, sizeof msg, xof.data(), xof.size());
    uint8_t got[32];
    for (int w = 0; w < 8; ++w) StoreLe32(got + 4 * w, label[w]);
    EXPECT_EQ(HexEncode(got, 32), HexEncode(xof.data() + 64 * node, 32)) << "node " << node;
  }
}

// Spec §4: derive_key is a stock BLAKE3 mode; check chunk_key against the identity
// derive_key(c, x) == BLAKE3 of x keyed by context_key(c) with DERIVE_KEY_MATERIAL.
TEST(LabelC1, ChunkKeyIsDeriveKeyOfSeedChunkAndM) {
  uint8_t seed[kSeedBytes] = {};
  seed[0] = 0xAB;
  ChunkHashParams params = DeriveChunkHashParams(LabelFormat::kC1, seed, 0x0102030405060708ull, 16384, 16384);
  uint8_t material[48] = {};
  material[0] = 0xAB;
  for (int i = 0; i < 8; ++i) material[32 + i] = static_cast<uint8_t>(i + 1);
  material[32 + 8 + 6] = 0x40;  // be64(16384)
  const char ctx[] = "wipeproof/posedb-blake3-c1/chunk-key";
  uint8_t expected[32];
  Blake3DeriveKey(ctx, sizeof ctx - 1, material, sizeof material, expected);
  uint8_t got[32];
  for (int i = 0; i < 8; ++i) StoreLe32(got + 4 * i, params.key[i]);
  EXPECT_EQ(HexEncode(got, 32), HexEncode(expected, 32));
}

}  // namespace
}  // namespace wipeproof
