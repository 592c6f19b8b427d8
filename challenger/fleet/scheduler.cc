#include "challenger/fleet/scheduler.h"

#include <cassert>
#include <cmath>

#include "challenger/session/challenges.h"

namespace wipeproof {

namespace {

uint64_t Micros(double seconds) { return static_cast<uint64_t>(std::llround(seconds * 1e6)); }

}  // namespace

uint64_t FirstWaveDelayUs(double period_s) {
  assert(period_s > 0);
  return UniformBelow(Micros(period_s) + 1);
}

uint64_t NextWaveDelayUs(double period_s, double jitter_s) {
  assert(jitter_s >= 0 && jitter_s <= period_s);
  const uint64_t base = Micros(period_s) - Micros(jitter_s);
  return base + UniformBelow(2 * Micros(jitter_s) + 1);
}

uint64_t PrepareStartDelayUs(uint64_t delay_us, uint64_t precompute_estimate_us) {
  // No product that can overflow: an estimate above delay / 2 leads by the whole delay.
  const uint64_t lead =
      precompute_estimate_us > delay_us / kPrepareLeadFactor ? delay_us : precompute_estimate_us * kPrepareLeadFactor;
  return delay_us - lead;
}

}  // namespace wipeproof
