// One GPU's share of a wipe: the memory taken on the device, its fill with a session's labels
// and the lookups of a challenge round. Runtime-neutral (it drives a GpuRuntime), so the CUDA and
// HIP backends (prover/backends/gpu/gpu_backend.h), wipeproof-gpu-check and the CPU-emulated tests all run
// this same code.
//
// Memory. Acquire takes all free memory but a reserve (or an exact byte count) in large pieces
// that back off when an allocation fails (memory_acquisition.h), refusing any piece the runtime
// reports as managed or compressible, and pinned, device-mapped host buffers for lookups. Fill
// labels whole chunks in their own label slots (fill_passes.h) and adds only the side scratch
// (<= 256 MiB: programs, tables, partial chunks' work labels; FillStats says how much), which it
// frees before returning, so between fills no device memory outside the pieces is held but the
// lookup's placement tables (a few KiB, at most ~0.3 MiB: lookup_tables_bytes), and when Fill
// returns OK every byte of the pieces up to the plan's count holds a label (label_layout.h says
// which). Release frees everything; so does the destructor, and every error path.
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
#include "prover/backends/gpu/fill_plan.h"
#include "prover/backends/gpu/label_layout.h"
#include "prover/backends/gpu/memory_acquisition.h"

namespace wipeproof {
namespace gpu {

// Left free when taking "all" memory, at least: the side scratch of a fill (256 MiB) plus what
// the runtime allocates lazily after acquisition (kernel stacks and local memory, the printf and
// malloc heaps, module images: ~100-300 MiB on CUDA). gpu-check reports what is really left.
constexpr uint64_t kMinReserveBytes = 512 * kMiB;
// Lookups are gathered in batches of at most this many labels (pinned buffers: 48 bytes each).
constexpr uint32_t kLookupBatch = 65536;
constexpr uint64_t kLookupBytesPerLabel = 48;  // two half addresses and the label
// The lookup kernel's shape (kernel_args.h LookupArgs): threads per label, 1 or 8. On an H200 the
// two differ by under 1 us inside a region's lookups (docs/benchmarks.md "Lookup placement").
constexpr uint32_t kLookupThreadsPerLabelDefault = 1;

struct DeviceRegionOptions {
  uint64_t bytes = 0;          // exact bytes to take; 0: all free memory minus the reserve
  uint64_t reserve_bytes = 0;  // with bytes == 0: left free (raised to kMinReserveBytes)
  AcquisitionPolicy policy;
  uint32_t lookup_threads_per_label = kLookupThreadsPerLabelDefault;  // 1 or 8 (kernel_args.h LookupArgs)
  // After a fill, copy the region's placement tables (kernels/gpu/label_places.h: the layout's runs
  // and the slot map, at most ~0.3 MiB, inside the reserve) to device memory and let the lookup
  // kernel place each index itself; false, or when that memory cannot be had: the host places them.
  bool lookup_places_on_device = true;
};

struct FillControl {
  // (labels written, labels planned), after every launch.
  std::function<void(uint64_t, uint64_t)> progress;
  // After every launch, with what it did (wipeproof-gpu-check writes JSON from it).
  std::function<void(const LaunchStats&)> launch_done;
  const std::atomic<bool>* cancel = nullptr;  // checked between launches
};

// Memory at acquisition, reconciled (wipeproof-gpu-check and the backend report it).
struct MemoryAccount {
  uint64_t total_bytes = 0;        // the runtime's total
  uint64_t free_before_bytes = 0;  // free right before acquisition (this process's context exists)
  uint64_t acquired_bytes = 0;     // the pieces
  uint64_t pieces = 0, largest_piece_bytes = 0, smallest_piece_bytes = 0;
  uint64_t free_after_bytes = 0;  // free right after: the reserve left to the runtime and the side scratch
  // total - free_before: this process's runtime context (kernel images, stacks, heaps) plus any
  // other process's memory; the runtime does not split them (nvidia-smi does, per process).
  uint64_t context_and_others_bytes = 0;
  // free_before - free_after - acquired: what the allocations cost beyond their sizes (rounding,
  // the runtime's lazy allocations).
  int64_t acquisition_overhead_bytes = 0;
  bool all_pieces_device_memory = true;  // the runtime said device memory, not managed, for every piece
  bool compression_checked = false;      // the runtime could say whether a piece was compressible
  std::string memory_kind;               // what the runtime said of the first piece
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
  uint64_t free_before_bytes() const { return account_.free_before_bytes; }
  uint64_t free_after_bytes() const { return account_.free_after_bytes; }
  const MemoryAccount& memory_account() const { return account_; }
  // Where the last completed fill put each label.
  const LabelLayout& layout() const { return layout_; }
  const SlotMap& slot_map() const { return map_; }
  // Device memory outside the proof held now for the fill: the side scratch during Fill, else 0
  // (after a fill the lookup's placement tables stay: lookup_tables_bytes()).
  uint64_t scratch_bytes() const { return scratch_now_.load(); }

  // Labels `spec` into slots 0 .. spec.count-1 (label g in the slot layout() names).
  // Errors: INVALID_ARGUMENT (bad spec, or more labels than capacity), FAILED_PRECONDITION
  // (released, a started lookup not finished, or cancelled: the region then holds a partial fill
  // and Lookup refuses),
  // RESOURCE_EXHAUSTED (no room for the side scratch), INTERNAL (device error).
  Status Fill(const RegionSpec& spec, const FillTuning& tuning = {}, const FillControl& control = {},
              FillStats* stats = nullptr);

  // The plan a Fill of `spec` would run (fill_plan.h), laid out in the side scratch it wants at
  // device address 0: nothing is allocated, uploaded or launched. Its stats hold what a fill would
  // report before running (its launch_log: every launch as planned, labels_done counted). For the
  // device model and for inspection. Errors: as Fill's before it runs.
  StatusOr<FillPlan> Plan(const RegionSpec& spec, const FillTuning& tuning = {}) const;

  // Copies the labels of `n` global indices to out (32 bytes each, in request order).
  // Errors: FAILED_PRECONDITION before a successful Fill or after Release; INVALID_ARGUMENT naming
  // the first index outside the filled range.
  Status Lookup(const uint64_t* global_indices, size_t n, uint8_t* out) const;
  // The same in two steps, so that several devices' lookups run at once: StartLookup checks the
  // indices and launches the lookup kernel (n <= kLookupBatch; a larger n is looked up at once);
  // FinishLookup waits for it and copies the labels to `out`, which must stay valid until then.
  // One lookup at a time: StartLookup or Lookup while one is started and not finished is
  // FAILED_PRECONDITION. FinishLookup with none started is OK; after Release() ended a started
  // lookup it is FAILED_PRECONDITION (`out` was not written).
  Status StartLookup(const uint64_t* global_indices, size_t n, uint8_t* out) const;
  Status FinishLookup() const;

  // Where one Lookup's time went, in microseconds of the host clock (for gpu-check).
  struct LookupParts {
    double stage_us = 0;     // index checks, the halves' places, the addresses into the pinned buffer
    double device_us = 0;    // kernel launch and wait
    double copy_out_us = 0;  // the labels out of the pinned buffer
  };
  // How a lookup runs: who places the halves (the host, or the kernel from the device's copy of the
  // tables) and the kernel's shape (1 or 8 threads a label).
  struct LookupMode {
    bool places_on_device = false;
    uint32_t threads_per_label = 1;
  };
  // The mode Lookup and StartLookup use (the options', once a fill put the tables on the device).
  LookupMode lookup_mode() const;
  // Device memory the placement tables hold after a fill (0: none; the host places the halves):
  // with the pinned lookup buffer, the only memory outside the label slots between fills.
  uint64_t lookup_tables_bytes() const { return places_bytes_; }
  // Lookup in a given mode, timed in parts (n <= kLookupBatch). Errors: as Lookup's;
  // INVALID_ARGUMENT for another shape or n; FAILED_PRECONDITION for device placement when the
  // tables are not on the device.
  Status LookupInParts(const uint64_t* global_indices, size_t n, LookupMode mode, uint8_t* out,
                       LookupParts* parts) const;

  // Frees everything; idempotent.
  void Release();

 private:
  DeviceRegion(GpuRuntime* runtime, int ordinal) : runtime_(runtime), ordinal_(ordinal) {}
  // The fill: the device for the planner, BudgetFill, the side scratch, PlanFill, then the plan run.
  Status PlanAndRun(const RegionSpec& spec, const FillTuning& tuning, const FillControl& control, FillStats* stats);
  StatusOr<FillDevice> PlanningDevice(const RegionSpec& spec, const FillTuning& tuning) const;
  Status Upload(const FillPlan& plan);
  Status RunLaunch(const FillPlan& plan, size_t w, LaunchStats* stats);
  // Devices whose driver kills long kernels: the raw compression rate, to size launches.
  Status MeasureRateIfTimeLimited();
  // REQUIRES: lookup_mu_ held. Checks the indices against the filled range and writes their half
  // addresses into the pinned lookup buffer (n <= kLookupBatch); then runs or launches the kernel.
  Status StageLookupLocked(const uint64_t* global_indices, size_t n, LookupMode mode) const;
  Status LookupLocked(const uint64_t* global_indices, size_t n, uint8_t* out) const;
  LookupArgs LookupArgsFor(size_t n, LookupMode mode) const;
  // The placement tables over this object's layout and slot map (host memory).
  LabelPlaces HostPlaces() const;
  // After a fill: the tables into device memory (places_dev_), when the options ask for it and
  // the memory can be had (RESOURCE_EXHAUSTED leaves the host placing); other errors are returned.
  Status UploadPlaces();
  void FreePlaces();

  GpuRuntime* runtime_;
  int ordinal_;
  GpuDeviceProps props_;
  std::vector<DeviceAllocation> pieces_;
  SlotMap map_;
  void* lookup_host_ = nullptr;    // pinned: 2 * kLookupBatch half addresses, then kLookupBatch labels
  void* lookup_device_ = nullptr;  // the same memory, as the device sees it
  void* lookup_queue_ = nullptr;   // GpuRuntime::CreateLookupQueue: this region's lookups
  uint32_t lookup_threads_per_label_ = kLookupThreadsPerLabelDefault;
  bool lookup_places_on_device_ = true;  // the option; places_dev_ says whether it happened
  void* places_dev_ = nullptr;           // device memory: the placement tables, after a fill
  uint64_t places_bytes_ = 0;            // its size
  LabelPlaces device_places_;            // pointers into places_dev_
  MemoryAccount account_;
  double raw_rate_ = 0;  // compressions per second; measured only where kernels are time-limited
  LabelLayout layout_;
  std::atomic<uint64_t> scratch_now_{0};
  bool released_ = false;
  void* adopted_host_ = nullptr;  // AdoptHostMemory: the registered host range (pieces_ aliases it)
  bool filled_ = false;
  uint64_t filled_first_ = 0, filled_count_ = 0;
  mutable std::mutex lookup_mu_;
  mutable uint8_t* started_out_ = nullptr;  // guarded by lookup_mu_: the started lookup's destination
  mutable size_t started_n_ = 0;            // guarded by lookup_mu_
  mutable bool abandoned_lookup_ = false;   // guarded by lookup_mu_: Release() ended a started lookup
};

}  // namespace gpu
}  // namespace wipeproof
