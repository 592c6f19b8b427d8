// Faults in the fill's signed messages (the challenger's tests provoke these; no selftest scenario):
//   WithholdLastNotice (DeviationKind::kWithholdNotice): reports the fill but never answers
//     deviceFilled for its last device.
//   LateDifferingNotice (DeviationKind::kLateNoticeDiffers): answers deviceFilled for its last
//     device 200 ms (real time) after the report, with a notice claiming 32 bytes more than the
//     report says of that device.
//   TamperReport (DeviationKind::kTamperedReport): flips a payload byte of the signed fill report.
#pragma once

#include "adversary/cheats/cheat.h"

namespace wipeproof::adversary {

class WithholdLastNotice final : public Cheat {
 public:
  NoticeDelivery DeliverNotice(size_t device, size_t devices) override;
};

class LateDifferingNotice final : public Cheat {
 public:
  void OnNoticeFacts(size_t device, size_t devices, proto::DeviceFillFacts* facts) override;
  NoticeDelivery DeliverNotice(size_t device, size_t devices) override;
};

class TamperReport final : public Cheat {
 public:
  void OnReportSending(proto::SignedEnvelope* report) override;
};

}  // namespace wipeproof::adversary
