// When waves run (`wipeproof-challenger serve`): each wave on its own period with random jitter
// from libsodium's CSPRNG, so a node cannot predict its next wipe and prepare for it.
//
//   first run:  uniform in [0, period]                     (no fixed phase after a restart)
//   next run:   period - jitter + uniform in [0, 2*jitter] after the previous run ended
// With jitter = period the gap is uniform in [0, 2*period]; operators choose jitter near the
// period where unpredictability matters more than regularity (docs/operations.md "Waves").
// Draws are at microsecond resolution.
//
// Thread-safety: pure functions apart from the CSPRNG.
#pragma once

#include <cstdint>

namespace wipeproof {

// REQUIRES: period_s > 0. Microseconds.
uint64_t FirstWaveDelayUs(double period_s);
// REQUIRES: 0 <= jitter_s <= period_s. Microseconds.
uint64_t NextWaveDelayUs(double period_s, double jitter_s);

}  // namespace wipeproof
