// The one mapping between the wire (wipe.capnp) and the label engine (kernels/label_spec.h): label
// formats, and the labels an order asks of a device as the engine's RegionSpec. The agent (to
// fill), the challenger (to write orders and recompute expected labels) and the cheating agent all
// go through here, so a new format or field is mapped in one place.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>

#include "kernels/label_spec.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::proto {

// Byte sizes of the wire fields that carry label-spec values (label-spec.md §1).
inline constexpr size_t kLabelBytes = ::wipeproof::kLabelBytes;       // RoundAnswer.labels: per label
inline constexpr size_t kSessionSeedBytes = ::wipeproof::kSeedBytes;  // WipeOrder.seed

// The engine's format for a wire format (ValidateShape refuses any other value, so only c1 and 192
// reach here: anything else maps to c1).
::wipeproof::LabelFormat FormatFromWire(LabelFormat format);
LabelFormat FormatToWire(::wipeproof::LabelFormat format);

// The session's key material from a shape-valid order (format, seed, m); first and count are 0.
RegionSpec SessionRegion(WipeOrder::Reader order);
// The labels the order plans on `device` (one of order.devices): the session's key material with
// the device's firstLabel and labelCount.
RegionSpec DeviceRegion(WipeOrder::Reader order, DevicePlan::Reader device);

}  // namespace wipeproof::proto
