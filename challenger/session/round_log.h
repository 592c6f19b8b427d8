// The ledger's round log of a session (wipe.capnp RoundLog): every round's timing, and the round
// exactly as sent with the answer exactly as received (canonical bytes, as the transcript hashes
// them), so an auditor can re-check every challenged label against the seed in the order and
// recompute the node-signed transcript digest. A long session is split over several records, each
// under proto::kMaxRoundLogBytes; RoundLog.firstRound says where each starts.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "challenger/session/verdict.h"
#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof {

// One round's messages in canonical form. `answer` is empty when no usable answer arrived (none
// in time, or one that was not a well-formed RoundAnswer).
struct RoundExchange {
  proto::Bytes round;
  proto::Bytes answer;
};

// The RoundLog records (canonical bytes) for `rounds` and `exchanges` (same length, same order).
// An exchange whose answer alone would not fit a record is logged without its answer (the timing
// row still says what happened). Errors: INVALID_ARGUMENT when the lengths differ or a logged
// round does not parse as a ChallengeRound (a bug: the challenger built it).
StatusOr<std::vector<proto::Bytes>> BuildRoundLogs(const std::array<uint8_t, proto::kSessionIdBytes>& session_id,
                                                   const std::vector<RoundRecord>& rounds,
                                                   const std::vector<RoundExchange>& exchanges);

}  // namespace wipeproof
