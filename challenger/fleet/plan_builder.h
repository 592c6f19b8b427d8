// Building a node's session plan (challenger/session/session_plan.h) from the inventory and a
// parameter profile.
//
// Per device of the node, in inventory order:
//   labelCount = floor((capacity - allowed reserve) / 32), rounded down to whole chunks of m
//     (always whole chunks: mandatory for posedb-blake3-192, and for c1 it keeps every challenged
//      chunk a full graph);
//   ranges laid end to end from global label 0, so they are chunk-aligned and disjoint;
//   labelsPerRound = min(q for the device's model, the device's chunks).
// Session id (16 B) and seed (32 B) come fresh from libsodium's CSPRNG. The order is valid from
// issue for profile.order_ttl_us. Fill deadline: FillDeadlineUs(profile, largest device bytes).
//
// Thread-safety: pure functions apart from the CSPRNG.
#pragma once

#include <cstdint>
#include <string>

#include "challenger/fleet/inventory.h"
#include "challenger/parameters/parameter_profile.h"
#include "challenger/session/session_plan.h"
#include "common/clock.h"
#include "common/status.h"

namespace wipeproof {

// The context of a lone `wipe --node=NAME` session: the wave is whole only if it is this node alone.
WaveContext LoneSessionWaveContext(const Inventory& inventory, const std::string& node);


// Builds the plan for `node` with fresh session id and seed; issued now by `clock`'s wall clock.
// Errors: NOT_FOUND (unknown node, model without reserve), INVALID_ARGUMENT (profile invalid, a
// device whose capacity minus reserve holds no whole chunk, naming node and device; a derived fill
// deadline over kMaxDeadlineUs; more than kMaxLabelsPerRound labels per round over the node's
// devices, or more than kMaxLabelsPerSession over the session).
StatusOr<SessionPlan> BuildPlan(const Inventory& inventory, const std::string& node, const Profile& profile,
                                const WaveContext& wave, const Clock& clock);

}  // namespace wipeproof
