// The node-signed FillReport the agent returns from startSession (wipe.capnp FillReport):
// orderDigest = BLAKE2b-256 of the order payload, one DeviceFill per planned device in the order's
// order, and the agent's own timings (informational: the challenger times the fill itself).
//
// Per device: labelCount and bytesHeld are what was filled (always the plan: the agent refuses
// rather than fill short, device_fill.h); reserveBytes = totalBytes - bytesHeld (the part of the
// device the agent left out); bytesHeldByOthers as the runtime reported when the order arrived.
//
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "proto/node_messages.h"
#include "proto/signing.h"
#include "prover/agent/device_fill.h"

namespace wipeproof {

// What the report (and the device's DeviceFillNotice) says of one filled slot.
proto::DeviceFillFacts DeviceFillFactsOf(const DeviceSlot& slot);

// REQUIRES: every slot is filled; slots are in plan order.
StatusOr<proto::SignedEnvelope> SignFillReport(proto::ByteView order_payload, proto::ByteView session_id,
                                               const std::vector<std::unique_ptr<DeviceSlot>>& slots,
                                               uint64_t fill_micros, int64_t now_unix_us,
                                               const proto::KeyPair& node_key);

}  // namespace wipeproof
