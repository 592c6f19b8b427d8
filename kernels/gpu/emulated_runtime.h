// A GpuRuntime that runs on the CPU: "device" memory is host memory, and the fill, cv0 and lookup
// kernels run the very functions the GPU kernels run (team_executor.h), one block after another,
// each block's threads stepped one op at a time with the barrier between ops made explicit.
// Tests use it to check the whole GPU path (acquisition with back-off, slot mapping, scratch
// placement, passes, partial chunks, lookup) byte for byte against the CPU labeler without a GPU,
// and to inject allocation failures and odd shapes.
//
// Thread-safety: thread-safe (one mutex around the allocation table).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/gpu/gpu_runtime.h"
#include "kernels/gpu/gpu_shapes.h"

namespace wipeproof {
namespace gpu {

enum class EmulatedThreadOrder : uint8_t {
  kForward = 0,  // threads 0, 1, ..., G-1 between barriers, each its items in order
  kReverse = 1,  // threads G-1, ..., 0, each its items last to first: any dependence between the
                 // items of a super-step would give other bytes
};

// What QueryMemory reports for every allocation (tests of the refusal of managed and
// compressible memory).
enum class EmulatedMemoryKind : uint8_t { kDevice = 0, kManaged = 1, kCompressible = 2, kUnknownCompression = 3 };

struct EmulatedGpuConfig {
  int devices = 1;
  uint64_t total_bytes = 256ull << 20;
  uint64_t runtime_overhead_bytes = 16ull << 20;  // reported as used, like a CUDA context
  uint64_t max_allocation_bytes = 0;              // > 0: larger allocations are RESOURCE_EXHAUSTED
  int fail_allocation_number = -1;                // >= 0: that allocation (0-based) fails with INTERNAL
  int exhaust_allocation_number = -1;             // >= 0: that allocation (0-based) is RESOURCE_EXHAUSTED
  // >= 0: that fill launch (0-based, counted over the runtime's life) faults as a real device would
  // on an illegal address: DeviceLostError, and every later call returns it (gpu_runtime.h).
  int lose_device_at_fill_launch = -1;
  // > 0: every CopyToDevice of exactly this many bytes lands with its last byte flipped (an upload
  // that did not land whole).
  uint64_t corrupt_copy_bytes = 0;
  bool kernel_time_limited = false;  // reported in Properties (a GPU driving a display)
  // > 0: a launched lookup completes this many microseconds after its launch (WaitLookup sleeps
  // until then): the time a real device's lookup takes, so that tests can tell lookups waited for
  // together (about one latency) from lookups run one after another (one latency per device).
  uint64_t lookup_latency_us = 0;
  // > 0: MeasureCompressionChain reports this rate instead of timing one CPU thread (tests that
  // size launches by time need a rate that does not depend on the machine).
  double compressions_per_s = 0;
  int multiprocessors = 4;
  int max_threads_per_multiprocessor = 2048;
  int max_teams_per_multiprocessor = 32;
  uint64_t shared_bytes_per_block = 99 * 1024;
  EmulatedThreadOrder order = EmulatedThreadOrder::kForward;
  EmulatedMemoryKind memory_kind = EmulatedMemoryKind::kDevice;
  // Plan only: allocations get fake addresses and hold no memory, kernels do nothing, and a copy to
  // the device is kept (by address) only so that reading the same address back returns it (the
  // fill reads its uploaded step bounds back). Shows what the driver would do on a big device
  // (wipeproof-gpu-check --runtime=dry-run).
  bool dry_run = false;
  // Occupancy of a named GPU (gpu_shapes.h ResidentBlocksPerMultiprocessor) instead of the
  // thread and team limits above; multiprocessors, memory and threads should match it.
  bool use_shape_occupancy = false;
  GpuShape shape;
};

class EmulatedRuntime final : public GpuRuntime {
 public:
  explicit EmulatedRuntime(const EmulatedGpuConfig& config);
  ~EmulatedRuntime() override;

  const char* name() const override { return "emulated"; }
  Status Health() const override;
  Status DeviceCount(int* count) override;
  Status Properties(int ordinal, GpuDeviceProps* props) override;
  Status MemoryInfo(int ordinal, uint64_t* free_bytes, uint64_t* total_bytes) override;
  Status Allocate(int ordinal, uint64_t bytes, void** ptr) override;
  void Free(int ordinal, void* ptr) override;
  Status QueryMemory(int ordinal, const void* ptr, MemoryKind* kind) override;
  Status AllocateMappedHost(int ordinal, uint64_t bytes, void** host, void** device) override;
  void FreeMappedHost(int ordinal, void* host) override;
  Status RegisterHost(int ordinal, void* host, uint64_t bytes, void** device) override;
  void UnregisterHost(int ordinal, void* host) override;
  Status CopyToDevice(int ordinal, void* dst, const void* src, uint64_t bytes) override;
  int live_registrations() const;
  int allocation_calls() const;  // Allocate calls so far, failed ones included
  Status CopyToHost(int ordinal, void* dst, const void* src, uint64_t bytes) override;
  Status FillTeamsPerMultiprocessor(int ordinal, uint32_t format, uint32_t threads_per_team, uint64_t shared_bytes,
                                    int* teams) override;
  Status RunFill(int ordinal, const FillLaunch& launch) override;
  Status RunBuildCv0(int ordinal, const Cv0BuildArgs& args) override;
  Status CreateLookupQueue(int ordinal, void** queue) override;
  void DestroyLookupQueue(int ordinal, void* queue) override;
  Status LaunchLookup(int ordinal, const LookupArgs& args, void* queue) override;
  Status WaitLookup(int ordinal, void* queue) override;
  int live_lookup_queues() const;
  // The most lookups launched and not yet waited for at one time, over all queues (tests: a round's
  // devices looked up together reach their number; one after another, 1).
  int max_lookups_in_flight() const;
  Status MeasureCompressionRate(int ordinal, double seconds, double* per_second) override;
  Status MeasureCompressionChain(int ordinal, const ChainRun& run, ChainResult* result) override;

  // Device allocations currently held (tests check that everything is released).
  int live_allocations() const;
  uint64_t allocated_bytes() const;
  int live_mapped_host() const;
  uint64_t fill_launches() const;
  // The most device memory allocated at once since construction (tests of the scratch bound).
  uint64_t peak_allocated_bytes() const;

 private:
  Status CheckOrdinal(int ordinal) const;

  const EmulatedGpuConfig config_;
  mutable std::mutex mu_;
  std::string lost_;  // the injected device fault, once it happened (guarded by mu_)
  std::map<void*, uint64_t> allocations_;  // device allocations
  std::map<void*, uint64_t> mapped_;       // mapped host allocations
  std::map<void*, uint64_t> registered_;   // registered host ranges
  uint64_t allocated_ = 0;
  uint64_t peak_allocated_ = 0;
  int allocation_calls_ = 0;
  uint64_t fill_launches_ = 0;
  // A lookup queue: when its launched lookup completes (lookup_latency_us after the launch).
  struct LookupQueue {
    int ordinal = 0;
    bool launched = false;
    std::chrono::steady_clock::time_point done_at;
  };
  int live_lookup_queues_ = 0;
  int lookups_in_flight_ = 0;      // guarded by mu_
  int max_lookups_in_flight_ = 0;  // guarded by mu_
  uint64_t next_fake_ = 1ull << 44;  // dry run: fake device addresses
  std::map<const void*, std::vector<uint8_t>> dry_copies_;  // dry run: what was copied to each address
};

// A dry-run device of a named shape (gpu_shapes.h): its memory, runtime context, multiprocessors,
// threads and shared memory, and its occupancy (wipeproof-gpu-check --runtime=dry-run, the model).
EmulatedGpuConfig DryRunConfigFor(const GpuShape& shape);

// Runs one fill launch on the CPU exactly as the kernel does (tests may call it directly).
Status EmulateFill(const FillLaunch& launch, EmulatedThreadOrder order = EmulatedThreadOrder::kForward);

}  // namespace gpu
}  // namespace wipeproof
