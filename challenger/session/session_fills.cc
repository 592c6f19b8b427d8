#include "challenger/session/session_fills.h"

#include <algorithm>
#include <string>
#include <utility>

namespace wipeproof {

using proto::FailureReason;

SessionFills::SessionFills(const SessionFacts& facts, proto::TranscriptHasher* transcript)
    : facts_(facts), transcript_(transcript), devices_(facts.plan->devices.size()) {}

SessionFailure SessionFills::AcceptNotice(size_t d, proto::Envelope::Reader wire, uint64_t fill_us) {
  NoticeCheck check = CheckNotice(wire, facts_, d, fill_us);
  if (check.failure.failed()) return std::move(check.failure);
  auto fail = [&](FailureReason reason, const std::string& text) {
    SessionFailure f = SessionFailure::Of(reason, "fill notice: " + text);
    f.device = facts_.plan->devices[d].selector;
    return f;
  };
  DeviceFills& device = devices_[d];
  if (device.notice) return fail(FailureReason::PROTOCOL_ERROR, "a second notice for the device");
  // A notice after the report repeats what the report said of the device (one before it is
  // compared when the report arrives).
  const proto::DeviceFill::Reader got = check.notice->root().getFill();
  if (report_.report && !report_.failure.failed()) {
    const proto::DeviceFill::Reader reported = report_.report->root().getDevices()[static_cast<unsigned>(d)];
    if (reported.getLabelCount() != got.getLabelCount() || reported.getBytesHeld() != got.getBytesHeld()) {
      return fail(FailureReason::PROTOCOL_ERROR, "differs from what the fill report said of the device");
    }
  }
  Status hashed = transcript_->AddNotice(static_cast<uint16_t>(d), proto::AsView(check.envelope->payload));
  if (!hashed.ok()) return fail(FailureReason::INTERNAL, "transcript: " + hashed.ToString());
  device.notice = std::move(check.envelope);
  device.fill = std::move(check.notice);
  device.noticed_after_us = fill_us;
  return SessionFailure();
}

SessionFailure SessionFills::AcceptReport(const proto::SignedEnvelope& envelope, uint64_t fill_us) {
  report_ = CheckReport(envelope, facts_);
  if (report_.failure.failed()) return report_.failure;
  // The report repeats what each device's notice said (notices still to come are compared on arrival).
  auto reported = report_.report->root().getDevices();
  for (unsigned i = 0; i < reported.size(); ++i) {
    if (!devices_[i].fill) continue;
    const proto::DeviceFill::Reader noticed = devices_[i].fill->root().getFill();
    if (noticed.getLabelCount() != reported[i].getLabelCount() ||
        noticed.getBytesHeld() != reported[i].getBytesHeld()) {
      return SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "fill report: devices[" + std::to_string(i) +
                                                                    "] differs from that device's fill notice");
    }
  }
  report_verified_ = true;
  const uint64_t deadline = facts_.plan->fill_deadline_us;
  if (fill_us > deadline) {
    return SessionFailure::Of(FailureReason::LATE_FILL, "fill took " + std::to_string(fill_us) + " us, deadline " +
                                                            std::to_string(deadline) + " us");
  }
  Status hashed = transcript_->AddReport(proto::AsView(envelope.payload));
  if (!hashed.ok()) return SessionFailure::Of(FailureReason::INTERNAL, "transcript: " + hashed.ToString());
  return SessionFailure();
}

bool SessionFills::AllNoticed() const {
  return std::all_of(devices_.begin(), devices_.end(), [](const DeviceFills& d) { return d.notice.has_value(); });
}

std::optional<proto::DeviceFill::Reader> SessionFills::FillOf(size_t d) const {
  if (devices_[d].fill) return devices_[d].fill->root().getFill();
  if (report_.report) return report_.report->root().getDevices()[static_cast<unsigned>(d)];
  return std::nullopt;
}

std::vector<proto::SignedEnvelope> SessionFills::Notices() const {
  std::vector<proto::SignedEnvelope> out;
  for (const DeviceFills& d : devices_) {
    if (d.notice) out.push_back(*d.notice);
  }
  return out;
}

}  // namespace wipeproof
