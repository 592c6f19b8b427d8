// One GPU's share of a wipe: the memory taken on the device, its fill with a session's labels
// and the lookups of a challenge round. Runtime-neutral (it drives a GpuRuntime), so the CUDA and
// HIP backends (prover/backends/gpu/gpu_backend.h), wipeproof-gpu-check and the CPU-emulated tests all run
// this same code.
//
// Memory. Acquire takes all free memory but a reserve (or an exact byte count) in large pieces
// that back off when an allocation fails (memory_acquisition.h), and pinned, device-mapped host
// buffers for lookups. Fill adds the side scratch (<= 256 MiB by default: the packed schedule,
// the slot table, the 192 block-0 table and the scratch of the final passes) and frees it before
// returning, so between fills no device memory outside the pieces is held; the main passes keep their scratch in the
// region's own not-yet-labeled tail (fill_passes.h), so when Fill returns OK every byte of the
// pieces up to the plan's count holds its label. Release frees everything; so does the
// destructor, and every error path.
//
// Thread-safety: Fill and Release need exclusive access; Lookup calls may run concurrently with
// each other (they serialise on the pinned buffers).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "kernels/gpu/gpu_runtime.h"
#include "kernels/region_labeler.h"
#include "prover/backends/gpu/fill_passes.h"
#include "prover/backends/gpu/memory_acquisition.h"

namespace wipeproof {
namespace gpu {

// Left free when taking "all" memory, at least: the side scratch of a fill (256 MiB) plus what
// the runtime allocates lazily after acquisition (kernel stacks and local memory, the printf and
// malloc heaps, module images: ~100-300 MiB on CUDA). gpu-check reports what is really left.
constexpr uint64_t kMinReserveBytes = 512 * kMiB;
// Lookups are gathered in batches of at most this many labels (pinned buffers: 40 bytes each).
constexpr uint32_t kLookupBatch = 65536;

struct DeviceRegionOptions {
  uint64_t bytes = 0;          // exact bytes to take; 0: all free memory minus the reserve
  uint64_t reserve_bytes = 0;  // with bytes == 0: left free (raised to kMinReserveBytes)
  AcquisitionPolicy policy;
};

struct FillControl {
  // (labels written, labels planned), after every launch.
  std::function<void(uint64_t, uint64_t)> progress;
  const std::atomic<bool>* cancel = nullptr;  // checked between launches
};

struct FillStats {
  double seconds = 0;
  uint64_t labels = 0;
  uint64_t nodes = 0;  // node hashes (1 compression each in c1; 2 + a cached or computed one in 192)
  uint32_t passes = 0;
  uint32_t launches = 0;
  uint64_t side_scratch_bytes = 0;         // outside the proof, freed on return
  uint64_t region_scratch_peak_bytes = 0;  // inside the region tail, labeled by the end
  uint64_t cv0_table_nodes = 0;            // 192: block-0 values cached (largest table used)
  TeamShape main_shape;                    // the first pass's team shape
  uint64_t main_chunks_in_flight = 0;      // the first pass's chunks per launch
  std::string plan;                        // one line per pass, for logs and gpu-check
};

class DeviceRegion {
 public:
  // Takes memory on device `ordinal`. Errors: RESOURCE_EXHAUSTED (nothing or too little could be
  // taken; nothing is held), UNAVAILABLE/INTERNAL (runtime errors, naming the call).
  // `runtime` must outlive the region.
  static StatusOr<std::unique_ptr<DeviceRegion>> Acquire(GpuRuntime* runtime, int ordinal,
                                                         const DeviceRegionOptions& options);
  // A region over existing host memory: `host` (bytes long, 32-byte aligned) is pinned and mapped
  // into device `ordinal`, and Fill computes on the GPU and writes the labels straight into it
  // (GPU-filled host memory: a host wipe at GPU speed). Scratch then lives in device memory only:
  // the side scratch, sized by FillTuning.side_scratch_bytes (give it gigabytes for speed).
  // Release unregisters the range and leaves the host memory, labels and all, to its owner.
  static StatusOr<std::unique_ptr<DeviceRegion>> AdoptHostMemory(GpuRuntime* runtime, int ordinal, void* host,
                                                                 uint64_t bytes);
  ~DeviceRegion();
  DeviceRegion(const DeviceRegion&) = delete;
  DeviceRegion& operator=(const DeviceRegion&) = delete;

  const GpuDeviceProps& props() const { return props_; }
  uint64_t bytes_held() const { return released_ ? 0 : TotalBytes(pieces_); }
  uint64_t label_capacity() const { return released_ ? 0 : map_.slots(); }
  const std::vector<DeviceAllocation>& pieces() const { return pieces_; }
  // Free device memory right before and right after acquisition (what the runtime and others kept).
  uint64_t free_before_bytes() const { return free_before_; }
  uint64_t free_after_bytes() const { return free_after_; }
  // Device memory outside the proof held now: the side scratch during Fill, else 0.
  uint64_t scratch_bytes() const { return scratch_now_.load(); }

  // Labels `spec` into slots 0 .. spec.count-1 (label g at slot g - spec.first).
  // Errors: INVALID_ARGUMENT (bad spec, or more labels than capacity), FAILED_PRECONDITION
  // (released, or cancelled: the region then holds a partial fill and Lookup refuses),
  // RESOURCE_EXHAUSTED (no room for the side scratch), INTERNAL (device error).
  Status Fill(const RegionSpec& spec, const FillTuning& tuning = {}, const FillControl& control = {},
              FillStats* stats = nullptr);

  // Copies the labels of `n` global indices to out (32 bytes each, in request order).
  // Errors: FAILED_PRECONDITION before a successful Fill or after Release; INVALID_ARGUMENT naming
  // the first index outside the filled range.
  Status Lookup(const uint64_t* global_indices, size_t n, uint8_t* out) const;

  // Frees everything; idempotent.
  void Release();

 private:
  DeviceRegion(GpuRuntime* runtime, int ordinal) : runtime_(runtime), ordinal_(ordinal) {}
  Status FillLocked(const RegionSpec& spec, const FillTuning& tuning, const FillControl& control, FillStats* stats);

  GpuRuntime* runtime_;
  int ordinal_;
  GpuDeviceProps props_;
  std::vector<DeviceAllocation> pieces_;
  SlotMap map_;
  void* lookup_host_ = nullptr;    // pinned: kLookupBatch label addresses, then kLookupBatch labels
  void* lookup_device_ = nullptr;  // the same memory, as the device sees it
  uint64_t free_before_ = 0, free_after_ = 0;
  std::atomic<uint64_t> scratch_now_{0};
  bool released_ = false;
  void* adopted_host_ = nullptr;  // AdoptHostMemory: the registered host range (pieces_ aliases it)
  bool filled_ = false;
  uint64_t filled_first_ = 0, filled_count_ = 0;
  mutable std::mutex lookup_mu_;
};

}  // namespace gpu
}  // namespace wipeproof
