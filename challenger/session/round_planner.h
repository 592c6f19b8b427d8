// Which round a session sends next (session_runner.h step 4; the rule itself: docs/protocol.md
// "Proof rounds and holding rounds"), as a pure function of where each device and the session
// stand, so the rule is tested without an event loop or an agent.
//
//   - No device noticed yet: nothing to send.
//   - A proof round once the session is *closing* (this node's report and every notice verified,
//     every member of its wave filled) while a device still has proof batches left: every noticed
//     device's next proof batch, together.
//   - Otherwise a holding round, unless the session is closing and its wave is done (nothing left
//     to do): at once when a device was noticed since the last round (it is probed in the turn its
//     notice verified, alone with the other devices just noticed), else once the random gap since
//     the last answer has passed; each device that still has holding batches contributes its next.
//   - While the session's occupancy window is open (its proof rounds passed, the window not over:
//     occupancy_bound.h), only occupancy rounds, each once the gap since the last answer has passed:
//     every device's next occupancy batch, together; none when a device has none left (the pool is
//     used up, which ends the window early).
//   - Devices noticed by now count as probed once a proof round or a notice round is planned, even
//     when no batch was left to send.
// A planned round with no part is not sent; when no device was just noticed that means the holding
// pool is used up (logged once by the runner) while the node or its wave still fills or proves.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace wipeproof {

// One device's rounds so far.
struct DeviceRounds {
  bool noticed = false;          // its fill notice verified
  bool probed = false;           // in a round planned since its notice
  bool has_holding = false;      // its holding batches are not empty (hold_labels > 0)
  uint32_t proof_sent = 0;       // proof batches sent: the next one's index
  uint32_t holding_sent = 0;     // holding batches sent
  uint32_t occupancy_sent = 0;   // occupancy batches sent
};

struct RoundPlanInput {
  const std::vector<DeviceRounds>* devices = nullptr;
  uint32_t proof_batches = 0;    // R, per device
  uint32_t holding_batches = 0;  // per device
  bool closing = false;          // report and every notice verified, every wave member filled
  bool wave_done = false;        // every member of the wave reported its proof rounds
  bool gap_elapsed = false;      // the random gap since the last answer has passed
  uint32_t occupancy_batches = 0;  // per device
  bool occupancy_open = false;     // the occupancy window is open (proof rounds passed, not over)
};

struct PlannedRound {
  bool proof = false;
  bool occupancy = false;
  // (device, batch) in the round's order; batch indices count proof batches first, then holding,
  // then occupancy.
  std::vector<std::pair<size_t, uint32_t>> parts;
  bool mark_probed = false;          // every noticed device is probed from now on
  bool holding_used_up = false;      // nothing to send although a holding round was due
  bool occupancy_used_up = false;    // nothing to send although an occupancy round was due
};

// The round due now, or none: an empty `parts` means nothing is sent (see the file comment).
PlannedRound PlanNextRound(const RoundPlanInput& in);

// Records `round` as planned (and, when it has parts, sent) in `devices`.
void ApplyPlannedRound(const PlannedRound& round, uint32_t proof_batches, uint32_t holding_batches,
                       std::vector<DeviceRounds>* devices);

}  // namespace wipeproof
