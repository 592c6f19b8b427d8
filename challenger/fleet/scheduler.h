// When waves run (`wipeproof-challenger serve`): each wave on its own period with random jitter
// from libsodium's CSPRNG, so a node cannot predict its next wipe and prepare for it.
//
//   first run:  uniform in [0, period]                     (no fixed phase after a restart)
//   next run:   period - jitter + uniform in [0, 2*jitter] after the previous run ended
// With jitter = period the gap is uniform in [0, 2*period]; operators choose jitter near the
// period where unpredictability matters more than regularity (docs/operations.md "Waves").
// Draws are at microsecond resolution.
//
// A run's secrets (seeds, challenge indices, expected labels) are prepared no earlier than about
// twice their precompute time before the run (PrepareStartDelayUs), not when the wait for it
// begins: held for a whole period they would be there for the taking far longer than needed
// (threat-model.md T-PREPARED-SECRETS).
//
// Thread-safety: pure functions apart from the CSPRNG.
#pragma once

#include <cstdint>

namespace wipeproof {

// REQUIRES: period_s > 0. Microseconds.
uint64_t FirstWaveDelayUs(double period_s);
// REQUIRES: 0 <= jitter_s <= period_s. Microseconds.
uint64_t NextWaveDelayUs(double period_s, double jitter_s);

// How many preparation leads its run: twice the precompute time.
inline constexpr uint64_t kPrepareLeadFactor = 2;
// For a run `delay_us` from now whose preparation takes about `precompute_estimate_us` (the last
// run's, measured; before the first, estimated): how long from now to wait before preparing it,
// delay_us - 2 x precompute_estimate_us, or 0 (prepare now) when the lead is the whole delay or
// more. An estimate of 0 prepares at the run's time. Microseconds; no overflow.
uint64_t PrepareStartDelayUs(uint64_t delay_us, uint64_t precompute_estimate_us);

}  // namespace wipeproof
