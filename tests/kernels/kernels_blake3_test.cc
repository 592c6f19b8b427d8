// BLAKE3 hash, keyed_hash, derive_key and XOF against the official test vectors
// (tests/testdata/blake3-official-test-vectors.json, from the BLAKE3 reference repository),
// every case with input length <= 1024 (one chunk, what the label engine needs).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/hex.h"
#include "kernels/blake3_small.h"
#include "tests/support/test_data.h"

namespace wipeproof {
namespace {

std::vector<uint8_t> OfficialInput(size_t len) {
  std::vector<uint8_t> in(len);
  for (size_t i = 0; i < len; ++i) in[i] = static_cast<uint8_t>(i % 251);
  return in;
}

TEST(Blake3OfficialVectors, AllModesUpToOneChunk) {
  nlohmann::json vectors = testing::LoadTestJson("blake3-official-test-vectors.json");
  const std::string key = vectors["key"];
  const std::string context = vectors["context_string"];
  ASSERT_EQ(key.size(), 32u);
  int checked = 0;
  for (const auto& c : vectors["cases"]) {
    size_t len = c["input_len"];
    if (len > 1024) continue;
    SCOPED_TRACE("input_len=" + std::to_string(len));
    std::vector<uint8_t> in = OfficialInput(len);
    const std::string hash = c["hash"], keyed = c["keyed_hash"], derived = c["derive_key"];
    ASSERT_EQ(hash.size(), 262u);  // 131 bytes of XOF output
    std::vector<uint8_t> out(131);
    Blake3Hash(in.data(), len, out.data(), out.size());
    EXPECT_EQ(HexEncode(out), hash);
    Blake3KeyedHash(reinterpret_cast<const uint8_t*>(key.data()), in.data(), len, out.data(), out.size());
    EXPECT_EQ(HexEncode(out), keyed);
    Blake3DeriveKey(context.data(), context.size(), in.data(), len, out.data(), out.size());
    EXPECT_EQ(HexEncode(out), derived);
    // The default 32-byte output is the XOF's prefix.
    uint8_t short_out[32];
    Blake3Hash(in.data(), len, short_out);
    EXPECT_EQ(HexEncode(short_out, 32), hash.substr(0, 64));
    ++checked;
  }
  EXPECT_EQ(checked, 17);  // lengths 0..8, 63, 64, 65, 127, 128, 129, 1023, 1024
}

}  // namespace
}  // namespace wipeproof
