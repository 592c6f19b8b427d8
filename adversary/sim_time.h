// Simulated time of the cheating agent (cheating_agent.h): what each step costs (SimTiming) and the
// clock it is charged to (AgentClock). With a FakeClock the agent charges it for what it would take;
// without one (an agent served over TCP) nothing is charged and time is the system clock's.
//
// Thread-safety: on the agent's event-loop thread.
#pragma once

#include <cstdint>

#include "common/clock.h"

namespace wipeproof::adversary {

struct SimTiming {
  int64_t fill_us = 1'000'000;  // charged once per fill
  int64_t round_us = 2;         // charged per round (honest link + lookup)
  // Recompute (1a): depth(m) * c_node * t_min per batch of recompute_cores chunks, picoseconds.
  uint64_t recompute_chunk_ps = 0;
  uint32_t recompute_cores = 64;
};

// The agent's clock: the simulated one when given, else the system clock.
class AgentClock {
 public:
  explicit AgentClock(FakeClock* sim) : sim_(sim) {}

  // Moves the simulated clock forward by `micros` (> 0); nothing without one.
  void Charge(int64_t micros) {
    if (sim_ != nullptr && micros > 0) sim_->Advance(micros);
  }
  int64_t MonotonicUs() const { return sim_ != nullptr ? sim_->MonotonicMicros() : SystemClock().MonotonicMicros(); }
  int64_t UnixUs() const { return sim_ != nullptr ? sim_->UnixMicros() : SystemClock().UnixMicros(); }

 private:
  FakeClock* sim_;
};

}  // namespace wipeproof::adversary
