#include "challenger/fleet/proven_capacity.h"

#include <algorithm>
#include <limits>

namespace wipeproof {

namespace {

// a + b for a wall-clock time and a duration, clamped to int64_t (a forged or absurd duration
// cannot wrap a window around).
int64_t After(int64_t a, uint64_t b) {
  const uint64_t room = static_cast<uint64_t>(std::numeric_limits<int64_t>::max() - std::max<int64_t>(a, 0));
  return a + static_cast<int64_t>(std::min(b, room));
}

}  // namespace

uint64_t ProvenCapacity::ProvenOccupiedUs() const {
  const uint64_t length = static_cast<uint64_t>(window_to_unix_us - window_from_unix_us);
  return length - std::min(length, window_unproven_us);
}

ProvenCapacity ProvenCapacityOf(proto::Verdict::Reader v) {
  ProvenCapacity p;
  const int64_t sent = v.getOrderSentAtUnixUs();
  if (sent <= 0 || !v.getPass()) return p;
  if (v.hasOccupancy() && v.getOccupancy().getStated()) {
    auto o = v.getOccupancy();
    if (o.getWindowEndAfterOrderUs() > o.getWindowStartAfterOrderUs()) {
      p.window_from_unix_us = After(sent, o.getWindowStartAfterOrderUs());
      p.window_to_unix_us = After(sent, o.getWindowEndAfterOrderUs());
      p.window_unproven_us = std::min<uint64_t>(o.getShortUs(), p.window_to_unix_us - p.window_from_unix_us);
    }
  }
  if (v.hasCompute() && v.getCompute().getStated()) {
    auto c = v.getCompute();
    p.compute_us = c.getMinComputeUs();
    p.compute_from_unix_us = sent;
    p.compute_to_unix_us = After(sent, c.getIntervalUs());
  }
  return p;
}

uint64_t ProvenOccupiedUsWithin(const ProvenCapacity& p, int64_t from_unix_us, int64_t to_unix_us) {
  const int64_t from = std::max(from_unix_us, p.window_from_unix_us);
  const int64_t to = std::min(to_unix_us, p.window_to_unix_us);
  if (to <= from) return 0;
  const uint64_t overlap = static_cast<uint64_t>(to - from);
  return overlap - std::min(overlap, p.window_unproven_us);
}

uint64_t ProvenComputeUsWithin(const ProvenCapacity& p, int64_t from_unix_us, int64_t to_unix_us) {
  if (p.compute_us == 0 || p.compute_from_unix_us < from_unix_us || p.compute_to_unix_us > to_unix_us) return 0;
  return p.compute_us;
}

}  // namespace wipeproof
