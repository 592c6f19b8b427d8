// Shape checks of received messages: the sizes of fixed-size fields and simple ranges that hold
// for every well-formed message, whatever the session. Semantic checks (does the plan match this
// node's devices, is a label right, is a round late) belong to the agent and the challenger.
//
// Each returns OK or INVALID_ARGUMENT naming the field, e.g. "sessionId: 15 bytes, want 16".
// ParseMessage<T> (proto/codec.h) calls them; call them directly only on readers that did not
// come through ParseMessage (RPC parameters), inside a try block or after proto::WalkMessage.
//
// Thread-safety: pure functions.
#pragma once

#include <capnp/any.h>
#include <capnp/schema.h>

#include "common/status.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::proto {

// The longest occupancy window one order may ask for: 31 days, microseconds.
inline constexpr uint64_t kMaxOccupancyWindowUs = uint64_t{31} * 86'400 * 1'000'000;

Status ValidateShape(WipeOrder::Reader order);  // version 2, 16/8/32-byte ids, challengerKeyId,
                                                // m in [1, 2^20], >= 1 device, labelCount > 0,
                                                // rounds 0 (undisclosed), each device's fill
                                                // deadline in [1, the order's]; an occupancy
                                                // window of at most kMaxOccupancyWindowUs with a
                                                // mean gap in [1, window], b below the planned
                                                // bytes, every device's occupancyLabels in [1,
                                                // its chunks] and != labelsPerRound (all 0
                                                // without a window)
Status ValidateShape(FillReport::Reader report);
Status ValidateShape(DeviceFillNotice::Reader notice);  // 16/32/8-byte ids
Status ValidateShape(Delegation::Reader delegation);  // 32-byte key, notAfter > notBefore, signed profiles
Status ValidateShape(WaveVerdict::Reader verdict);      // one session id, node name, verdict digest per member
Status ValidateShape(ChallengeRound::Reader round);
Status ValidateShape(RoundAnswer::Reader answer);  // labels a whole number of 32-byte labels
Status ValidateShape(TranscriptDigest::Reader transcript);
Status ValidateShape(Verdict::Reader verdict);
Status ValidateShape(Receipt::Reader receipt);
Status ValidateShape(LedgerEntry::Reader entry);
Status ValidateShape(RoundLog::Reader log);

// Reads every field of `root` (of struct type `schema`) once, recursively, so that any pointer of
// the wrong type or out of bounds raises here. Errors: INVALID_ARGUMENT with capnp's description.
// Use on RPC parameters (already bounded by RpcReaderOptions) before touching them.
Status WalkMessage(capnp::AnyStruct::Reader root, capnp::StructSchema schema);
template <typename Reader>
Status WalkMessage(Reader root) {
  return WalkMessage(capnp::AnyStruct::Reader(root), capnp::Schema::from<typename Reader::Reads>());
}

}  // namespace wipeproof::proto
