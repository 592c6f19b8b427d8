#include "proto/session_rules.h"

#include <cstring>
#include <set>
#include <string>
#include <string_view>

#include "common/hex.h"
#include "common/peer_text.h"
#include "proto/label_wire.h"
#include "proto/validate.h"

namespace wipeproof::proto {
namespace {

template <size_t N>
bool Same(capnp::Data::Reader data, const std::array<uint8_t, N>& want) {
  return data.size() == N && std::memcmp(data.begin(), want.data(), N) == 0;
}
bool Same(capnp::Data::Reader a, capnp::Data::Reader b) {
  return a.size() == b.size() && std::memcmp(a.begin(), b.begin(), a.size()) == 0;
}

std::string Text(capnp::Text::Reader text) { return PeerText(std::string_view(text.begin(), text.size())); }
std::string PeerDataHex(capnp::Data::Reader data) { return PeerHex(data.begin(), data.size()); }

// "SEL at label F": a device as a fill names it.
std::string Where(capnp::Text::Reader selector, uint64_t first_label) {
  return Text(selector) + " at label " + std::to_string(first_label);
}

// The binding every node-signed fill message carries: session, order digest, node key id.
Status CheckBinding(WipeOrder::Reader order, const Digest& order_digest, capnp::Data::Reader session_id,
                    capnp::Data::Reader digest, capnp::Data::Reader node_key_id) {
  if (!Same(session_id, order.getSessionId())) return InvalidArgumentError("session id differs from the order's");
  if (!Same(digest, order_digest)) {
    return InvalidArgumentError("orderDigest " + PeerDataHex(digest) + " is not the digest of the order sent (" +
                                HexEncode(order_digest.data(), order_digest.size()) + ")");
  }
  if (!Same(node_key_id, order.getNodeKeyId())) {
    return InvalidArgumentError("nodeKeyId " + PeerDataHex(node_key_id) + " is not the node key the order names (" +
                                PeerDataHex(order.getNodeKeyId()) + ")");
  }
  return Status::Ok();
}

bool FillIsOf(DeviceFill::Reader fill, DevicePlan::Reader plan) {
  return fill.getSelector() == plan.getSelector() && fill.getFirstLabel() == plan.getFirstLabel();
}

}  // namespace

Status CheckRoundFitsOrder(WipeOrder::Reader order, ChallengeRound::Reader round, std::vector<ChallengedLabel>* labels) {
  auto plans = order.getDevices();
  auto devices = round.getDevices();
  std::vector<bool> seen(plans.size(), false);
  if (labels != nullptr) labels->clear();
  for (unsigned i = 0; i < devices.size(); ++i) {
    const uint16_t d = devices[i].getDeviceIndex();
    if (d >= plans.size()) {
      return InvalidArgumentError("devices[" + std::to_string(i) + "]: device index " + std::to_string(d) +
                                  " out of range (the plan has " + std::to_string(plans.size()) + ")");
    }
    if (seen[d]) return InvalidArgumentError("device index " + std::to_string(d) + " challenged twice");
    seen[d] = true;
    const DevicePlan::Reader plan = plans[d];
    const uint64_t first = plan.getFirstLabel(), count = plan.getLabelCount();
    for (uint64_t g : devices[i].getLabelIndices()) {
      if (g < first || g - first >= count) {
        return InvalidArgumentError("device '" + Text(plan.getSelector()) + "': label index " + std::to_string(g) +
                                    " is outside its range [" + std::to_string(first) + ", " +
                                    std::to_string(first + count) + ")");
      }
      if (labels != nullptr) labels->push_back({d, g});
    }
  }
  return Status::Ok();
}

bool IsProofRound(WipeOrder::Reader order, ChallengeRound::Reader round) {
  auto plans = order.getDevices();
  auto devices = round.getDevices();
  if (devices.size() != plans.size()) return false;
  for (auto device : devices) {
    const uint16_t d = device.getDeviceIndex();
    if (d >= plans.size() || device.getLabelIndices().size() != plans[d].getLabelsPerRound()) return false;
  }
  return true;  // as many devices as planned, each planned and named once (CheckRoundFitsOrder)
}

bool IsOccupancyRound(WipeOrder::Reader order, ChallengeRound::Reader round) {
  if (order.getOccupancyWindowUs() == 0) return false;
  auto plans = order.getDevices();
  auto devices = round.getDevices();
  if (devices.size() != plans.size()) return false;
  for (auto device : devices) {
    const uint16_t d = device.getDeviceIndex();
    if (d >= plans.size() || device.getLabelIndices().size() != plans[d].getOccupancyLabels()) return false;
  }
  return true;
}

Status CheckAnswerFitsRound(ChallengeRound::Reader round, RoundAnswer::Reader answer) {
  Status shape = WalkMessage(answer);
  if (shape.ok()) shape = ValidateShape(answer);
  if (!shape.ok()) return InvalidArgumentError(PeerText(shape.message()));
  if (!Same(answer.getSessionId(), round.getSessionId())) {
    return InvalidArgumentError("session id differs from the order's");
  }
  if (answer.getRoundIndex() != round.getRoundIndex()) {
    return InvalidArgumentError("answers round " + std::to_string(answer.getRoundIndex()) + ", expected " +
                                std::to_string(round.getRoundIndex()));
  }
  uint64_t labels = 0;
  for (auto device : round.getDevices()) labels += device.getLabelIndices().size();
  const uint64_t want = labels * kLabelBytes;
  if (answer.getLabels().size() != want) {
    return InvalidArgumentError(std::to_string(answer.getLabels().size()) + " label bytes, expected " +
                                std::to_string(want));
  }
  return Status::Ok();
}

Status CheckNoticeFitsOrder(WipeOrder::Reader order, const Digest& order_digest, DeviceFillNotice::Reader notice,
                            std::optional<uint16_t> expected_device) {
  WP_RETURN_IF_ERROR(
      CheckBinding(order, order_digest, notice.getSessionId(), notice.getOrderDigest(), notice.getNodeKeyId()));
  auto plans = order.getDevices();
  const uint16_t d = notice.getDeviceIndex();
  const DeviceFill::Reader fill = notice.getFill();
  const std::string names =
      "notice for device " + std::to_string(d) + " (" + Where(fill.getSelector(), fill.getFirstLabel()) + ")";
  if (expected_device.has_value()) {
    const DevicePlan::Reader want = plans[*expected_device];
    if (d != *expected_device || !FillIsOf(fill, want)) {
      return InvalidArgumentError(names + " where device " + std::to_string(*expected_device) + " (" +
                                  Where(want.getSelector(), want.getFirstLabel()) + ") was asked");
    }
    return Status::Ok();
  }
  if (d >= plans.size()) {
    return InvalidArgumentError(names + ": the order plans " + std::to_string(plans.size()) + " devices");
  }
  if (!FillIsOf(fill, plans[d])) {
    return InvalidArgumentError(names + ", where the order plans device " + std::to_string(d) + " as " +
                                Where(plans[d].getSelector(), plans[d].getFirstLabel()));
  }
  return Status::Ok();
}

Status CheckReportFitsOrder(WipeOrder::Reader order, const Digest& order_digest, FillReport::Reader report) {
  WP_RETURN_IF_ERROR(
      CheckBinding(order, order_digest, report.getSessionId(), report.getOrderDigest(), report.getNodeKeyId()));
  auto plans = order.getDevices();
  auto fills = report.getDevices();
  if (fills.size() != plans.size()) {
    return InvalidArgumentError(std::to_string(fills.size()) + " devices, the order planned " +
                                std::to_string(plans.size()));
  }
  for (unsigned i = 0; i < fills.size(); ++i) {
    if (!FillIsOf(fills[i], plans[i])) {
      return InvalidArgumentError("devices[" + std::to_string(i) + "] is " +
                                  Where(fills[i].getSelector(), fills[i].getFirstLabel()) + ", the order planned " +
                                  Where(plans[i].getSelector(), plans[i].getFirstLabel()));
    }
  }
  return Status::Ok();
}

Status CheckFillHoldsPlan(DevicePlan::Reader plan, DeviceFill::Reader fill) {
  const uint64_t planned_bytes = plan.getLabelCount() * kLabelBytes;
  if (fill.getBytesHeld() >= planned_bytes && fill.getLabelCount() >= plan.getLabelCount()) return Status::Ok();
  return InvalidArgumentError(
      "holds " + std::to_string(fill.getBytesHeld()) + " bytes (" + std::to_string(fill.getLabelCount()) +
      " labels), needs " + std::to_string(planned_bytes) + " = capacity " + std::to_string(plan.getCapacityBytes()) +
      " - allowed reserve " + std::to_string(plan.getAllowedReserveBytes()) +
      " rounded down to whole chunks; other processes hold " + std::to_string(fill.getBytesHeldByOthers()) + " bytes" +
      (fill.getNote().size() > 0 ? "; agent's note: " + Text(fill.getNote()) : ""));
}

std::vector<uint64_t> ChunksChecked(WipeOrder::Reader order, const std::vector<AnsweredRound>& rounds) {
  const uint64_t m = order.getChunkLabels();
  std::vector<std::set<uint64_t>> chunks(order.getDevices().size());
  for (const AnsweredRound& r : rounds) {
    if (!r.all_correct || !r.in_time) break;
    if (!IsProofRound(order, r.round)) continue;
    for (auto device : r.round.getDevices()) {
      for (uint64_t g : device.getLabelIndices()) chunks[device.getDeviceIndex()].insert(g / m);
    }
  }
  std::vector<uint64_t> counts;
  for (const auto& c : chunks) counts.push_back(c.size());
  return counts;
}

}  // namespace wipeproof::proto
