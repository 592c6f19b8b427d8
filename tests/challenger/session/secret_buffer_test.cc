// The memory the challenger holds expected labels in (challenger/session/secret_buffer.h): zeroed
// before it is given back, usable when it cannot be locked, and what ExpectedLabels keeps its
// batches in.
#include "challenger/session/secret_buffer.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace wipeproof {
namespace {

// threat-model: T-PREPARED-SECRETS
TEST(SecretBufferTest, ReleaseZeroesTheBytesBeforeTheyAreUnmapped) {
  std::vector<uint8_t> seen;
  int calls = 0;
  auto buffer = SecretBuffer::Allocate(100'000, [&](const uint8_t* data, size_t size) {
    ++calls;
    seen.assign(data, data + size);
  });
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  ASSERT_EQ(buffer->size(), 100'000u);
  std::memset(buffer->data(), 0xa5, buffer->size());
  buffer->Release();
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(seen.size(), 100'000u);
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](uint8_t b) { return b == 0; })) << "a byte was left as written";
  EXPECT_EQ(buffer->size(), 0u);
  EXPECT_EQ(buffer->data(), nullptr);
  buffer->Release();  // idempotent
  EXPECT_EQ(calls, 1);
}

TEST(SecretBufferTest, TheDestructorAndAMoveAssignmentZeroToo) {
  std::vector<uint8_t> seen;
  auto observe = [&](const uint8_t* data, size_t size) { seen.assign(data, data + size); };
  {
    auto buffer = SecretBuffer::Allocate(33, observe);
    ASSERT_TRUE(buffer.ok());
    SecretBuffer moved = std::move(buffer).value();  // the moved-from buffer owns nothing
    std::memset(moved.data(), 0xff, moved.size());
  }
  ASSERT_EQ(seen.size(), 33u);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 0), 33);

  seen.clear();
  auto first = SecretBuffer::Allocate(4096, observe);
  ASSERT_TRUE(first.ok());
  std::memset(first->data(), 0x11, first->size());
  *first = SecretBuffer();  // the old bytes go, zeroed
  ASSERT_EQ(seen.size(), 4096u);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 0), 4096);
}

TEST(SecretBufferTest, AFreshBufferIsZeroAndAnEmptyOneMapsNothing) {
  auto buffer = SecretBuffer::Allocate(5000);
  ASSERT_TRUE(buffer.ok());
  EXPECT_TRUE(std::all_of(buffer->data(), buffer->data() + buffer->size(), [](uint8_t b) { return b == 0; }));
  auto empty = SecretBuffer::Allocate(0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->data(), nullptr);
  EXPECT_EQ(empty->size(), 0u);
}

// Locking is best effort: with RLIMIT_MEMLOCK at 0 (and no CAP_IPC_LOCK) the buffer is not locked
// but usable; with the capability (root) it is locked anyway.
TEST(SecretBufferTest, AFailureToLockLeavesTheBufferUsable) {
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &old), 0);
  struct rlimit none = old;
  none.rlim_cur = 0;
  ASSERT_EQ(setrlimit(RLIMIT_MEMLOCK, &none), 0);
  auto buffer = SecretBuffer::Allocate(1 << 20);
  ASSERT_EQ(setrlimit(RLIMIT_MEMLOCK, &old), 0);
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  std::memset(buffer->data(), 0x5a, buffer->size());
  EXPECT_EQ(buffer->data()[buffer->size() - 1], 0x5a);
  auto locked = SecretBuffer::Allocate(4096);
  ASSERT_TRUE(locked.ok());
  if (old.rlim_cur == RLIM_INFINITY || old.rlim_cur >= 4096 * 4) EXPECT_TRUE(locked->locked());
}

}  // namespace
}  // namespace wipeproof
