#include "challenger/session/session_checks.h"

#include <cstring>

#include "common/hex.h"
#include "common/peer_text.h"
#include "proto/rpc_status.h"
#include "proto/session_rules.h"

namespace wipeproof {
namespace {

using proto::FailureReason;

template <size_t N>
bool SameBytes(capnp::Data::Reader data, const std::array<uint8_t, N>& want) {
  return data.size() == N && std::memcmp(data.begin(), want.data(), N) == 0;
}

std::string HexOf(capnp::Data::Reader data) { return PeerHex(data.begin(), data.size()); }

}  // namespace

SessionFailure SignatureFailure(const Status& signature, const std::string& what) {
  return SessionFailure::Of(signature.code() == StatusCode::kPermissionDenied ? FailureReason::BAD_SIGNATURE
                                                                              : FailureReason::PROTOCOL_ERROR,
                            what + ": " + PeerText(signature.message()));
}

SessionFailure FailureFromException(const kj::Exception& e, FailureReason remote_reason, const std::string& call) {
  const kj::StringPtr raw = e.getDescription();
  const std::string_view description(raw.begin(), raw.size());
  if (e.getType() == kj::Exception::Type::DISCONNECTED) {
    return SessionFailure::Of(FailureReason::DISCONNECTED, call + ": connection lost: " + PeerText(description));
  }
  if (description.find(proto::kStatusExceptionPrefix) != std::string_view::npos) {
    const Status status = proto::ExceptionToStatus(e);
    // An order refused as busy is the agent's typed refusal (StatusCode kBusy), never a reading of its text.
    const FailureReason reason =
        remote_reason == FailureReason::ORDER_REFUSED && status.code() == StatusCode::kBusy ? FailureReason::NODE_BUSY
                                                                                            : remote_reason;
    return SessionFailure::Of(reason, call + ": " + PeerText(status.ToString()));
  }
  return SessionFailure::Of(FailureReason::PROTOCOL_ERROR, call + ": " + PeerText(description));
}

SessionFailure FailureFromUnexpected(const char* where, std::string_view what) {
  return SessionFailure::Of(FailureReason::INTERNAL,
                            std::string("challenger: unexpected error ") + where + ": " + PeerText(what));
}

NoticeCheck CheckNotice(proto::Envelope::Reader wire, const SessionFacts& s, size_t d, uint64_t fill_us) {
  NoticeCheck out;
  const PlannedDevice& want = s.plan->devices[d];
  auto fail = [&](FailureReason reason, const std::string& text) {
    out.failure = SessionFailure::Of(reason, "fill notice: " + text);
    out.failure.device = want.selector;
    return std::move(out);
  };
  auto envelope = proto::DecodeEnvelope(wire);
  if (!envelope.ok()) return fail(FailureReason::PROTOCOL_ERROR, PeerText(envelope.status().ToString()));
  Status signature = proto::VerifySignature(*envelope, proto::MessageKind::DEVICE_FILL_NOTICE, s.plan->node_key);
  if (!signature.ok()) {
    out.failure = SignatureFailure(signature, "fill notice");
    out.failure.device = want.selector;
    return out;
  }
  auto parsed = proto::ParseMessage<proto::DeviceFillNotice>(proto::AsView(envelope->payload));
  if (!parsed.ok()) return fail(FailureReason::PROTOCOL_ERROR, PeerText(parsed.status().message()));
  proto::DeviceFillNotice::Reader notice = parsed->root();
  Status fits = proto::CheckNoticeFitsOrder(s.order, s.order_digest, notice, static_cast<uint16_t>(d));
  if (!fits.ok()) return fail(FailureReason::PROTOCOL_ERROR, fits.message());
  proto::DeviceFill::Reader got = notice.getFill();
  // Short of capacity minus reserve (as planned: rounded down to whole chunks), whatever the reason.
  Status holds = proto::CheckFillHoldsPlan(s.order.getDevices()[static_cast<unsigned>(d)], got);
  if (!holds.ok()) return fail(FailureReason::SHORT_CAPACITY, holds.message());
  if (fill_us > want.fill_deadline_us) {
    return fail(FailureReason::LATE_FILL, "device filled after " + std::to_string(fill_us) + " us, deadline " +
                                              std::to_string(want.fill_deadline_us) + " us");
  }
  out.envelope = *std::move(envelope);
  out.notice.emplace(*parsed);
  return out;
}

ReportCheck CheckReport(const proto::SignedEnvelope& envelope, const SessionFacts& s) {
  ReportCheck out;
  const proto::Digest digest = proto::Blake2b256(proto::AsView(envelope.payload));
  if (envelope.kind == proto::MessageKind::FILL_REPORT) {
    auto readable = proto::ParseMessage<proto::FillReport>(proto::AsView(envelope.payload));
    out.recordable = readable.ok() && SameBytes(readable->root().getSessionId(), s.plan->session_id);
    // The receipt and verdict state the digest of every report the ledger records, verified or not.
    if (out.recordable) out.digest = digest;
  }
  Status signature = proto::VerifySignature(envelope, proto::MessageKind::FILL_REPORT, s.plan->node_key);
  if (!signature.ok()) {
    out.failure = SignatureFailure(signature, "fill report");
    return out;
  }
  auto parsed = proto::ParseMessage<proto::FillReport>(proto::AsView(envelope.payload));
  if (!parsed.ok()) {
    out.failure =
        SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "fill report: " + PeerText(parsed.status().message()));
    return out;
  }
  out.digest = digest;
  proto::FillReport::Reader report = parsed->root();
  Status fits = proto::CheckReportFitsOrder(s.order, s.order_digest, report);
  if (!fits.ok()) {
    out.failure = SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "fill report: " + fits.message());
    return out;
  }
  out.report.emplace(*parsed);
  // Short of capacity minus reserve (as planned: rounded down to whole chunks), whatever the reason.
  auto devices = report.getDevices();
  for (unsigned i = 0; i < devices.size(); ++i) {
    Status holds = proto::CheckFillHoldsPlan(s.order.getDevices()[i], devices[i]);
    if (!holds.ok()) {
      out.failure = SessionFailure::Of(FailureReason::SHORT_CAPACITY, holds.message());
      out.failure.device = s.plan->devices[i].selector;
      return out;
    }
  }
  return out;
}

TranscriptCheck CheckTranscript(const proto::SignedEnvelope& envelope, const SessionFacts& s,
                                const proto::Digest& digest, uint32_t rounds, const proto::Digest& verdict_digest) {
  TranscriptCheck out;
  const SessionPlan& plan = *s.plan;
  if (envelope.kind == proto::MessageKind::TRANSCRIPT_DIGEST) {
    auto readable = proto::ParseMessage<proto::TranscriptDigest>(proto::AsView(envelope.payload));
    out.recordable = readable.ok() && SameBytes(readable->root().getSessionId(), plan.session_id);
  }
  Status signature = proto::VerifySignature(envelope, proto::MessageKind::TRANSCRIPT_DIGEST, plan.node_key);
  if (!signature.ok()) {
    out.failure = SignatureFailure(signature, "transcript");
    return out;
  }
  auto parsed = proto::ParseMessage<proto::TranscriptDigest>(proto::AsView(envelope.payload));
  if (!parsed.ok()) {
    out.failure =
        SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "transcript: " + PeerText(parsed.status().message()));
    return out;
  }
  proto::TranscriptDigest::Reader t = parsed->root();
  auto protocol_error = [&](const std::string& text) {
    out.failure = SessionFailure::Of(FailureReason::PROTOCOL_ERROR, "transcript: " + text);
    return out;
  };
  if (!SameBytes(t.getSessionId(), plan.session_id)) return protocol_error("session id differs from the order's");
  if (!SameBytes(t.getNodeKeyId(), plan.node_key_id)) return protocol_error("nodeKeyId is not the node's key");
  if (t.getRoundCount() != rounds) {
    return protocol_error("agent counted " + std::to_string(t.getRoundCount()) + " rounds, challenger " +
                          std::to_string(rounds));
  }
  if (!SameBytes(t.getDigest(), digest)) {
    return protocol_error("digest mismatch: agent " + HexOf(t.getDigest()) + ", challenger " +
                          HexEncode(digest.data(), digest.size()));
  }
  if (!SameBytes(t.getVerdictDigest(), verdict_digest)) {
    return protocol_error("verdictDigest " + HexOf(t.getVerdictDigest()) + " is not the verdict sent");
  }
  return out;
}

}  // namespace wipeproof
