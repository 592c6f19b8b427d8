// What one verdict proves of a node's capacity over time, on the challenger's wall clock, for
// `status` (fleet_status.h) and the metrics of `serve` (fleet_metrics.h): the time its occupancy
// statement proves the planned memory held (the window less the T* + U it leaves open) and the
// least compute time its compute statement proves the fill took. Only stated statements count.
//
// A window's unproven T* + U may lie anywhere in it (possibly in many short stretches), so the time
// proven inside a span of the wall clock is the window's overlap with the span less all of T* + U
// (ProvenOccupiedUsWithin); a fill's least compute time lies somewhere between its order and its
// last proof round, so a span counts it only when it covers that whole interval.
//
// Units: Unix microseconds, microseconds. Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "proto/wipe.capnp.h"

namespace wipeproof {

struct ProvenCapacity {
  // The stated occupancy window on the wall clock (orderSentAtUnixUs + its start and end after the
  // order); from == to: none stated.
  int64_t window_from_unix_us = 0;
  int64_t window_to_unix_us = 0;
  uint64_t window_unproven_us = 0;  // T* + U (shortUs), at most the window's length
  // The stated compute statement's least compute time (minComputeUs; 0: none stated) and its
  // interval, the order to the last proof round's answer.
  uint64_t compute_us = 0;
  int64_t compute_from_unix_us = 0;
  int64_t compute_to_unix_us = 0;

  // The window's length less T* + U: the time the statement proves the memory held.
  uint64_t ProvenOccupiedUs() const;
};

// From a verdict (any: one that states neither gives zeros; a verdict without orderSentAtUnixUs,
// which places nothing on the wall clock, too).
ProvenCapacity ProvenCapacityOf(proto::Verdict::Reader verdict);

// The time `p` proves the memory held inside [from_unix_us, to_unix_us): the overlap less all of T* + U.
uint64_t ProvenOccupiedUsWithin(const ProvenCapacity& p, int64_t from_unix_us, int64_t to_unix_us);
// `p`'s least compute time when [from_unix_us, to_unix_us) covers its whole interval, else 0.
uint64_t ProvenComputeUsWithin(const ProvenCapacity& p, int64_t from_unix_us, int64_t to_unix_us);

}  // namespace wipeproof
