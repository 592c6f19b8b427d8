#include "adversary/cheats/fill_message_faults.h"

#include "proto/label_wire.h"

namespace wipeproof::adversary {

NoticeDelivery WithholdLastNotice::DeliverNotice(size_t device, size_t devices) {
  NoticeDelivery delivery;
  delivery.never = device + 1 == devices;
  return delivery;
}

void LateDifferingNotice::OnNoticeFacts(size_t device, size_t devices, proto::DeviceFillFacts* facts) {
  if (device + 1 == devices) facts->bytes_held += proto::kLabelBytes;
}

NoticeDelivery LateDifferingNotice::DeliverNotice(size_t device, size_t devices) {
  NoticeDelivery delivery;
  if (device + 1 == devices) delivery.delay = 200 * kj::MILLISECONDS;
  return delivery;
}

void TamperReport::OnReportSending(proto::SignedEnvelope* report) {
  // Byte 8 is the low byte of fillMicros (first word of the data section): still a well-formed report.
  report->payload[8] ^= 1;
}

}  // namespace wipeproof::adversary
