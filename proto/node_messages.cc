#include "proto/node_messages.h"

#include <capnp/message.h>

#include "proto/wipe.capnp.h"

namespace wipeproof::proto {

namespace {

void WriteDeviceFill(const DeviceFillFacts& f, DeviceFill::Builder d) {
  d.setSelector(f.selector);
  d.setFirstLabel(f.first_label);
  d.setLabelCount(f.label_count);
  d.setBytesHeld(f.bytes_held);
  d.setReserveBytes(f.reserve_bytes);
  d.setBytesHeldByOthers(f.bytes_held_by_others);
  d.setTotalBytes(f.total_bytes);
  d.setFillMicros(f.fill_micros);
  if (!f.note.empty()) d.setNote(f.note);
}

}  // namespace

StatusOr<SignedEnvelope> SignDeviceFillNotice(ByteView order_payload, ByteView session_id, uint16_t device_index,
                                              const DeviceFillFacts& device, int64_t finished_at_unix_us,
                                              const KeyPair& node_key) {
  capnp::MallocMessageBuilder message;
  auto notice = message.initRoot<DeviceFillNotice>();
  notice.setSessionId(session_id);
  const Digest order_digest = Blake2b256(order_payload);
  notice.setOrderDigest(AsView(order_digest));
  const KeyId key_id = KeyIdOf(node_key.public_key);
  notice.setNodeKeyId(AsView(key_id));
  notice.setDeviceIndex(device_index);
  WriteDeviceFill(device, notice.initFill());
  notice.setFinishedAtUnixUs(finished_at_unix_us);
  return SignMessage(notice.asReader(), node_key);
}

StatusOr<SignedEnvelope> SignFillReport(ByteView order_payload, ByteView session_id,
                                        const std::vector<DeviceFillFacts>& devices, uint64_t fill_micros,
                                        int64_t finished_at_unix_us, const KeyPair& node_key) {
  capnp::MallocMessageBuilder message;
  auto report = message.initRoot<FillReport>();
  report.setSessionId(session_id);
  const Digest order_digest = Blake2b256(order_payload);
  report.setOrderDigest(AsView(order_digest));
  const KeyId key_id = KeyIdOf(node_key.public_key);
  report.setNodeKeyId(AsView(key_id));
  auto list = report.initDevices(static_cast<unsigned>(devices.size()));
  for (size_t i = 0; i < devices.size(); ++i) WriteDeviceFill(devices[i], list[static_cast<unsigned>(i)]);
  report.setFillMicros(fill_micros);
  report.setFinishedAtUnixUs(finished_at_unix_us);
  return SignMessage(report.asReader(), node_key);
}

StatusOr<SignedEnvelope> SignTranscriptDigest(ByteView session_id, const Digest& transcript_digest,
                                              uint32_t round_count, ByteView verdict_payload, int64_t signed_at_unix_us,
                                              const KeyPair& node_key) {
  capnp::MallocMessageBuilder message;
  auto t = message.initRoot<TranscriptDigest>();
  t.setSessionId(session_id);
  t.setDigest(AsView(transcript_digest));
  t.setRoundCount(round_count);
  const Digest verdict_digest = Blake2b256(verdict_payload);
  t.setVerdictDigest(AsView(verdict_digest));
  const KeyId key_id = KeyIdOf(node_key.public_key);
  t.setNodeKeyId(AsView(key_id));
  t.setSignedAtUnixUs(signed_at_unix_us);
  return SignMessage(t.asReader(), node_key);
}

}  // namespace wipeproof::proto
