// The order's occupancy fields (proto/validate.h ValidateShape(WipeOrder)): each bound refused one
// step outside and accepted on it. (Cases first written by a reviewer against a clean clone.)
#include <capnp/message.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "proto/codec.h"
#include "proto/label_wire.h"
#include "proto/validate.h"

namespace wipeproof::proto {
namespace {

class OccupancyShapeTest : public ::testing::Test {
 protected:
  // m = 1024; host 4 chunks (q 4), GPU-1 2 chunks (q 2); a window of 60 s, mean gap 1 s, o = 3 and 1.
  void SetUp() override {
    WipeOrder::Builder o = message_->initRoot<WipeOrder>();
    const uint8_t session[kSessionIdBytes] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    const uint8_t key_id[kKeyIdBytes] = {}, seed[kSessionSeedBytes] = {};
    o.setProtocolVersion(PROTOCOL_VERSION);
    o.setSessionId(capnp::Data::Reader(session, sizeof(session)));
    o.setNodeKeyId(capnp::Data::Reader(key_id, sizeof(key_id)));
    o.setChallengerKeyId(capnp::Data::Reader(key_id, sizeof(key_id)));
    o.setSeed(capnp::Data::Reader(seed, sizeof(seed)));
    o.setIssuedAtUnixUs(1);
    o.setExpiresAtUnixUs(2);
    o.setChunkLabels(1024);
    o.setRoundDeadlineUs(500);
    o.setFillDeadlineUs(1'000'000);
    auto d = o.initDevices(2);
    d[0].setSelector("host");
    d[0].setLabelCount(4096);
    d[0].setLabelsPerRound(4);
    d[0].setFillDeadlineUs(1'000'000);
    d[1].setSelector("GPU-1");
    d[1].setFirstLabel(4096);
    d[1].setLabelCount(2048);
    d[1].setLabelsPerRound(2);
    d[1].setFillDeadlineUs(500'000);
    o.setOccupancyWindowUs(60'000'000);
    o.setOccupancyMeanGapUs(1'000'000);
    o.setOccupancyShortfallBytes(1000);
    d[0].setOccupancyLabels(3);
    d[1].setOccupancyLabels(1);
  }
  WipeOrder::Builder Order() { return message_->getRoot<WipeOrder>(); }
  std::string Check() {
    Status s = ValidateShape(Order().asReader());
    return s.ok() ? "OK" : s.message();
  }

  // Held by pointer: the builder's destructor may throw, a test fixture's may not.
  std::unique_ptr<capnp::MallocMessageBuilder> message_ = std::make_unique<capnp::MallocMessageBuilder>();
};

TEST_F(OccupancyShapeTest, AValidWindowPasses) { EXPECT_EQ(Check(), "OK"); }

TEST_F(OccupancyShapeTest, WindowAtMost31Days) {
  Order().setOccupancyWindowUs(kMaxOccupancyWindowUs + 1);
  EXPECT_EQ(Check(), "occupancyWindowUs 2678400000001 is above the most one order may ask, 2678400000000 (31 days)");
  Order().setOccupancyWindowUs(UINT64_MAX);
  EXPECT_NE(Check(), "OK");
  Order().setOccupancyWindowUs(kMaxOccupancyWindowUs);
  EXPECT_EQ(Check(), "OK");
}

TEST_F(OccupancyShapeTest, MeanGapWithinTheWindow) {
  Order().setOccupancyMeanGapUs(0);
  EXPECT_EQ(Check(), "occupancyMeanGapUs 0 is not in [1, occupancyWindowUs]");
  Order().setOccupancyMeanGapUs(60'000'001);
  EXPECT_EQ(Check(), "occupancyMeanGapUs 60000001 is not in [1, occupancyWindowUs]");
  Order().setOccupancyMeanGapUs(60'000'000);
  EXPECT_EQ(Check(), "OK");
}

TEST_F(OccupancyShapeTest, LabelsInOneToChunksAndNeverTheProofShape) {
  Order().getDevices()[0].setOccupancyLabels(4);  // = labelsPerRound
  EXPECT_EQ(Check(), "devices[0]: occupancyLabels 4 is not in [1, the 4 chunks of its range] or equals labelsPerRound");
  Order().getDevices()[0].setOccupancyLabels(3);
  Order().getDevices()[1].setOccupancyLabels(0);
  EXPECT_NE(Check(), "OK");
  Order().getDevices()[1].setOccupancyLabels(3);  // above its 2 chunks
  EXPECT_NE(Check(), "OK");
}

TEST_F(OccupancyShapeTest, NoOccupancyFieldWithoutAWindow) {
  Order().setOccupancyWindowUs(0);
  EXPECT_EQ(Check(), "occupancyMeanGapUs or occupancyShortfallBytes without an occupancyWindowUs");
  Order().setOccupancyMeanGapUs(0);
  Order().setOccupancyShortfallBytes(0);
  EXPECT_EQ(Check(), "devices[0]: occupancyLabels 3 without an occupancyWindowUs");
  Order().getDevices()[0].setOccupancyLabels(0);
  Order().getDevices()[1].setOccupancyLabels(0);
  EXPECT_EQ(Check(), "OK");
}

TEST_F(OccupancyShapeTest, ShortfallBelowThePlannedBytes) {
  Order().setOccupancyShortfallBytes(uint64_t{6144} * kLabelBytes);
  EXPECT_EQ(Check(), "occupancyShortfallBytes 196608 is not below the planned bytes");
  Order().setOccupancyShortfallBytes(UINT64_MAX);
  EXPECT_NE(Check(), "OK");
  Order().setOccupancyShortfallBytes(uint64_t{6144} * kLabelBytes - 1);
  EXPECT_EQ(Check(), "OK");
}

}  // namespace
}  // namespace wipeproof::proto
