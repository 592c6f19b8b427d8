#include "prover/agent/fill_report.h"

namespace wipeproof {

proto::DeviceFillFacts DeviceFillFactsOf(const DeviceSlot& slot) {
  const MatchedDevice& p = slot.plan;
  proto::DeviceFillFacts d;
  d.selector = p.selector;
  d.first_label = p.first_label;
  d.label_count = p.label_count;
  d.bytes_held = p.label_bytes;
  d.reserve_bytes = p.info.total_bytes > p.label_bytes ? p.info.total_bytes - p.label_bytes : 0;
  d.bytes_held_by_others = p.info.held_by_others_bytes;
  d.total_bytes = p.info.total_bytes;
  d.fill_micros = slot.fill_micros;
  return d;
}

StatusOr<proto::SignedEnvelope> SignFillReport(proto::ByteView order_payload, proto::ByteView session_id,
                                               const std::vector<std::unique_ptr<DeviceSlot>>& slots,
                                               uint64_t fill_micros, int64_t now_unix_us,
                                               const proto::KeyPair& node_key) {
  std::vector<proto::DeviceFillFacts> devices;
  devices.reserve(slots.size());
  for (const auto& slot : slots) devices.push_back(DeviceFillFactsOf(*slot));
  return proto::SignFillReport(order_payload, session_id, devices, fill_micros, now_unix_us, node_key);
}

}  // namespace wipeproof
