// The host-memory backend: one device, "host", whose memory is taken from the kernel (anonymous
// private mmap), pinned resident with mlock (locked_memory.h) and filled with the region labeler on
// all cores (kernels/region_labeler.h), or by a HostFiller (a GPU) when one is configured.
//
// Acquire takes AcquireOptions.bytes, or when that is 0 all of MemAvailable minus
// max(reserve_bytes, CpuBackendConfig::min_reserve_bytes), rounded down to whole pages. It refuses
// (RESOURCE_EXHAUSTED, holding nothing) a budget above MemAvailable and a lock that
// RLIMIT_MEMLOCK would forbid, naming the limit and how to raise it.
//
// Thread-safety: the backend is thread-safe; see backend.h for the memory it returns.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "kernels/simd/hash16.h"
#include "prover/backends/backend.h"
#include "prover/backends/cpu/host_meminfo.h"
#include "prover/backends/cpu/host_memlock.h"

namespace wipeproof {

// Something faster than the CPU that can label host memory, e.g. a GPU writing over the bus
// (gpu_host_fill.h GpuHostFiller::Fill). Same contract as DeviceMemory::Fill, writing plan.count
// labels to host[0 .. 32 * plan.count).
struct HostFiller {
  std::string name;  // for reports, e.g. "cuda:GPU-..."
  std::function<Status(uint8_t* host, const RegionSpec& plan, const FillOptions& options)> fill;
};

struct CpuBackendConfig {
  // Where MemTotal/MemAvailable come from; tests point it at a fake file.
  std::string meminfo_path = kProcMeminfoPath;
  // When set, used instead of meminfo_path (tests fake a small machine).
  std::function<StatusOr<HostMemInfo>()> meminfo;
  // When set, used instead of ReadMemlockLimit() (tests fake a low RLIMIT_MEMLOCK).
  std::function<MemlockLimit()> memlock_limit;
  // Floor on the reserve left free when taking "all available" memory (bytes == 0): the process,
  // its page tables and the system need some, and an OOM kill mid-session helps no one.
  uint64_t min_reserve_bytes = 256ull << 20;
  // Node-hash path for fills; the default is the widest this CPU supports (WIPEPROOF_SIMD caps it).
  SimdLevel simd = BestSimdLevel();
  // When `fill` is set, fills go to it first; if it fails (other than by cancellation) the CPU
  // labels the memory instead, so a GPU fault costs time, never the wipe.
  HostFiller host_filler;
};

std::unique_ptr<Backend> MakeCpuBackend(const CpuBackendConfig& config = {});

}  // namespace wipeproof
