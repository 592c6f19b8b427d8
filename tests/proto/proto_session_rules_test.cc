// The session rules (proto/session_rules.h) on hand-built messages: each rule holds on a message
// that follows it and names what broke it on each kind of message that does not.
#include "proto/session_rules.h"

#include <capnp/message.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "proto/label_wire.h"

namespace wipeproof::proto {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kM = 16;


// An order of two devices: GPU-a, labels [0, 64), q = 2; host, labels [64, 96), q = 1.
struct Order {
  capnp::MallocMessageBuilder message;
  Bytes session = Bytes(kSessionIdBytes, 0x51);
  Bytes node_key_id = Bytes(kKeyIdBytes, 0x4b);
  Digest digest{};

  Order() {
    digest.fill(0xd1);
    auto o = message.initRoot<WipeOrder>();
    o.setSessionId(proto::AsView(session));
    o.setNodeKeyId(proto::AsView(node_key_id));
    o.setChunkLabels(kM);
    auto devices = o.initDevices(2);
    devices[0].setSelector("GPU-a");
    devices[0].setFirstLabel(0);
    devices[0].setLabelCount(4 * kM);
    devices[0].setLabelsPerRound(2);
    devices[0].setCapacityBytes(4 * kM * 32 + 100);
    devices[0].setAllowedReserveBytes(100);
    devices[1].setSelector("host");
    devices[1].setFirstLabel(4 * kM);
    devices[1].setLabelCount(2 * kM);
    devices[1].setLabelsPerRound(1);
  }
  WipeOrder::Reader root() { return message.getRoot<WipeOrder>().asReader(); }
};

// A round over (device, label indices) pairs.
struct Round {
  capnp::MallocMessageBuilder message;
  Round(const Bytes& session, uint32_t index, const std::vector<std::pair<uint16_t, std::vector<uint64_t>>>& parts) {
    auto r = message.initRoot<ChallengeRound>();
    r.setSessionId(proto::AsView(session));
    r.setRoundIndex(index);
    auto devices = r.initDevices(static_cast<unsigned>(parts.size()));
    for (unsigned i = 0; i < parts.size(); ++i) {
      devices[i].setDeviceIndex(parts[i].first);
      auto list = devices[i].initLabelIndices(static_cast<unsigned>(parts[i].second.size()));
      for (unsigned k = 0; k < parts[i].second.size(); ++k) list.set(k, parts[i].second[k]);
    }
  }
  ChallengeRound::Reader root() { return message.getRoot<ChallengeRound>().asReader(); }
};

TEST(SessionRulesTest, ARoundFitsItsOrderOnlyInsideThePlannedRanges) {
  Order order;
  std::vector<ChallengedLabel> labels;
  Round ok(order.session, 0, {{1, {64, 95}}, {0, {3}}});
  ASSERT_TRUE(CheckRoundFitsOrder(order.root(), ok.root(), &labels).ok());
  ASSERT_EQ(labels.size(), 3u);
  EXPECT_EQ(labels[0].device, 1);
  EXPECT_EQ(labels[0].label, 64u);
  EXPECT_EQ(labels[2].device, 0);
  EXPECT_EQ(labels[2].label, 3u);

  auto broken = [&](std::vector<std::pair<uint16_t, std::vector<uint64_t>>> parts) {
    Round round(order.session, 0, parts);
    const Status s = CheckRoundFitsOrder(order.root(), round.root());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    return s.message();
  };
  EXPECT_EQ(broken({{0, {1}}, {2, {1}}}), "devices[1]: device index 2 out of range (the plan has 2)");
  EXPECT_EQ(broken({{0, {1}}, {0, {2}}}), "device index 0 challenged twice");
  EXPECT_EQ(broken({{1, {63}}}), "device 'host': label index 63 is outside its range [64, 96)");
  EXPECT_EQ(broken({{1, {96}}}), "device 'host': label index 96 is outside its range [64, 96)");
}

TEST(SessionRulesTest, AProofRoundCarriesEveryDeviceAtItsLabelsPerRound) {
  Order order;
  Round proof(order.session, 0, {{1, {70}}, {0, {1, 17}}});
  EXPECT_TRUE(IsProofRound(order.root(), proof.root()));
  Round one_device(order.session, 0, {{0, {1, 17}}});
  EXPECT_FALSE(IsProofRound(order.root(), one_device.root()));
  Round holding(order.session, 0, {{0, {1}}, {1, {70}}});  // GPU-a at q/8 = 1 of its 2
  EXPECT_FALSE(IsProofRound(order.root(), holding.root()));
}

TEST(SessionRulesTest, AnAnswerFitsItsRoundBySessionIndexAndSize) {
  Order order;
  Round round(order.session, 3, {{0, {1, 17}}, {1, {70}}});
  auto answer = [&](const Bytes& session, uint32_t index, size_t label_bytes) {
    capnp::MallocMessageBuilder m;
    auto a = m.initRoot<RoundAnswer>();
    a.setSessionId(proto::AsView(session));
    a.setRoundIndex(index);
    a.initLabels(static_cast<unsigned>(label_bytes));
    return CheckAnswerFitsRound(round.root(), a.asReader());
  };
  EXPECT_TRUE(answer(order.session, 3, 3 * kLabelBytes).ok());
  EXPECT_EQ(answer(Bytes(kSessionIdBytes, 0x52), 3, 96).message(), "session id differs from the order's");
  EXPECT_EQ(answer(order.session, 4, 96).message(), "answers round 4, expected 3");
  EXPECT_EQ(answer(order.session, 3, 64).message(), "64 label bytes, expected 96");
  EXPECT_EQ(answer(Bytes(3, 0x51), 3, 96).code(), StatusCode::kInvalidArgument);  // a 3-byte session id: shape
}

// A notice or report builder bound to the order, with one thing changed by `edit`.
template <typename T>
struct FillMessage {
  capnp::MallocMessageBuilder message;
  typename T::Builder root = message.initRoot<T>();
  explicit FillMessage(Order& order) {
    root.setSessionId(proto::AsView(order.session));
    root.setOrderDigest(capnp::Data::Reader(order.digest.data(), order.digest.size()));
    root.setNodeKeyId(proto::AsView(order.node_key_id));
  }
};

void SetFill(DeviceFill::Builder fill, DevicePlan::Reader plan) {
  fill.setSelector(plan.getSelector());
  fill.setFirstLabel(plan.getFirstLabel());
  fill.setLabelCount(plan.getLabelCount());
  fill.setBytesHeld(plan.getLabelCount() * kLabelBytes);
}

TEST(SessionRulesTest, AFillNoticeNamesItsOrderAndAPlannedDevice) {
  Order order;
  auto notice = [&](uint16_t index, const std::function<void(DeviceFillNotice::Builder)>& edit) {
    FillMessage<DeviceFillNotice> n(order);
    n.root.setDeviceIndex(index);
    if (index < 2) SetFill(n.root.initFill(), order.root().getDevices()[index]);
    if (edit) edit(n.root);
    return std::make_pair(CheckNoticeFitsOrder(order.root(), order.digest, n.root.asReader(), 1),
                          CheckNoticeFitsOrder(order.root(), order.digest, n.root.asReader()));
  };
  EXPECT_TRUE(notice(1, {}).first.ok());
  EXPECT_TRUE(notice(1, {}).second.ok());
  EXPECT_EQ(notice(1, [](auto n) { n.setSessionId(proto::AsView(Bytes(kSessionIdBytes, 0))); }).second.message(),
            "session id differs from the order's");
  EXPECT_THAT(notice(1, [](auto n) { n.setOrderDigest(proto::AsView(Bytes(32, 0))); }).second.message(),
              HasSubstr("is not the digest of the order sent (d1d1"));
  EXPECT_THAT(notice(1, [](auto n) { n.setNodeKeyId(proto::AsView(Bytes(kKeyIdBytes, 0))); }).second.message(),
              HasSubstr("nodeKeyId 0000000000000000 is not the node key the order names (4b4b"));
  // Device 0's notice where device 1's was asked; fine on its own.
  EXPECT_EQ(notice(0, {}).first.message(),
            "notice for device 0 (GPU-a at label 0) where device 1 (host at label 64) was asked");
  EXPECT_TRUE(notice(0, {}).second.ok());
  EXPECT_EQ(notice(1, [](auto n) { n.getFill().setSelector("GPU-b"); }).second.message(),
            "notice for device 1 (GPU-b at label 64), where the order plans device 1 as host at label 64");
  EXPECT_EQ(notice(5, [](auto n) { n.initFill().setSelector("x"); }).second.message(),
            "notice for device 5 (x at label 0): the order plans 2 devices");
}

TEST(SessionRulesTest, AFillReportNamesItsOrderAndEveryPlannedDeviceInOrder) {
  Order order;
  auto report = [&](const std::function<void(FillReport::Builder)>& edit) {
    FillMessage<FillReport> r(order);
    auto devices = r.root.initDevices(2);
    for (unsigned d = 0; d < 2; ++d) SetFill(devices[d], order.root().getDevices()[d]);
    if (edit) edit(r.root);
    return CheckReportFitsOrder(order.root(), order.digest, r.root.asReader());
  };
  EXPECT_TRUE(report({}).ok());
  EXPECT_EQ(report([](auto r) { r.initDevices(1); }).message(), "1 devices, the order planned 2");
  EXPECT_EQ(report([](auto r) { r.getDevices()[1].setFirstLabel(65); }).message(),
            "devices[1] is host at label 65, the order planned host at label 64");
  EXPECT_THAT(report([](auto r) { r.setOrderDigest(proto::AsView(Bytes(32, 7))); }).message(),
              HasSubstr("is not the digest of the order sent"));
}

TEST(SessionRulesTest, AFillHoldsItsPlanOnlyWithEveryLabelAndByte) {
  Order order;
  const DevicePlan::Reader plan = order.root().getDevices()[0];
  capnp::MallocMessageBuilder m;
  auto fill = m.initRoot<DeviceFill>();
  SetFill(fill, plan);
  EXPECT_TRUE(CheckFillHoldsPlan(plan, fill.asReader()).ok());
  fill.setBytesHeld(fill.getBytesHeld() - 1);
  fill.setBytesHeldByOthers(4096);
  fill.setNote("held\x1b[31m by the driver");
  EXPECT_EQ(CheckFillHoldsPlan(plan, fill.asReader()).message(),
            "holds 2047 bytes (64 labels), needs 2048 = capacity 2148 - allowed reserve 100 rounded down to whole "
            "chunks; other processes hold 4096 bytes; agent's note: held\\x1b[31m by the driver");
  SetFill(fill, plan);
  fill.setLabelCount(63);
  EXPECT_FALSE(CheckFillHoldsPlan(plan, fill.asReader()).ok());
}

// N_d: distinct chunks of the proof rounds among the leading rounds right and in time.
TEST(SessionRulesTest, ChunksCheckedCountsDistinctChunksOfLeadingGoodProofRounds) {
  Order order;
  Round proof0(order.session, 0, {{0, {1, 17}}, {1, {64}}});   // chunks 0, 1 | 4
  Round holding(order.session, 1, {{0, {33}}});                 // chunk 2: not a proof round
  Round proof1(order.session, 2, {{0, {2, 49}}, {1, {90}}});   // chunks 0, 3 | 5
  Round proof2(order.session, 3, {{0, {40, 60}}, {1, {70}}});  // after a late round: not counted
  std::vector<AnsweredRound> rounds = {
      {proof0.root(), true, true}, {holding.root(), true, true}, {proof1.root(), true, true}};
  EXPECT_EQ(ChunksChecked(order.root(), rounds), (std::vector<uint64_t>{3, 2}));
  rounds.push_back({proof2.root(), true, false});
  EXPECT_EQ(ChunksChecked(order.root(), rounds), (std::vector<uint64_t>{3, 2}));
  rounds[1].all_correct = false;  // a wrong holding round ends the count too
  EXPECT_EQ(ChunksChecked(order.root(), rounds), (std::vector<uint64_t>{2, 1}));
  EXPECT_EQ(ChunksChecked(order.root(), {}), (std::vector<uint64_t>{0, 0}));
}

}  // namespace
}  // namespace wipeproof::proto
