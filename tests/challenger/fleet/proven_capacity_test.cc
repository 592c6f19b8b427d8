// What a verdict proves of capacity over time (challenger/fleet/proven_capacity.h): a stated
// occupancy window less its T* + U, placed on the wall clock; within a span, the overlap less all
// of T* + U; a stated compute statement's least time only in a span that covers its interval;
// nothing from an unstated statement, a failed verdict or one without a wall-clock origin.
#include "challenger/fleet/proven_capacity.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>

namespace wipeproof {
namespace {

constexpr int64_t kSent = 1'800'000'000'000'000;  // Unix us

class ProvenCapacityTest : public ::testing::Test {
 protected:
  // A passing verdict sent at kSent with a stated window [start, end) after the order, T* + U
  // `short_us`, and a stated compute statement of `compute_us` over `interval_us`.
  proto::Verdict::Reader Verdict(uint64_t start, uint64_t end, uint64_t short_us, uint64_t compute_us,
                                 uint64_t interval_us) {
    auto v = message_.initRoot<proto::Verdict>();
    v.setPass(true);
    v.setOrderSentAtUnixUs(kSent);
    auto o = v.initOccupancy();
    o.setStated(true);
    o.setWindowStartAfterOrderUs(start);
    o.setWindowEndAfterOrderUs(end);
    o.setShortUs(short_us);
    auto c = v.initCompute();
    c.setStated(true);
    c.setMinComputeUs(compute_us);
    c.setIntervalUs(interval_us);
    return message_.getRoot<proto::Verdict>().asReader();
  }
  // Owned through a pointer: the builder's destructor may throw, which a test fixture's may not.
  std::unique_ptr<capnp::MallocMessageBuilder> owned_ = std::make_unique<capnp::MallocMessageBuilder>();
  capnp::MallocMessageBuilder& message_ = *owned_;
};

TEST_F(ProvenCapacityTest, AStatedWindowLessItsShortTimeOnTheWallClock) {
  const ProvenCapacity p = ProvenCapacityOf(Verdict(5'000'000, 105'000'000, 7'000'000, 2'000'000, 4'000'000));
  EXPECT_EQ(p.window_from_unix_us, kSent + 5'000'000);
  EXPECT_EQ(p.window_to_unix_us, kSent + 105'000'000);
  EXPECT_EQ(p.ProvenOccupiedUs(), 93'000'000u);
  // Whole window inside the span; the span's edge in the window (the short time counted in full
  // against the overlap, wherever it lay); the span after the window.
  EXPECT_EQ(ProvenOccupiedUsWithin(p, kSent, kSent + 200'000'000), 93'000'000u);
  EXPECT_EQ(ProvenOccupiedUsWithin(p, kSent + 95'000'000, kSent + 200'000'000), 3'000'000u);
  EXPECT_EQ(ProvenOccupiedUsWithin(p, kSent + 100'000'000, kSent + 200'000'000), 0u);
  EXPECT_EQ(ProvenOccupiedUsWithin(p, kSent + 105'000'000, kSent + 200'000'000), 0u);
  // Compute: only a span that covers the order to the last proof round.
  EXPECT_EQ(ProvenComputeUsWithin(p, kSent, kSent + 4'000'000), 2'000'000u);
  EXPECT_EQ(ProvenComputeUsWithin(p, kSent + 1, kSent + 200'000'000), 0u);
  EXPECT_EQ(ProvenComputeUsWithin(p, kSent, kSent + 3'999'999), 0u);
}

TEST_F(ProvenCapacityTest, NothingFromWhatIsNotStated) {
  auto v = message_.initRoot<proto::Verdict>();
  v.setPass(true);
  v.setOrderSentAtUnixUs(kSent);
  auto o = v.initOccupancy();
  o.setWindowStartAfterOrderUs(0);
  o.setWindowEndAfterOrderUs(100'000'000);  // a window that states nothing
  v.initCompute().setMinComputeUs(5);      // not stated
  ProvenCapacity p = ProvenCapacityOf(v.asReader());
  EXPECT_EQ(p.ProvenOccupiedUs(), 0u);
  EXPECT_EQ(ProvenOccupiedUsWithin(p, 0, std::numeric_limits<int64_t>::max()), 0u);
  EXPECT_EQ(p.compute_us, 0u);
  // A failed verdict, or one without the wall clock, proves nothing either.
  Verdict(0, 100'000'000, 1, 5, 10);
  auto failed = message_.getRoot<proto::Verdict>();
  failed.setPass(false);
  EXPECT_EQ(ProvenCapacityOf(failed.asReader()).ProvenOccupiedUs(), 0u);
  failed.setPass(true);
  failed.setOrderSentAtUnixUs(0);
  EXPECT_EQ(ProvenCapacityOf(failed.asReader()).ProvenOccupiedUs(), 0u);
  EXPECT_EQ(ProvenCapacityOf(failed.asReader()).compute_us, 0u);
}

TEST_F(ProvenCapacityTest, AShortTimeBeyondTheWindowAndAbsurdFiguresProveNothingAndDoNotWrap) {
  EXPECT_EQ(ProvenCapacityOf(Verdict(0, 10, 11, 0, 0)).ProvenOccupiedUs(), 0u);
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const ProvenCapacity p = ProvenCapacityOf(Verdict(max - 1, max, 0, 1, max));
  EXPECT_LE(p.window_from_unix_us, p.window_to_unix_us);
  EXPECT_GE(p.window_from_unix_us, kSent);
  EXPECT_EQ(p.ProvenOccupiedUs(), 0u);  // both ends clamped to the same instant
  EXPECT_EQ(p.compute_to_unix_us, std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace wipeproof
