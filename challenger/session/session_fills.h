// What a node said of its fill in one session (session_runner.h step 3): each device's signed
// fill notice and the fill report, each checked when it arrives (session_checks.h) and against the
// others (a notice repeats what the report says of its device, whichever came first), then hashed
// into the session's transcript. One state per planned device.
//
// Thread-safety: used on the session's thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "challenger/session/session_checks.h"
#include "proto/transcript.h"

namespace wipeproof {

class SessionFills {
 public:
  // `facts` and `transcript` must outlive this.
  SessionFills(const SessionFacts& facts, proto::TranscriptHasher* transcript);

  // Device d's notice, `fill_us` after the order. Returns the failure it earns; reason NONE when
  // it is accepted (the device may then be challenged).
  SessionFailure AcceptNotice(size_t d, proto::Envelope::Reader wire, uint64_t fill_us);
  // The fill report, `fill_us` after the order (also past the order's fill deadline: lateFill).
  SessionFailure AcceptReport(const proto::SignedEnvelope& envelope, uint64_t fill_us);
  // Device d's deviceFilled call failed; the report decides whether that ends the session.
  void NoticeFailed(size_t d, SessionFailure failure) { devices_[d].notice_failure = std::move(failure); }
  const std::optional<SessionFailure>& notice_failure(size_t d) const { return devices_[d].notice_failure; }

  bool noticed(size_t d) const { return devices_[d].notice.has_value(); }
  bool AllNoticed() const;
  // The report verified and matched the order, the plan and every notice so far.
  bool report_verified() const { return report_verified_; }
  // Order sent to device d's notice (microseconds on the session's clock); 0 when none.
  uint64_t noticed_after_us(size_t d) const { return devices_[d].noticed_after_us; }
  // Device d's fill as its notice says, else as the report says; none before either verified.
  std::optional<proto::DeviceFill::Reader> FillOf(size_t d) const;
  // The report as checked: recordable, its digest.
  const ReportCheck& report() const { return report_; }
  // The verified notices, in device order.
  std::vector<proto::SignedEnvelope> Notices() const;

 private:
  struct DeviceFills {
    std::optional<proto::SignedEnvelope> notice;               // verified, as received
    std::optional<proto::Held<proto::DeviceFillNotice>> fill;  // the same, parsed
    uint64_t noticed_after_us = 0;
    std::optional<SessionFailure> notice_failure;
  };

  const SessionFacts& facts_;
  proto::TranscriptHasher* transcript_;
  std::vector<DeviceFills> devices_;
  ReportCheck report_;
  bool report_verified_ = false;
};

}  // namespace wipeproof
