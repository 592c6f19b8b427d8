// Host-memory helpers of the CPU backend: /proc/meminfo parsing, the RLIMIT_MEMLOCK check and
// LockedMemory (prover/backends/cpu/host_meminfo.h, host_memlock.h, locked_memory.h).
#include <gtest/gtest.h>

#include <string>

#include "common/numbers.h"
#include "prover/backends/cpu/host_budget.h"
#include "prover/backends/cpu/host_meminfo.h"
#include "prover/backends/cpu/host_memlock.h"
#include "prover/backends/cpu/locked_memory.h"

namespace wipeproof {
namespace {

TEST(HostMemInfo, ParsesKibFields) {
  auto info = ParseMemInfo(
      "MemTotal:       24683620 kB\nMemFree:        23000000 kB\nMemAvailable:   24322952 kB\nBuffers: 1 kB\n");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->total_bytes, 24683620ull * 1024);
  EXPECT_EQ(info->available_bytes, 24322952ull * 1024);
}

TEST(HostMemInfo, MissingOrMalformedFields) {
  // MemAvailable is absent before Linux 3.14.
  auto old_kernel = ParseMemInfo("MemTotal: 1024 kB\nMemFree: 512 kB\n");
  EXPECT_EQ(old_kernel.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(old_kernel.status().message().find("MemAvailable"), std::string::npos);
  EXPECT_FALSE(ParseMemInfo("MemTotal: lots\nMemAvailable: 1 kB\n").ok());
  EXPECT_FALSE(ParseMemInfo("MemTotal: 1 MB\nMemAvailable: 1 kB\n").ok());
  // "MemAvailable" must start a line, not be a suffix of another field.
  EXPECT_FALSE(ParseMemInfo("MemTotal: 1 kB\nXMemAvailable: 1 kB\n").ok());
}

TEST(HostMemInfo, ReadsTheRealFile) {
  auto info = ReadMemInfo();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_GT(info->total_bytes, 0u);
  EXPECT_LE(info->available_bytes, info->total_bytes);
  EXPECT_EQ(ReadMemInfo("/nonexistent/meminfo").status().code(), StatusCode::kUnavailable);
}

TEST(MemlockLimit, Check) {
  MemlockLimit limit;
  limit.limit_bytes = 1 << 20;
  EXPECT_TRUE(CheckMemlockLimit(1 << 20, limit).ok());
  Status over = CheckMemlockLimit((1 << 20) + 1, limit);
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(over.message().find("1048576 bytes"), std::string::npos) << over.message();
  EXPECT_NE(over.message().find("ulimit -l"), std::string::npos) << over.message();
  // Memory already locked counts against the limit.
  limit.locked_bytes = 1 << 19;
  EXPECT_FALSE(CheckMemlockLimit((1 << 19) + 1, limit).ok());
  limit.locked_bytes = 2 << 20;  // more locked than the limit (lowered after locking)
  EXPECT_FALSE(CheckMemlockLimit(1, limit).ok());
  // Unlimited, or CAP_IPC_LOCK: no limit applies.
  limit.unlimited = true;
  EXPECT_TRUE(CheckMemlockLimit(1ull << 40, limit).ok());
  limit.unlimited = false;
  limit.cap_ipc_lock = true;
  EXPECT_TRUE(CheckMemlockLimit(1ull << 40, limit).ok());
}

// The start-up check of `serve`: a budget above physical memory, or above RLIMIT_MEMLOCK, or (no
// budget) MemAvailable less the reserve above RLIMIT_MEMLOCK is refused, naming the flag and the fix.
TEST(HostBudget, CheckedAgainstPhysicalMemoryAndTheLockLimit) {
  HostBudgetFacts facts;
  facts.physical_bytes = 24 * kGiB;
  facts.available_bytes = 20 * kGiB;
  facts.memlock.unlimited = true;
  EXPECT_TRUE(CheckHostBudget(16 * kGiB, 0, facts, "--host_budget_gib=16").ok());
  Status huge = CheckHostBudget(100 * kGiB, 0, facts, "--host_budget_gib=100");
  EXPECT_EQ(huge.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(huge.message().find("--host_budget_gib=100 asks for 100.00 GiB (107374182400 bytes), more than this "
                                "machine's physical memory, 24.00 GiB (25769803776 bytes)"),
            std::string::npos)
      << huge.message();
  EXPECT_TRUE(CheckHostBudget(0, 0, facts, "--host_budget_bytes=0").ok());

  facts.memlock.unlimited = false;
  facts.memlock.limit_bytes = 8 << 20;
  facts.memlock.locked_bytes = 1 << 20;
  EXPECT_TRUE(CheckHostBudget(7 << 20, 0, facts, "--host_budget_bytes=7340032").ok());
  Status over = CheckHostBudget(16 * kGiB, 0, facts, "--host_budget_gib=16");
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(over.message().find("--host_budget_gib=16 asks to lock 16.00 GiB (17179869184 bytes) but RLIMIT_MEMLOCK is "
                                "8.00 MiB (8388608 bytes)"),
            std::string::npos)
      << over.message();
  EXPECT_NE(over.message().find("ulimit -l unlimited"), std::string::npos) << over.message();
  EXPECT_NE(over.message().find("LimitMEMLOCK=infinity"), std::string::npos) << over.message();
  EXPECT_NE(over.message().find("at most 7.00 MiB (7340032 bytes)"), std::string::npos) << over.message();
  // No budget: MemAvailable less the reserve would be locked.
  Status none = CheckHostBudget(0, kGiB, facts, "--host_budget_bytes=0");
  EXPECT_EQ(none.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(none.message().find("no host budget given"), std::string::npos) << none.message();
  EXPECT_NE(none.message().find("19.00 GiB (20401094656 bytes)"), std::string::npos) << none.message();
  facts.available_bytes = kGiB + (4 << 20);  // 4 MiB above the reserve: fits under the limit
  EXPECT_TRUE(CheckHostBudget(0, kGiB, facts, "--host_budget_bytes=0").ok());
  // CAP_IPC_LOCK lifts the limit.
  facts.memlock.cap_ipc_lock = true;
  EXPECT_TRUE(CheckHostBudget(16 * kGiB, 0, facts, "--host_budget_gib=16").ok());

  const std::string line = DescribeHostBudget(6 * kGiB, 256 << 20, facts);
  EXPECT_EQ(line,
            "host budget 6.00 GiB (6442450944 bytes); reserve 256.00 MiB (268435456 bytes) of MemAvailable; "
            "physical memory 24.00 GiB (25769803776 bytes), MemAvailable 1.00 GiB (1077936128 bytes), budget 25.0% "
            "of physical; RLIMIT_MEMLOCK not applied (CAP_IPC_LOCK)");
}

TEST(LockedMemory, MapsLocksAndReleases) {
  const uint64_t before = ProcessLockedBytes();
  const uint64_t bytes = 16 * PageBytes();
  MemlockLimit limit = ReadMemlockLimit();
  if (!CheckMemlockLimit(bytes, limit).ok()) GTEST_SKIP() << "RLIMIT_MEMLOCK too low for this test";
  auto mem = LockedMemory::Map(bytes);
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  EXPECT_EQ(mem->size(), bytes);
  EXPECT_EQ(ProcessLockedBytes(), before + bytes);
  mem->data()[0] = 1;
  mem->data()[bytes - 1] = 2;
  LockedMemory moved = std::move(*mem);
  EXPECT_EQ(mem->data(), nullptr);
  EXPECT_EQ(moved.data()[bytes - 1], 2);
  moved.Release();
  moved.Release();
  EXPECT_EQ(moved.size(), 0u);
  EXPECT_EQ(ProcessLockedBytes(), before);
}

TEST(LockedMemory, RejectsPartialPages) {
  EXPECT_EQ(LockedMemory::Map(0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LockedMemory::Map(PageBytes() + 1).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace wipeproof
