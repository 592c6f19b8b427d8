// Taking and filling the memory of every planned device of a session, all devices at once: one
// thread per device acquires its memory; when every device holds its memory, one thread per
// device fills it (the host labeler's own workers split the cores). Progress is visible in each
// slot's `labels_filled` while it runs.
//
// Shortfall policy: a device that cannot hold all its planned labels fails the whole fill with
// RESOURCE_EXHAUSTED "device 'SEL' short of capacity: ..." (device_match.h); the agent never fills
// part of a device and reports it short. The challenger fails such a session either way, and a
// refusal says why at once instead of after a fill.
//
// Thread-safety: AcquireAndFill runs on the caller's thread plus its own workers; while it runs,
// other threads may read DeviceSlot::labels_filled / bytes_acquired and set *cancel, nothing else.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "prover/agent/device_match.h"
#include "prover/backends/backend.h"

namespace wipeproof {

// Acquisition granule (bytes): label bytes are rounded up to it, a multiple of every common page size.
inline constexpr uint64_t kAcquireGranuleBytes = uint64_t{64} << 10;

struct DeviceSlot {
  explicit DeviceSlot(MatchedDevice p) : plan(std::move(p)) {}
  const MatchedDevice plan;
  std::unique_ptr<DeviceMemory> memory;     // set once acquired; released on any failure
  std::atomic<uint64_t> labels_filled{0};   // labels written so far
  std::atomic<uint64_t> bytes_acquired{0};  // bytes of device memory `memory` holds (0 once released)
  uint64_t fill_micros = 0;                 // microseconds: acquire + fill, agent monotonic clock
};

struct FillSettings {
  RegionSpec session;                   // format, seed, m; first/count are taken from each slot
  int host_threads = 0;                 // host labeler threads; 0 = hardware threads minus one per GPU slot
  std::atomic<bool>* cancel = nullptr;  // required: set by others to stop; set here when a device fails
  const Clock* clock = nullptr;         // required: for fill_micros
  // Called from the device's fill thread as soon as slot `i` holds all its labels (fill_micros
  // set), while other devices may still fill: the agent signs that device's fill notice then.
  std::function<void(size_t i)> on_filled;
};

// Acquires and fills every slot. OK: every slot holds its labels. Otherwise the first error in slot
// order is returned, naming the device, and the caller releases the slots (ReleaseSlots) under the
// lock that also guards lookups: a slot reported filled may be answering rounds meanwhile:
//   RESOURCE_EXHAUSTED (short of capacity), FAILED_PRECONDITION "cancelled" (when *cancel was set
//   by someone else), or the backend's error with "device 'SEL': " in front.
Status AcquireAndFill(const std::vector<std::unique_ptr<DeviceSlot>>& slots, const FillSettings& settings);

// Releases every slot's memory (idempotent). Returns the bytes that were held.
uint64_t ReleaseSlots(const std::vector<std::unique_ptr<DeviceSlot>>& slots);

}  // namespace wipeproof
