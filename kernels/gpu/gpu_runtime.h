// The GPU runtime as seen from plain C++: device queries, memory, copies and the label kernels'
// launchers. One implementation per runtime is compiled from the one kernel source
// (label_kernels.cu as CUDA, label_kernels.hip as HIP), and emulated_runtime.h runs the same
// kernel logic on the CPU for tests. No CUDA or HIP type appears here, so prover/ and the tests
// compile with the host compiler only.
//
// Errors: every runtime failure is a Status naming the call, file:line and the runtime's error
// string (INTERNAL; RESOURCE_EXHAUSTED for an allocation that does not fit; UNAVAILABLE when the
// runtime or driver cannot start). A *device fault* (CUDA's sticky errors: illegal address,
// launch failure, illegal instruction, misaligned address, hardware stack error, uncorrectable
// ECC, launch timeout, assert; HIP's equivalents) leaves the runtime unusable in this process: it
// is UNAVAILABLE "device lost (...)" (DeviceLostError), and from then on every call returns that
// same status (Health) until the process restarts.
// Nothing here exits the process, with one exception outside our control: on HIP a GPU page
// fault (a kernel touching unmapped memory) aborts the process inside the ROCm runtime before any
// call returns. The agent's service restarts it (deploy/systemd: Restart=on-failure; a
// Kubernetes DaemonSet pod restarts always).
// Thread-safety: implementations are thread-safe; calls name the device they act on.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "kernels/gpu/kernel_args.h"

namespace wipeproof {
namespace gpu {

struct GpuDeviceProps {
  int ordinal = 0;
  std::string name;        // e.g. "NVIDIA H200"
  std::string id;          // "GPU-<uuid>" (CUDA, HIP with a UUID), else "<PCI id>/<ordinal>" (HIP)
  std::string pci_bus_id;  // "0000:c1:00.0"
  std::string arch;        // "sm_90", "gfx90a"
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  int multiprocessors = 0;  // SMs / CUs
  int warp_size = 0;        // 32 (NVIDIA), 64 (AMD data-centre GPUs); informational only
  int max_threads_per_block = 0;
  int max_threads_per_multiprocessor = 0;
  uint64_t shared_bytes_per_block = 0;  // largest dynamic shared memory a block can opt in to
  uint64_t l2_bytes = 0;
  // The driver kills kernels that run longer than a few seconds (a GPU driving a display:
  // cudaDevAttrKernelExecTimeout, hipDeviceAttributeKernelExecTimeout). The fill then keeps each
  // launch short (fill_passes.h kTimeLimitedLaunchSeconds).
  bool kernel_time_limited = false;
};

// The one status of a device fault (see the file comment): UNAVAILABLE, "device lost (DETAIL):
// the runtime is unusable in this process; restart the agent".
inline Status DeviceLostError(const std::string& detail) {
  return UnavailableError("device lost (" + detail + "): the runtime is unusable in this process; restart the agent");
}
// Whether `status` is DeviceLostError's (possibly with context added in front).
inline bool IsDeviceLost(const Status& status) {
  return status.code() == StatusCode::kUnavailable && status.message().find("device lost (") != std::string::npos;
}

// One launch of the fill kernel (team_executor.h): args.team_count blocks of `threads_per_team`
// threads.
struct FillLaunch {
  FillWaveArgs args;
  uint32_t threads_per_team = 0;
};

// What kind of memory an allocation is. Labels must occupy physical device bytes: managed
// (migratable) memory could be evicted to the host, and compressible memory could hold a
// label-sized region in fewer bytes than it claims.
struct MemoryKind {
  bool device = false;               // plain device memory (not host memory, not managed)
  bool managed = false;              // unified/managed memory
  bool compressible = false;         // generic compression enabled on the allocation
  bool compression_checked = false;  // false: the runtime cannot tell (detail says why)
  std::string detail;                // what was asked of the runtime, and its answer
};

// A raw-rate run of CompressChain (MeasureCompressionChain): `blocks_per_multiprocessor` blocks of
// `threads_per_block` threads on every multiprocessor, each thread a dependent chain of c1 node
// hashes for about `seconds`.
struct ChainRun {
  uint32_t threads_per_block = 128;        // 4 NVIDIA warps: one per SM sub-partition
  uint32_t blocks_per_multiprocessor = 0;  // 0: as many as fit
  double seconds = 0.5;
};

struct ChainResult {
  double compressions_per_s = 0;
  double seconds = 0;                      // the timed launch, by device events
  double sm_clock_hz = 0;                  // the longest block's SM clock cycles (clock64) / seconds; 0: unknown
  uint64_t threads = 0;                    // threads in the grid
  uint32_t blocks_per_multiprocessor = 0;  // as run
};

class GpuRuntime {
 public:
  virtual ~GpuRuntime() = default;

  // "cuda", "hip" or "emulated".
  virtual const char* name() const = 0;
  // OK, or the DeviceLostError of the first device fault (see the file comment): every later call
  // returns it too.
  virtual Status Health() const = 0;
  // Errors: UNAVAILABLE when the runtime cannot start (no driver, no device: the reason is in the
  // message; a count of 0 is returned as OK with *count = 0).
  virtual Status DeviceCount(int* count) = 0;
  virtual Status Properties(int ordinal, GpuDeviceProps* props) = 0;
  virtual Status MemoryInfo(int ordinal, uint64_t* free_bytes, uint64_t* total_bytes) = 0;

  // Device memory (never managed memory). RESOURCE_EXHAUSTED when it does not fit.
  virtual Status Allocate(int ordinal, uint64_t bytes, void** ptr) = 0;
  virtual void Free(int ordinal, void* ptr) = 0;
  // What the runtime says `ptr` (an allocation's start) is (MemoryKind).
  virtual Status QueryMemory(int ordinal, const void* ptr, MemoryKind* kind) = 0;
  // Pinned host memory mapped into the device's address space (zero-copy).
  virtual Status AllocateMappedHost(int ordinal, uint64_t bytes, void** host, void** device) = 0;
  virtual void FreeMappedHost(int ordinal, void* host) = 0;
  // Pins an existing host range (e.g. the host backend's locked memory) and maps it into the
  // device's address space, so kernels write labels straight into host memory over the bus.
  virtual Status RegisterHost(int ordinal, void* host, uint64_t bytes, void** device) = 0;
  virtual void UnregisterHost(int ordinal, void* host) = 0;
  virtual Status CopyToDevice(int ordinal, void* dst, const void* src, uint64_t bytes) = 0;
  virtual Status CopyToHost(int ordinal, void* dst, const void* src, uint64_t bytes) = 0;

  // Resident fill teams per multiprocessor for this shape (the occupancy calculator).
  virtual Status FillTeamsPerMultiprocessor(int ordinal, uint32_t format, uint32_t threads_per_team,
                                            uint64_t shared_bytes, int* teams) = 0;
  // Runs one fill launch to completion.
  virtual Status RunFill(int ordinal, const FillLaunch& launch) = 0;
  virtual Status RunBuildCv0(int ordinal, const Cv0BuildArgs& args) = 0;
  // Lookups go through a queue (a CUDA/HIP stream with its completion event, or the emulation's
  // record): lookups launched on different queues run at the same time, whether the queues are on
  // one device or on several (how one round's devices are answered together: prover/agent
  // AnswerRound). A queue is made per device region and destroyed with it; it must be destroyed
  // before its device's runtime. Errors: RESOURCE_EXHAUSTED or INTERNAL from the runtime.
  virtual Status CreateLookupQueue(int ordinal, void** queue) = 0;
  virtual void DestroyLookupQueue(int ordinal, void* queue) = 0;
  // Launches the lookup kernel (args.threads_per_label threads per index: 1 or 8, kernel_args.h)
  // on `queue` without waiting for it: its labels are in args.out once WaitLookup(ordinal, queue)
  // returns OK. At most one lookup per queue is launched and not yet waited for (the caller
  // serialises them). INVALID_ARGUMENT for another threads_per_label (CheckLookupShape).
  virtual Status LaunchLookup(int ordinal, const LookupArgs& args, void* queue) = 0;
  // Waits for `queue`'s launched lookup (OK at once when none was launched).
  virtual Status WaitLookup(int ordinal, void* queue) = 0;
  // LaunchLookup then WaitLookup.
  Status RunLookup(int ordinal, const LookupArgs& args, void* queue) {
    Status launched = LaunchLookup(ordinal, args, queue);
    Status waited = WaitLookup(ordinal, queue);
    return launched.ok() ? waited : launched;
  }
  // The raw compression rate of the fill kernel's own compression code (fast_compress.h): every
  // thread of a full grid runs a dependent chain of c1 node hashes for about `seconds`.
  // Returns compressions per second.
  virtual Status MeasureCompressionRate(int ordinal, double seconds, double* per_second) = 0;
  // The same chain with a chosen number of blocks per multiprocessor (ChainRun), with the SM clock.
  virtual Status MeasureCompressionChain(int ordinal, const ChainRun& run, ChainResult* result) = 0;
};

// OK when `args` names a lookup shape the runtimes have (threads_per_label 1 or 8).
inline Status CheckLookupShape(const LookupArgs& args) {
  if (args.threads_per_label == 1 || args.threads_per_label == 8) return Status::Ok();
  return InvalidArgumentError("lookup with " + std::to_string(args.threads_per_label) +
                              " threads a label (the kernels have 1 and 8)");
}

// The CUDA runtime (label_kernels.cu, built when WIPEPROOF_CUDA is on).
std::unique_ptr<GpuRuntime> MakeCudaRuntime();
// The HIP runtime (label_kernels.hip, built when WIPEPROOF_HIP is on).
std::unique_ptr<GpuRuntime> MakeHipRuntime();

}  // namespace gpu
}  // namespace wipeproof
