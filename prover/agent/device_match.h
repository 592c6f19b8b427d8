// Matching a WipeOrder's plan to this node's devices: the plan must name exactly the devices the
// agent has (each once), and each device must be able to hold its planned labels.
//
// Errors (identity problems first, in plan order, then capacity):
//   NOT_FOUND          a selector this node has no device for ("devices[1]: this node has no device
//                      'GPU-..'; its devices: host, GPU-.."); a device whose backend is disabled
//                      counts as absent.
//   INVALID_ARGUMENT   a selector named twice; a device of this node the plan omits ("plan omits
//                      device 'host' (host memory ...) of this node").
//   RESOURCE_EXHAUSTED a device short of capacity: "device 'host' short of capacity: the plan needs
//                      N bytes (L labels), this agent can hold at most A bytes (<why>)". The
//                      message always starts "device '<selector>' short of capacity", so the
//                      challenger can name the device in its shortCapacity failure.
// A shortfall found later, when the memory is actually taken (device_fill.h), uses the same form.
//
// Thread-safety: pure functions (MatchOrderDevices calls BackendSet::Devices(), which is thread-safe).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/wipe.capnp.h"
#include "prover/backends/backend.h"
#include "prover/backends/backend_factory.h"

namespace wipeproof {

// Limits the agent puts on the "host" device on top of what the kernel says is available.
struct HostLimits {
  uint64_t budget_bytes = 0;   // 0: none
  uint64_t reserve_bytes = 0;  // left free out of MemAvailable
};

// One device of the order's plan, matched to its backend on this node (the challenger's view of
// the same device is challenger/session/session_plan.h PlannedDevice).
struct MatchedDevice {
  uint32_t plan_index = 0;     // index into WipeOrder.devices
  std::string selector;        // DevicePlan.selector == DeviceInfo.id
  Backend* backend = nullptr;  // not owned
  DeviceInfo info;             // as enumerated when the order arrived
  uint64_t first_label = 0;    // labels
  uint64_t label_count = 0;    // labels
  uint64_t label_bytes = 0;    // bytes: label_count * 32
};

// The bytes this agent can give device `info` for labels (bytes): available memory, less the
// host reserve and capped by the host budget for "host".
uint64_t UsableBytes(const DeviceInfo& info, const HostLimits& host);

// The message prefix of every shortfall refusal: "device 'SELECTOR' short of capacity".
std::string ShortOfCapacity(const std::string& selector);

StatusOr<std::vector<MatchedDevice>> MatchOrderDevices(proto::WipeOrder::Reader order, const BackendSet& backends,
                                                       const HostLimits& host);

}  // namespace wipeproof
