#include "challenger/session/round_planner.h"

namespace wipeproof {

PlannedRound PlanNextRound(const RoundPlanInput& in) {
  const std::vector<DeviceRounds>& devices = *in.devices;
  bool proof_left = false, just_noticed = false, any_noticed = false;
  for (const DeviceRounds& d : devices) {
    proof_left = proof_left || d.proof_sent < in.proof_batches;
    if (!d.noticed) continue;
    any_noticed = true;
    just_noticed = just_noticed || !d.probed;
  }
  PlannedRound round;
  if (!any_noticed) return round;
  if (in.occupancy_open) {
    if (!in.gap_elapsed) return round;
    round.occupancy = true;
    for (size_t d = 0; d < devices.size(); ++d) {
      if (devices[d].occupancy_sent >= in.occupancy_batches) {
        round.parts.clear();
        round.occupancy_used_up = true;
        return round;
      }
      round.parts.emplace_back(d, in.proof_batches + in.holding_batches + devices[d].occupancy_sent);
    }
    return round;
  }
  round.proof = in.closing && proof_left;
  if (!round.proof) {
    if (in.closing && in.wave_done) return round;          // nothing left to do
    if (!just_noticed && !in.gap_elapsed) return round;  // a holding round waits for its gap
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    const DeviceRounds& device = devices[d];
    if (!device.noticed) continue;
    if (round.proof) {
      // Every device at full q_d, together: the rounds the bound counts.
      if (device.proof_sent < in.proof_batches) round.parts.emplace_back(d, device.proof_sent);
      continue;
    }
    // A notice round carries only the devices just noticed (the others keep their pool).
    if (just_noticed && device.probed) continue;
    if (device.holding_sent < in.holding_batches && device.has_holding) {
      round.parts.emplace_back(d, in.proof_batches + device.holding_sent);
    }
  }
  round.mark_probed = round.proof || just_noticed;
  round.holding_used_up = round.parts.empty() && !just_noticed;
  return round;
}

void ApplyPlannedRound(const PlannedRound& round, uint32_t proof_batches, uint32_t holding_batches,
                       std::vector<DeviceRounds>* devices) {
  if (round.mark_probed) {
    for (DeviceRounds& d : *devices) d.probed = d.probed || d.noticed;
  }
  for (const auto& [d, batch] : round.parts) {
    DeviceRounds& device = (*devices)[d];
    if (batch < proof_batches) {
      device.proof_sent = batch + 1;
    } else if (batch >= proof_batches + holding_batches) {
      device.occupancy_sent = batch - proof_batches - holding_batches + 1;
    } else {
      device.holding_sent = batch - proof_batches + 1;
    }
  }
}

}  // namespace wipeproof
