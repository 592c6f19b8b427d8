#include "kernels/gpu/emulated_runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kernels/gpu/team_executor.h"

namespace wipeproof {
namespace gpu {
namespace {

constexpr uint64_t kAlignment = 256;  // what cudaMalloc guarantees, at least

void* AlignedAlloc(uint64_t bytes) {
  return std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
}

template <int kFormat>
void EmulateTeams(const FillLaunch& launch, EmulatedThreadOrder order) {
  const FillWaveArgs& a = launch.args;
  const uint32_t threads = launch.threads_per_team;
  std::vector<uint32_t> shared(FillSharedBytes(a.max_team_chunks) / 4 + 4);  // 16-byte aligned enough for the host
  const bool reverse = order == EmulatedThreadOrder::kReverse;
  for (uint32_t block = 0; block < a.team_count; ++block) {
    std::fill(shared.begin(), shared.end(), 0xDEADBEEFu);  // stale shared memory must not matter
    const Team team = MakeTeam(a, block, shared.data(), 0);
    for (uint32_t t = 0; t < threads; ++t) TeamPrologue(a, block, team, t, threads);
    // One super-step at a time (the barrier); kReverse runs the threads, and each thread's items,
    // last to first.
    for (uint32_t s = 0; s < team.steps; ++s) {
      for (uint32_t j = 0; j < threads; ++j) {
        TeamRunStep<kFormat>(a, team, s, reverse ? threads - 1 - j : j, threads, reverse);
      }
    }
  }
}

}  // namespace

Status EmulateFill(const FillLaunch& launch, EmulatedThreadOrder order) {
  const FillWaveArgs& a = launch.args;
  if (launch.threads_per_team == 0 || a.team_count == 0)
    return InvalidArgumentError("fill launch needs threads and teams");
  for (uint32_t b = 0; b < a.team_count; ++b) {
    if (a.teams[b].chunks > a.max_team_chunks || a.teams[b].chunks > kMaxTeamChunks) {
      return InvalidArgumentError("team " + std::to_string(b) + " has more chunks than max_team_chunks");
    }
  }
  if (a.session.format == kFormatC1) {
    EmulateTeams<kFormatC1>(launch, order);
  } else {
    EmulateTeams<kFormat192>(launch, order);
  }
  return Status::Ok();
}

EmulatedGpuConfig DryRunConfigFor(const GpuShape& shape) {
  EmulatedGpuConfig config;
  config.dry_run = true;
  config.total_bytes = shape.memory_bytes;
  config.runtime_overhead_bytes = shape.context_bytes;
  config.multiprocessors = shape.multiprocessors;
  config.max_threads_per_multiprocessor = shape.max_threads_per_multiprocessor;
  config.shared_bytes_per_block = shape.shared_bytes_per_block;
  config.use_shape_occupancy = true;
  config.shape = shape;
  return config;
}

EmulatedRuntime::EmulatedRuntime(const EmulatedGpuConfig& config) : config_(config) {}

EmulatedRuntime::~EmulatedRuntime() {
  for (auto& [ptr, bytes] : allocations_) {
    if (!config_.dry_run) std::free(ptr);
  }
  for (auto& [ptr, bytes] : mapped_) std::free(ptr);
}

Status EmulatedRuntime::Health() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lost_.empty() ? Status::Ok() : DeviceLostError(lost_);
}

Status EmulatedRuntime::CheckOrdinal(int ordinal) const {
  WP_RETURN_IF_ERROR(Health());
  if (ordinal < 0 || ordinal >= config_.devices) return NotFoundError("no emulated device " + std::to_string(ordinal));
  return Status::Ok();
}

Status EmulatedRuntime::DeviceCount(int* count) {
  *count = 0;
  WP_RETURN_IF_ERROR(Health());
  *count = config_.devices;
  return Status::Ok();
}

Status EmulatedRuntime::Properties(int ordinal, GpuDeviceProps* props) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  props->ordinal = ordinal;
  props->name = config_.use_shape_occupancy ? "emulated " + config_.shape.name : "emulated GPU";
  props->id = "EMU-" + std::to_string(ordinal);
  props->pci_bus_id = "0000:00:00." + std::to_string(ordinal);
  props->arch = "emulated";
  uint64_t free_bytes = 0;
  WP_RETURN_IF_ERROR(MemoryInfo(ordinal, &free_bytes, &props->total_bytes));
  props->free_bytes = free_bytes;
  props->multiprocessors = config_.multiprocessors;
  props->warp_size = config_.use_shape_occupancy ? config_.shape.warp_width : 64;  // the emulation assumes nothing
  props->max_threads_per_block = 1024;
  props->max_threads_per_multiprocessor = config_.max_threads_per_multiprocessor;
  props->shared_bytes_per_block = config_.shared_bytes_per_block;
  props->l2_bytes = 4ull << 20;
  props->kernel_time_limited = config_.kernel_time_limited;
  return Status::Ok();
}

Status EmulatedRuntime::MemoryInfo(int ordinal, uint64_t* free_bytes, uint64_t* total_bytes) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t used = allocated_ + config_.runtime_overhead_bytes;
  *total_bytes = config_.total_bytes;
  *free_bytes = used < config_.total_bytes ? config_.total_bytes - used : 0;
  return Status::Ok();
}

Status EmulatedRuntime::Allocate(int ordinal, uint64_t bytes, void** ptr) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  std::lock_guard<std::mutex> lock(mu_);
  const int call = allocation_calls_++;
  if (call == config_.fail_allocation_number) return InternalError("emulated error in Allocate (injected)");
  if (call == config_.exhaust_allocation_number) return ResourceExhaustedError("emulated out of memory (injected)");
  const uint64_t used = allocated_ + config_.runtime_overhead_bytes;
  if (bytes == 0 || used + bytes > config_.total_bytes ||
      (config_.max_allocation_bytes > 0 && bytes > config_.max_allocation_bytes)) {
    return ResourceExhaustedError("emulated out of memory allocating " + std::to_string(bytes) + " bytes");
  }
  void* p = nullptr;
  if (config_.dry_run) {
    p = reinterpret_cast<void*>(next_fake_);
    next_fake_ += (bytes + kAlignment - 1) / kAlignment * kAlignment + kAlignment;
  } else {
    p = AlignedAlloc(bytes);
    if (p == nullptr) return ResourceExhaustedError("host out of memory for the emulated device");
  }
  allocations_[p] = bytes;
  allocated_ += bytes;
  peak_allocated_ = std::max(peak_allocated_, allocated_);
  *ptr = p;
  return Status::Ok();
}

Status EmulatedRuntime::QueryMemory(int ordinal, const void* ptr, MemoryKind* kind) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  std::lock_guard<std::mutex> lock(mu_);
  *kind = MemoryKind();
  if (allocations_.count(const_cast<void*>(ptr)) == 0) {
    kind->detail = "not an allocation of this device";
    return Status::Ok();
  }
  kind->managed = config_.memory_kind == EmulatedMemoryKind::kManaged;
  kind->device = !kind->managed;
  kind->compressible = config_.memory_kind == EmulatedMemoryKind::kCompressible;
  kind->compression_checked = config_.memory_kind != EmulatedMemoryKind::kUnknownCompression;
  kind->detail = "emulated";
  return Status::Ok();
}

void EmulatedRuntime::Free(int /*ordinal*/, void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = allocations_.find(ptr);
  if (it == allocations_.end()) return;
  if (config_.dry_run) {  // forget what was copied into the allocation
    const uint8_t* begin = static_cast<const uint8_t*>(ptr);
    dry_copies_.erase(dry_copies_.lower_bound(begin), dry_copies_.lower_bound(begin + it->second));
  }
  allocated_ -= it->second;
  if (!config_.dry_run) std::free(ptr);
  allocations_.erase(it);
}

Status EmulatedRuntime::AllocateMappedHost(int ordinal, uint64_t bytes, void** host, void** device) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  std::lock_guard<std::mutex> lock(mu_);
  void* p = AlignedAlloc(bytes);
  if (p == nullptr) return ResourceExhaustedError("host out of memory");
  mapped_[p] = bytes;
  *host = *device = p;
  return Status::Ok();
}

void EmulatedRuntime::FreeMappedHost(int /*ordinal*/, void* host) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = mapped_.find(host);
  if (it == mapped_.end()) return;
  std::free(host);
  mapped_.erase(it);
}

Status EmulatedRuntime::RegisterHost(int ordinal, void* host, uint64_t bytes, void** device) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  std::lock_guard<std::mutex> lock(mu_);
  if (registered_.count(host)) return InvalidArgumentError("host range registered twice");
  registered_[host] = bytes;
  *device = host;
  return Status::Ok();
}

void EmulatedRuntime::UnregisterHost(int /*ordinal*/, void* host) {
  std::lock_guard<std::mutex> lock(mu_);
  registered_.erase(host);
}

int EmulatedRuntime::allocation_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocation_calls_;
}

int EmulatedRuntime::live_registrations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(registered_.size());
}

Status EmulatedRuntime::CopyToDevice(int ordinal, void* dst, const void* src, uint64_t bytes) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  if (config_.dry_run) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto* p = static_cast<const uint8_t*>(src);
    dry_copies_[dst].assign(p, p + bytes);
    return Status::Ok();
  }
  std::memcpy(dst, src, bytes);
  if (bytes > 0 && bytes == config_.corrupt_copy_bytes) static_cast<uint8_t*>(dst)[bytes - 1] ^= 0xFF;
  return Status::Ok();
}

Status EmulatedRuntime::CopyToHost(int ordinal, void* dst, const void* src, uint64_t bytes) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  if (config_.dry_run) {
    std::lock_guard<std::mutex> lock(mu_);
    std::memset(dst, 0, bytes);
    auto it = dry_copies_.find(src);
    if (it != dry_copies_.end()) std::memcpy(dst, it->second.data(), std::min<uint64_t>(bytes, it->second.size()));
    return Status::Ok();
  }
  std::memcpy(dst, src, bytes);
  return Status::Ok();
}

Status EmulatedRuntime::FillTeamsPerMultiprocessor(int ordinal, uint32_t format, uint32_t threads_per_team,
                                                   uint64_t shared_bytes, int* teams) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  if (config_.use_shape_occupancy) {
    *teams = ResidentBlocksPerMultiprocessor(config_.shape, static_cast<int>(format), threads_per_team);
    return Status::Ok();
  }
  int by_threads = config_.max_threads_per_multiprocessor / static_cast<int>(threads_per_team ? threads_per_team : 1);
  int by_shared = shared_bytes ? static_cast<int>(config_.shared_bytes_per_block / shared_bytes) : 1 << 20;
  *teams = std::min({by_threads, by_shared, config_.max_teams_per_multiprocessor});
  return Status::Ok();
}

Status EmulatedRuntime::RunFill(int ordinal, const FillLaunch& launch) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  const uint64_t shared = FillSharedBytes(launch.args.max_team_chunks);
  if (shared > config_.shared_bytes_per_block) {
    return InvalidArgumentError("emulated launch needs " + std::to_string(shared) + " bytes of shared memory");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (config_.lose_device_at_fill_launch >= 0 &&
        fill_launches_ == static_cast<uint64_t>(config_.lose_device_at_fill_launch)) {
      lost_ = "emulated error cudaErrorIllegalAddress (an illegal memory access was encountered; injected) in "
              "fill launch " + std::to_string(fill_launches_) + " on device " + std::to_string(ordinal);
      ++fill_launches_;
      return DeviceLostError(lost_);
    }
    ++fill_launches_;
  }
  if (config_.dry_run) return Status::Ok();
  return EmulateFill(launch, config_.order);
}

Status EmulatedRuntime::RunBuildCv0(int ordinal, const Cv0BuildArgs& args) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  if (config_.dry_run) return Status::Ok();
  for (uint64_t n = 0; n < args.nodes; ++n) Cv0Entry(args, n);
  return Status::Ok();
}

Status EmulatedRuntime::CreateLookupQueue(int ordinal, void** queue) {
  *queue = nullptr;
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  auto* q = new LookupQueue;
  q->ordinal = ordinal;
  std::lock_guard<std::mutex> lock(mu_);
  ++live_lookup_queues_;
  *queue = q;
  return Status::Ok();
}

void EmulatedRuntime::DestroyLookupQueue(int ordinal, void* queue) {
  (void)ordinal;
  if (queue == nullptr) return;
  auto* q = static_cast<LookupQueue*>(queue);
  const bool in_flight = q->launched;
  delete q;
  std::lock_guard<std::mutex> lock(mu_);
  --live_lookup_queues_;
  if (in_flight) --lookups_in_flight_;
}

int EmulatedRuntime::live_lookup_queues() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_lookup_queues_;
}

int EmulatedRuntime::max_lookups_in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return max_lookups_in_flight_;
}

Status EmulatedRuntime::LaunchLookup(int ordinal, const LookupArgs& args, void* queue) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  auto* q = static_cast<LookupQueue*>(queue);
  if (q == nullptr || q->ordinal != ordinal) return InvalidArgumentError("lookup queue of another device");
  WP_RETURN_IF_ERROR(CheckLookupShape(args));
  if (config_.dry_run) return Status::Ok();
  if (args.threads_per_label == 8) {
    for (uint64_t t = 0; t < static_cast<uint64_t>(args.n) * 8; ++t) LookupWord(args, t);
  } else {
    for (uint32_t k = 0; k < args.n; ++k) LookupOne(args, k);
  }
  q->launched = true;
  q->done_at = std::chrono::steady_clock::now() + std::chrono::microseconds(config_.lookup_latency_us);
  std::lock_guard<std::mutex> lock(mu_);
  max_lookups_in_flight_ = std::max(max_lookups_in_flight_, ++lookups_in_flight_);
  return Status::Ok();
}

Status EmulatedRuntime::WaitLookup(int ordinal, void* queue) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  auto* q = static_cast<LookupQueue*>(queue);
  if (q == nullptr || !q->launched) return Status::Ok();
  q->launched = false;
  if (config_.lookup_latency_us > 0) std::this_thread::sleep_until(q->done_at);
  std::lock_guard<std::mutex> lock(mu_);
  --lookups_in_flight_;
  return Status::Ok();
}

Status EmulatedRuntime::MeasureCompressionRate(int ordinal, double seconds, double* per_second) {
  ChainRun run;
  run.seconds = seconds;
  ChainResult result;
  WP_RETURN_IF_ERROR(MeasureCompressionChain(ordinal, run, &result));
  *per_second = result.compressions_per_s;
  return Status::Ok();
}

Status EmulatedRuntime::MeasureCompressionChain(int ordinal, const ChainRun& run, ChainResult* result) {
  WP_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  if (config_.compressions_per_s > 0) {
    *result = ChainResult();
    result->compressions_per_s = config_.compressions_per_s;
    result->seconds = run.seconds;
    result->threads = 1;
    result->blocks_per_multiprocessor = run.blocks_per_multiprocessor;
    return Status::Ok();
  }
  // One CPU thread runs one chain: the rate of the code, not of any device.
  uint32_t key[16] = {1, 2, 3, 4, 5, 6, 7, 8}, block[16] = {};
  FillWaveArgs unused;
  uint64_t n = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    for (int i = 0; i < 4096; ++i, ++n) {
      uint32_t out[8];
      HashNode<kFormatC1>(unused, key, n, false, block, out);
      std::memcpy(block + 8, block, 32);
      std::memcpy(block, out, 32);
    }
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < run.seconds);
  *result = ChainResult();
  result->compressions_per_s = n / elapsed + (block[0] == 0x5eed ? 1e-9 : 0.0);  // keep the chain alive
  result->seconds = elapsed;
  result->threads = 1;
  result->blocks_per_multiprocessor = run.blocks_per_multiprocessor;
  return Status::Ok();
}

int EmulatedRuntime::live_allocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(allocations_.size());
}

uint64_t EmulatedRuntime::allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_;
}

int EmulatedRuntime::live_mapped_host() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(mapped_.size());
}

uint64_t EmulatedRuntime::peak_allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_allocated_;
}

uint64_t EmulatedRuntime::fill_launches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fill_launches_;
}

}  // namespace gpu
}  // namespace wipeproof
