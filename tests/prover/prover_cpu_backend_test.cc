// CpuBackend (prover/backends/cpu/cpu_backend.h): acquire, fill, lookup and release of locked host memory,
// byte-equal with the region labeler; refusals that hold nothing afterwards.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/numbers.h"
#include "kernels/region_labeler.h"
#include "prover/backends/backend_factory.h"
#include "prover/backends/cpu/cpu_backend.h"

namespace wipeproof {
namespace {


// A field of /proc/self/status in kB ("VmLck", "VmSize").
uint64_t StatusKb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
  }
  ADD_FAILURE() << "no " << field << " in /proc/self/status";
  return 0;
}

// A backend on a faked machine with `available` bytes of MemAvailable.
std::unique_ptr<Backend> FakeBackend(uint64_t available, uint64_t min_reserve = 0) {
  CpuBackendConfig config;
  config.meminfo = [available]() -> StatusOr<HostMemInfo> { return HostMemInfo{64 * kMiB * 1024, available}; };
  config.min_reserve_bytes = min_reserve;
  return MakeCpuBackend(config);
}

RegionSpec Plan(LabelFormat format, uint32_t m, uint64_t first, uint64_t count) {
  RegionSpec plan;
  plan.format = format;
  for (int i = 0; i < kSeedBytes; ++i) plan.seed[i] = static_cast<uint8_t>(0x3C ^ (7 * i));
  plan.chunk_labels = m;
  plan.first = first;
  plan.count = count;
  return plan;
}

std::vector<uint8_t> RegionBytes(const RegionSpec& plan) {
  RegionSpec spec;
  spec.format = plan.format;
  std::memcpy(spec.seed, plan.seed, kSeedBytes);
  spec.chunk_labels = plan.chunk_labels;
  spec.first = plan.first;
  spec.count = plan.count;
  std::vector<uint8_t> out(plan.count * 32);
  EXPECT_TRUE(LabelRegion(spec, out.data()).ok());
  return out;
}

std::vector<uint8_t> LookupRange(const DeviceMemory& mem, uint64_t first, uint64_t count) {
  std::vector<uint64_t> indices(count);
  for (uint64_t i = 0; i < count; ++i) indices[i] = first + i;
  std::vector<uint8_t> out(count * 32);
  Status s = mem.Lookup(indices.data(), count, out.data());
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

TEST(CpuBackend, DevicesReadsMeminfoFile) {
  std::string path = ::testing::TempDir() + "/fake_meminfo";
  std::ofstream(path) << "MemTotal:        2048 kB\nMemFree:          100 kB\nMemAvailable:    1024 kB\n";
  CpuBackendConfig config;
  config.meminfo_path = path;
  auto backend = MakeCpuBackend(config);
  EXPECT_EQ(backend->kind(), DeviceKind::kHost);
  auto devices = backend->Devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].kind, DeviceKind::kHost);
  EXPECT_EQ(devices[0].id, "host");
  EXPECT_EQ(devices[0].total_bytes, 2048u * 1024);
  EXPECT_EQ(devices[0].available_bytes, 1024u * 1024);
  EXPECT_EQ(devices[0].name, "host memory");
  std::remove(path.c_str());
}

TEST(CpuBackend, AcquireFillLookupMatchesRegionLabeler) {
  auto backend = FakeBackend(64 * kMiB);
  AcquireOptions options;
  options.bytes = 4 * kMiB;
  auto mem = backend->Acquire("host", options);
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  EXPECT_EQ((*mem)->bytes_held(), 4 * kMiB);
  EXPECT_EQ((*mem)->label_capacity(), 4 * kMiB / 32);
  EXPECT_EQ((*mem)->device().id, "host");
  EXPECT_GE(StatusKb("VmLck") * 1024, 4 * kMiB);

  // c1 starting and ending inside chunks, then 192 with a trailing partial chunk.
  for (const RegionSpec& plan : {Plan(LabelFormat::kC1, 1024, 5 * 1024 + 17, 4 * kMiB / 32 - 100),
                                 Plan(LabelFormat::k192, 4096, 8192, 3 * 4096 + 1000)}) {
    std::atomic<uint64_t> last_done{0};
    FillOptions fill;
    fill.threads = 2;
    fill.progress = [&](uint64_t done, uint64_t total) {
      EXPECT_EQ(total, plan.count);
      last_done = done;
    };
    Status filled = (*mem)->Fill(plan, fill);
    ASSERT_TRUE(filled.ok()) << filled.ToString();
    EXPECT_EQ(last_done.load(), plan.count);
    EXPECT_EQ((*mem)->scratch_bytes(), 0u);
    std::vector<uint8_t> want = RegionBytes(plan);
    EXPECT_EQ(LookupRange(**mem, plan.first, plan.count), want) << LabelFormatName(plan.format);
    // Scattered lookups in request order, repeats allowed.
    const uint64_t picks[] = {plan.first + plan.count - 1, plan.first, plan.first + 12345 % plan.count, plan.first};
    uint8_t got[4 * 32];
    ASSERT_TRUE((*mem)->Lookup(picks, 4, got).ok());
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(0, std::memcmp(got + 32 * i, want.data() + 32 * (picks[i] - plan.first), 32)) << i;
    }
  }
  (*mem)->Release();
}

TEST(CpuBackend, LookupErrors) {
  auto backend = FakeBackend(64 * kMiB);
  AcquireOptions options;
  options.bytes = 1 * kMiB;
  auto mem = backend->Acquire("host", options);
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  uint64_t index = 100;
  uint8_t out[32];
  Status before = (*mem)->Lookup(&index, 1, out);
  EXPECT_EQ(before.code(), StatusCode::kFailedPrecondition) << before.ToString();

  RegionSpec plan = Plan(LabelFormat::kC1, 256, 1000, 2000);
  ASSERT_TRUE((*mem)->Fill(plan, {}).ok());
  for (uint64_t bad : {uint64_t{999}, uint64_t{3000}, ~uint64_t{0}}) {
    const uint64_t indices[] = {1000, bad};
    uint8_t two[64];
    Status s = (*mem)->Lookup(indices, 2, two);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find(std::to_string(bad)), std::string::npos) << s.message();
  }
  (*mem)->Release();
  Status after = (*mem)->Lookup(&index, 1, out);
  EXPECT_EQ(after.code(), StatusCode::kFailedPrecondition) << after.ToString();
}

TEST(CpuBackend, FillErrors) {
  auto backend = FakeBackend(64 * kMiB);
  AcquireOptions options;
  options.bytes = 1 * kMiB;
  auto mem = backend->Acquire("host", options);
  ASSERT_TRUE(mem.ok());
  const uint64_t capacity = (*mem)->label_capacity();
  Status too_big = (*mem)->Fill(Plan(LabelFormat::kC1, 256, 0, capacity + 1), {});
  EXPECT_EQ(too_big.code(), StatusCode::kInvalidArgument) << too_big.ToString();
  Status bad_m = (*mem)->Fill(Plan(LabelFormat::kC1, 0, 0, 10), {});
  EXPECT_EQ(bad_m.code(), StatusCode::kInvalidArgument) << bad_m.ToString();

  // A cancelled fill leaves nothing to look up, even after an earlier good fill.
  ASSERT_TRUE((*mem)->Fill(Plan(LabelFormat::kC1, 256, 0, capacity), {}).ok());
  std::atomic<bool> cancel{true};
  FillOptions fill;
  fill.cancel = &cancel;
  Status cancelled = (*mem)->Fill(Plan(LabelFormat::kC1, 256, 0, capacity), fill);
  EXPECT_EQ(cancelled.code(), StatusCode::kFailedPrecondition) << cancelled.ToString();
  uint64_t index = 0;
  uint8_t out[32];
  EXPECT_EQ((*mem)->Lookup(&index, 1, out).code(), StatusCode::kFailedPrecondition);

  (*mem)->Release();
  Status released = (*mem)->Fill(Plan(LabelFormat::kC1, 256, 0, 10), {});
  EXPECT_EQ(released.code(), StatusCode::kFailedPrecondition) << released.ToString();
}

TEST(CpuBackend, BudgetBeyondAvailableFailsAndHoldsNothing) {
  auto backend = FakeBackend(/*available=*/2 * kMiB);
  const uint64_t locked = StatusKb("VmLck"), size = StatusKb("VmSize");
  AcquireOptions options;
  options.bytes = 8 * kMiB;
  auto mem = backend->Acquire("host", options);
  ASSERT_FALSE(mem.ok());
  EXPECT_EQ(mem.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(mem.status().message().find("MemAvailable"), std::string::npos) << mem.status().message();
  EXPECT_NE(mem.status().message().find("8388608"), std::string::npos) << mem.status().message();
  EXPECT_EQ(StatusKb("VmLck"), locked);
  EXPECT_LT(StatusKb("VmSize"), size + 8 * 1024);  // no 8 MiB mapping left behind

  // "All available" when the reserve covers everything.
  AcquireOptions all;
  all.reserve_bytes = 2 * kMiB;
  auto none = backend->Acquire("host", all);
  EXPECT_EQ(none.status().code(), StatusCode::kResourceExhausted) << none.status().ToString();
  EXPECT_EQ(StatusKb("VmLck"), locked);
}

TEST(CpuBackend, MemlockLimitIsNamed) {
  CpuBackendConfig config;
  config.meminfo = []() -> StatusOr<HostMemInfo> { return HostMemInfo{1ull << 34, 1ull << 33}; };
  config.memlock_limit = [] {
    MemlockLimit limit;
    limit.limit_bytes = 64 * 1024;  // a typical distribution default
    return limit;
  };
  auto backend = MakeCpuBackend(config);
  const uint64_t locked = StatusKb("VmLck"), size = StatusKb("VmSize");
  AcquireOptions options;
  options.bytes = 4 * kMiB;
  auto mem = backend->Acquire("host", options);
  ASSERT_FALSE(mem.ok());
  EXPECT_EQ(mem.status().code(), StatusCode::kResourceExhausted);
  const std::string& msg = mem.status().message();
  EXPECT_NE(msg.find("ulimit -l"), std::string::npos) << msg;
  EXPECT_NE(msg.find("LimitMEMLOCK"), std::string::npos) << msg;
  EXPECT_NE(msg.find("65536 bytes"), std::string::npos) << msg;
  EXPECT_EQ(StatusKb("VmLck"), locked);
  EXPECT_LT(StatusKb("VmSize"), size + 4 * 1024);
}

TEST(CpuBackend, AllAvailableMinusReserve) {
  auto backend = FakeBackend(/*available=*/6 * kMiB + 123, /*min_reserve=*/1 * kMiB);
  AcquireOptions options;  // bytes = 0: everything but the reserve
  options.reserve_bytes = 2 * kMiB;
  auto mem = backend->Acquire("host", options);
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  EXPECT_EQ((*mem)->bytes_held(), 4 * kMiB);  // whole pages
  // The configured floor wins over a smaller requested reserve.
  options.reserve_bytes = 0;
  auto floor = FakeBackend(6 * kMiB, 3 * kMiB)->Acquire("host", options);
  ASSERT_TRUE(floor.ok()) << floor.status().ToString();
  EXPECT_EQ((*floor)->bytes_held(), 3 * kMiB);
}

TEST(CpuBackend, ReleaseIsIdempotentAndDestructorReleases) {
  const uint64_t locked = StatusKb("VmLck");
  auto backend = FakeBackend(64 * kMiB);
  AcquireOptions options;
  options.bytes = 2 * kMiB;
  {
    auto mem = backend->Acquire("host", options);
    ASSERT_TRUE(mem.ok());
    EXPECT_EQ(StatusKb("VmLck"), locked + 2048);
    (*mem)->Release();
    EXPECT_EQ((*mem)->bytes_held(), 0u);
    EXPECT_EQ(StatusKb("VmLck"), locked);
    (*mem)->Release();
    EXPECT_EQ(StatusKb("VmLck"), locked);
  }
  {
    auto mem = backend->Acquire("host", options);
    ASSERT_TRUE(mem.ok());
    EXPECT_EQ(StatusKb("VmLck"), locked + 2048);
  }
  EXPECT_EQ(StatusKb("VmLck"), locked);
}

TEST(CpuBackend, UnknownDeviceAndTinyBudget) {
  auto backend = FakeBackend(64 * kMiB);
  AcquireOptions options;
  options.bytes = kMiB;
  EXPECT_EQ(backend->Acquire("GPU-0", options).status().code(), StatusCode::kNotFound);
  options.bytes = 100;  // less than a page
  EXPECT_EQ(backend->Acquire("host", options).status().code(), StatusCode::kInvalidArgument);
}

// A HostFiller (a GPU in production) labels the memory; when it fails the CPU does, same bytes.
TEST(CpuBackend, HostFillerAndCpuFallback) {
  for (bool filler_fails : {false, true}) {
    int calls = 0;
    CpuBackendConfig config;
    config.meminfo = []() -> StatusOr<HostMemInfo> { return HostMemInfo{1ull << 32, 1ull << 31}; };
    config.host_filler.name = "fake:gpu0";
    config.host_filler.fill = [&](uint8_t* host, const RegionSpec& plan, const FillOptions&) -> Status {
      ++calls;
      if (filler_fails) {
        std::memset(host, 0xAB, plan.count * 32);  // a partial, wrong fill the CPU must overwrite
        return InternalError("fake device fault");
      }
      std::vector<uint8_t> labels = RegionBytes(plan);
      std::memcpy(host, labels.data(), labels.size());
      return Status::Ok();
    };
    AcquireOptions options;
    options.bytes = kMiB;
    auto mem = MakeCpuBackend(config)->Acquire("host", options);
    ASSERT_TRUE(mem.ok()) << mem.status().ToString();
    EXPECT_EQ((*mem)->FillDetailsJson(), "{}");
    RegionSpec plan = Plan(LabelFormat::kC1, 512, 700, 5000);
    ASSERT_TRUE((*mem)->Fill(plan, {}).ok());
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(LookupRange(**mem, plan.first, plan.count), RegionBytes(plan)) << filler_fails;
    EXPECT_EQ((*mem)->FillDetailsJson(), filler_fails ? R"({"filled_by": "cpu"})" : R"({"filled_by": "fake:gpu0"})");
  }
}

TEST(BackendFactory, HostBackendIsListed) {
  BackendConfig config;
  config.host.meminfo = []() -> StatusOr<HostMemInfo> { return HostMemInfo{1 << 30, 1 << 29}; };
  BackendSet set = CreateBackends(config);
  Backend* host = set.FindByDeviceId("host");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->kind(), DeviceKind::kHost);
  // A GPU backend is either running or listed as disabled with a reason.
  for (const auto& line : set.disabled) EXPECT_NE(line.find(": disabled: "), std::string::npos) << line;
}

}  // namespace
}  // namespace wipeproof
