// The selftest's wave of two (adversary 10, adversary/scenarios.h ScenarioSetting::kWaveOfTwo): the
// scenario's agent is node-a; node-b is an honest neighbour that is still filling when node-a drops
// its labels (its fill report is held until node-a's Deviation::on_drop, the moment a shell-game
// node frees memory for the neighbour's checkpoint; released anyway once node-a's session ended).
// Both sessions run through the real SessionRunner in step (wave_sync.h), each on its own thread
// with its own kj event loop, in-memory pipe and simulated clock (the wave orders events, not
// clocks), planned as `serve` plans a wave (fleet/wave_run.h PlanWave); the wave's verdict is signed
// as RunPreparedWave signs it.
//
// Thread-safety: starts and joins its two threads; call from a thread without a kj event loop or
// from one that has one (each member makes its own on its own thread).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "adversary/cheating_agent.h"
#include "challenger/fleet/inventory.h"
#include "challenger/parameters/parameter_profile.h"
#include "challenger/session/session_runner.h"
#include "common/status.h"
#include "proto/signing.h"

namespace wipeproof::selftest {

struct WaveOfTwoRun {
  SessionOutcome a, b;                      // node-a (the scenario's agent), node-b (the honest neighbour)
  bool wave_pass = false;                   // the signed wave verdict verifies and says pass
  bool neighbour_released_by_drop = false;  // node-b's fill was released by node-a's drop
  adversary::AgentLog seen_b;               // node-b's agent (node-a's: WaveOfTwoSetup::agent_a.log)
};

struct WaveOfTwoSetup {
  Inventory inventory;  // nodes a and b, one complete wave {a, b} (inventory.waves[0])
  Profile profile;
  SessionKeys keys;
  proto::KeyPair node_a, node_b;
  adversary::CheatingAgentOptions agent_a;  // its deviation's on_drop is chained, not replaced
  adversary::SimTiming timing_b;
  uint64_t rng_seed_b = 1;
  int threads = 1;  // expected-label threads per session
};

// One run of the wave. Errors: as SessionRunner::Run for either member (no session happened), or
// INVALID_ARGUMENT when the inventory's first wave is not two planned nodes.
StatusOr<WaveOfTwoRun> RunWaveOfTwo(WaveOfTwoSetup setup);

}  // namespace wipeproof::selftest
