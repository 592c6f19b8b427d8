// challenger/session/touched_byte_pool.h: buffers reserved and written before the rounds, taken
// by size (the smallest class that holds the bytes), fresh ones once a class is used up, and the
// budget on what is reserved.
#include "challenger/session/touched_byte_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

namespace wipeproof {
namespace {

std::vector<uint8_t> Bytes(size_t n, uint8_t value) { return std::vector<uint8_t>(n, value); }

TEST(TouchedBytePoolTest, CopiesGoToTheSmallestClassThatHoldsThemThenToFreshBuffers) {
  TouchedBytePool pool;
  EXPECT_EQ(pool.Reserve(2, 1024, 1 << 20), 2u);
  EXPECT_EQ(pool.Reserve(1, 256, 1 << 20), 1u);
  EXPECT_EQ(pool.buffers(), 3u);
  EXPECT_EQ(pool.bytes(), 2u * 1024 + 256);

  const std::vector<uint8_t> small = Bytes(200, 7);
  proto::Bytes a = pool.CopyOf(small.data(), small.size());
  EXPECT_EQ(a, small);
  EXPECT_EQ(a.capacity(), 256u) << "the 256-byte class, the smallest that holds 200 bytes";
  // The 256-byte class is used up: the next small copy takes a 1024-byte buffer.
  proto::Bytes b = pool.CopyOf(small.data(), small.size());
  EXPECT_EQ(b, small);
  EXPECT_EQ(b.capacity(), 1024u);
  const std::vector<uint8_t> large = Bytes(1000, 9);
  proto::Bytes c = pool.CopyOf(large.data(), large.size());
  EXPECT_EQ(c, large);
  EXPECT_EQ(c.capacity(), 1024u);
  EXPECT_EQ(pool.buffers(), 0u);
  EXPECT_EQ(pool.bytes(), 0u);
  // Used up: a fresh buffer of the bytes' size, the same contents.
  proto::Bytes d = pool.CopyOf(large.data(), large.size());
  EXPECT_EQ(d, large);
  EXPECT_EQ(d.capacity(), 1000u);
}

TEST(TouchedBytePoolTest, BytesLargerThanEveryClassGetAFreshBufferAndLeaveThePoolWhole) {
  TouchedBytePool pool;
  pool.Reserve(3, 64, 1 << 20);
  const std::vector<uint8_t> big = Bytes(65, 1);
  proto::Bytes copy = pool.CopyOf(big.data(), big.size());
  EXPECT_EQ(copy, big);
  EXPECT_EQ(pool.buffers(), 3u);
  const std::vector<uint8_t> none;
  EXPECT_TRUE(pool.CopyOf(none.data(), 0).empty());
  EXPECT_EQ(pool.buffers(), 2u) << "an empty copy takes the smallest buffer too";
}

TEST(TouchedBytePoolTest, ACopyUsesThePooledBuffersOwnMemory) {
  TouchedBytePool pool;
  pool.Reserve(4, 4096, 1 << 20);
  // Each copy lands in memory the pool allocated before: four distinct buffers, no fifth.
  std::set<const uint8_t*> seen;
  std::vector<proto::Bytes> copies;
  const std::vector<uint8_t> bytes = Bytes(4000, 3);
  for (int i = 0; i < 4; ++i) {
    copies.push_back(pool.CopyOf(bytes.data(), bytes.size()));
    EXPECT_EQ(copies.back().capacity(), 4096u) << "no reallocation on the copy";
    seen.insert(copies.back().data());
  }
  EXPECT_EQ(seen.size(), 4u);
}

TEST(TouchedBytePoolTest, TheBudgetBoundsWhatIsReserved) {
  TouchedBytePool pool;
  EXPECT_EQ(pool.Reserve(10, 1000, 3500), 3u) << "three of 1000 bytes fit 3500";
  EXPECT_EQ(pool.bytes(), 3000u);
  EXPECT_EQ(pool.Reserve(10, 1000, 3500), 0u) << "the budget counts what is pooled already";
  EXPECT_EQ(pool.Reserve(10, 500, 3500), 1u);
  EXPECT_EQ(pool.Reserve(5, 0, 3500), 0u) << "an empty class is no class";
  EXPECT_EQ(pool.buffers(), 4u);
}

}  // namespace
}  // namespace wipeproof
