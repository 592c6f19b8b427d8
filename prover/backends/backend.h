// The device interface every memory kind implements: host memory (cpu/cpu_backend.h), NVIDIA
// and AMD GPUs (gpu/gpu_backend.h over the CUDA or HIP runtime, gpu/gpu_runtimes.h). A backend enumerates its devices and acquires memory on
// one; the acquired memory (DeviceMemory) is filled with a session's labels, answers lookups by
// global label index, and is freed by Release() or on destruction, so no error path can leave
// memory held. Backends are built by one factory (backend_factory.h).
//
// Units: bytes for memory, labels (32 bytes each) for label ranges and capacities.
// Thread-safety: Backend methods are thread-safe. A DeviceMemory is used by one thread at a time,
// except that Lookup() may run concurrently with other Lookup() calls after Fill() returned (not
// while a StartLookup() is unfinished).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "kernels/label_spec.h"  // RegionSpec: a session's labels for one device

namespace wipeproof {

enum class DeviceKind : uint8_t { kHost = 0, kCuda = 1, kHip = 2 };
const char* DeviceKindName(DeviceKind kind);  // "host", "cuda", "hip"
// The kind DeviceKindName names, or false for any other text (the one parser of backend names:
// serve --devices, bench --backend).
bool DeviceKindFromName(const std::string& name, DeviceKind* kind);

struct DeviceInfo {
  DeviceKind kind = DeviceKind::kHost;
  std::string id;                   // stable selector: "host", "GPU-<uuid>" (CUDA; HIP with a UUID), "<PCI id>/<ordinal>" (HIP otherwise)
  std::string name;                 // model, e.g. "NVIDIA H200" or "host memory"
  int ordinal = 0;                  // runtime device index within its backend
  uint64_t total_bytes = 0;         // bytes the device has
  uint64_t available_bytes = 0;     // bytes free now (MemAvailable, cudaMemGetInfo)
  uint64_t held_by_others_bytes = 0;  // bytes other processes hold (GPU: from the runtime/driver)
};

struct AcquireOptions {
  // Bytes to take; 0 means all available memory minus `reserve_bytes`.
  uint64_t bytes = 0;
  // Bytes left free for the runtime and the system when bytes == 0.
  uint64_t reserve_bytes = 0;
};

struct FillOptions {
  // (labels written, labels planned); called from a worker thread, at most every ~100 ms.
  std::function<void(uint64_t, uint64_t)> progress;
  const std::atomic<bool>* cancel = nullptr;  // abort when set
  int threads = 0;                            // host workers; 0 = all cores
};

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual const DeviceInfo& device() const = 0;
  // Bytes held (pinned/resident) on the device.
  virtual uint64_t bytes_held() const = 0;
  // Labels that fit: bytes_held() / 32.
  uint64_t label_capacity() const { return bytes_held() / 32; }
  // Bytes of memory outside the proof used during the fill (scratch); 0 after Fill returns.
  virtual uint64_t scratch_bytes() const { return 0; }

  // Writes the region's labels (global indices [first, first + count) at slots 0 .. count-1,
  // label-spec.md §2; count <= label_capacity()). Errors: INVALID_ARGUMENT (plan exceeds capacity, m out of range),
  // FAILED_PRECONDITION (released, or cancelled), INTERNAL (device error, naming the device).
  virtual Status Fill(const RegionSpec& plan, const FillOptions& options) = 0;
  // Copies the labels of `n` global indices to out (n * 32 bytes, in request order).
  // Errors: FAILED_PRECONDITION before a successful Fill or after Release; INVALID_ARGUMENT
  // naming the first index outside [first, first + count).
  virtual Status Lookup(const uint64_t* global_indices, size_t n, uint8_t* out) const = 0;
  // The same in two steps, so that a round's devices are looked up at once (prover/agent): StartLookup
  // begins the lookup (a GPU: checks the indices and launches the lookup kernel, not waiting for
  // it), FinishLookup waits for it; the labels are in `out` once FinishLookup returns OK.
  // `global_indices` may be reused once StartLookup returns; `out` must stay valid until
  // FinishLookup. At most one started lookup per memory: starting another (or Lookup) before it
  // finishes is FAILED_PRECONDITION. FinishLookup with none started is OK. Errors: as Lookup's,
  // from either step. Default (host memory, where a lookup is a few memory copies): StartLookup is
  // Lookup, FinishLookup does nothing.
  virtual Status StartLookup(const uint64_t* global_indices, size_t n, uint8_t* out) const {
    return Lookup(global_indices, n, out);
  }
  virtual Status FinishLookup() const { return Status::Ok(); }
  // Frees everything; idempotent. Called by the destructor.
  virtual void Release() = 0;
  // Backend-specific figures of the last Fill as a JSON object (GPU: passes, team shape, scratch
  // placement, memory left free after acquisition), for `bench`; "{}" when there are none.
  virtual std::string FillDetailsJson() const { return "{}"; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceKind kind() const = 0;
  // Devices of this backend, with current free memory. None once unusable_reason() is set.
  virtual std::vector<DeviceInfo> Devices() const = 0;
  // Why this backend's devices can no longer be used in this process, or empty while they can. A
  // GPU device fault (kernels/gpu/gpu_runtime.h DeviceLostError) leaves its runtime unusable until
  // the agent restarts: "device lost (...): ...; restart the agent".
  virtual std::string unusable_reason() const { return ""; }
  // Takes memory on device `id`. Errors: NOT_FOUND (unknown id), RESOURCE_EXHAUSTED (not enough
  // memory, or a limit such as RLIMIT_MEMLOCK, named in the message), INTERNAL (runtime error).
  virtual StatusOr<std::unique_ptr<DeviceMemory>> Acquire(const std::string& id, const AcquireOptions& options) = 0;
  // Compressions per second of the backend's own node-hash code on device `id`, run for about
  // `seconds` without memory traffic: the roofline `bench` compares the fill rate with.
  // Errors: FAILED_PRECONDITION where a backend does not measure it, NOT_FOUND for an unknown id.
  virtual StatusOr<double> MeasureCompressionRate(const std::string& id, double seconds) {
    (void)id;
    (void)seconds;
    return FailedPreconditionError(std::string(DeviceKindName(kind())) + " backend does not measure a raw rate");
  }
};

}  // namespace wipeproof
