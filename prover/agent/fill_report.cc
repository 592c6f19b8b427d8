#include "prover/agent/fill_report.h"

#include <capnp/message.h>

namespace wipeproof {

StatusOr<proto::SignedEnvelope> SignFillReport(proto::ByteView order_payload, proto::ByteView session_id,
                                               const std::vector<std::unique_ptr<DeviceSlot>>& slots,
                                               uint64_t fill_micros, int64_t now_unix_us,
                                               const proto::KeyPair& node_key) {
  capnp::MallocMessageBuilder message;
  auto report = message.initRoot<proto::FillReport>();
  report.setSessionId(session_id);
  const proto::Digest order_digest = proto::Blake2b256(order_payload);
  report.setOrderDigest(proto::AsView(order_digest));
  const proto::KeyId key_id = proto::KeyIdOf(node_key.public_key);
  report.setNodeKeyId(proto::AsView(key_id));
  auto devices = report.initDevices(static_cast<unsigned>(slots.size()));
  for (size_t i = 0; i < slots.size(); ++i) {
    const DeviceSlot& slot = *slots[i];
    const MatchedDevice& p = slot.plan;
    auto d = devices[static_cast<unsigned>(i)];
    d.setSelector(p.selector);
    d.setFirstLabel(p.first_label);
    d.setLabelCount(p.label_count);
    d.setBytesHeld(p.label_bytes);
    d.setReserveBytes(p.info.total_bytes > p.label_bytes ? p.info.total_bytes - p.label_bytes : 0);
    d.setBytesHeldByOthers(p.info.held_by_others_bytes);
    d.setTotalBytes(p.info.total_bytes);
    d.setFillMicros(slot.fill_micros);
  }
  report.setFillMicros(fill_micros);
  report.setFinishedAtUnixUs(now_unix_us);
  return proto::SignMessage(report.asReader(), node_key);
}

}  // namespace wipeproof
