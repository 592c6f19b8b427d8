#include "challenger/session/failure.h"

#include <capnp/schema.h>

#include "common/hex.h"

namespace wipeproof {

std::string FailureReasonName(proto::FailureReason reason) {
  auto enumerants = capnp::Schema::from<proto::FailureReason>().getEnumerants();
  const auto index = static_cast<uint16_t>(reason);
  if (index < enumerants.size()) return enumerants[index].getProto().getName().cStr();
  return "reason(" + std::to_string(index) + ")";
}

void SessionFailure::WriteTo(proto::Failure::Builder out) const {
  out.setReason(reason);
  out.setText(text);
  out.setDevice(device);
  out.setRoundIndex(round);
  out.setLabelIndex(label_index);
  out.setExpected(capnp::Data::Reader(expected.data(), expected.size()));
  out.setReceived(capnp::Data::Reader(received.data(), received.size()));
}

std::string SessionFailure::Describe() const {
  std::string s = FailureReasonName(reason);
  std::string where;
  auto add = [&where](const std::string& part) { where += (where.empty() ? "" : ", ") + part; };
  if (!device.empty()) add("device " + device);
  if (has_round) add("round " + std::to_string(round));
  if (has_label) add("label " + std::to_string(label_index));
  if (!where.empty()) s += ": " + where;
  if (!expected.empty() || !received.empty()) {
    s += ": expected " + HexEncode(expected) + ", received " + HexEncode(received);
  }
  if (!text.empty()) s += ": " + text;
  return s;
}

}  // namespace wipeproof
