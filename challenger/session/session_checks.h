// The challenger's checks of what an agent sends during a session (session_runner.h steps 3-5), as
// functions of the message and what the session knows: each returns the failure the message earns,
// reason NONE when it passes. The protocol's own rules (a message names its order, an answer fits
// its round, a fill holds its plan) are proto/session_rules.h's; these add what only the
// challenger decides: signatures under the node key, deadlines, the expected labels, and the
// failure reason each broken rule maps to.
//
// Thread-safety: pure functions.
#pragma once

#include <kj/exception.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "challenger/session/failure.h"
#include "challenger/session/session_plan.h"
#include "proto/codec.h"
#include "proto/label_wire.h"
#include "proto/signing.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

// What the checks read of the session.
struct SessionFacts {
  const SessionPlan* plan = nullptr;
  proto::WipeOrder::Reader order;  // as signed
  proto::Digest order_digest{};
};

// A signature that did not verify: BAD_SIGNATURE when the envelope is not signed by the node key
// (PERMISSION_DENIED), PROTOCOL_ERROR when it is malformed. "what: <why>".
SessionFailure SignatureFailure(const Status& signature, const std::string& what);

// How an RPC failure of `call` maps to a session failure (session_runner.h): DISCONNECTED ->
// disconnected; a wipeproof Status from the agent -> `remote_reason`; anything else ->
// protocolError. The agent's text is cut where it enters (PeerText).
SessionFailure FailureFromException(const kj::Exception& e, proto::FailureReason remote_reason,
                                    const std::string& call);

// An unexpected exception inside the runner after the order was recorded (a bug, or agent data a
// check missed): an `internal` failure, recorded in a signed verdict like any other.
SessionFailure FailureFromUnexpected(const char* where, std::string_view what);

// Device d's fill notice, `fill_us` after the order: decoded, signed by the node, naming the order
// and device d, holding its plan, within the device's fill deadline.
struct NoticeCheck {
  SessionFailure failure;
  std::optional<proto::SignedEnvelope> envelope;             // set when it passed
  std::optional<proto::Held<proto::DeviceFillNotice>> notice;  // the same, parsed
};
NoticeCheck CheckNotice(proto::Envelope::Reader wire, const SessionFacts& s, size_t d, uint64_t fill_us);

// The fill report: signed by the node, naming the order and its devices in order, each holding
// its plan. (Its notices and its deadline are the session's to compare.)
struct ReportCheck {
  SessionFailure failure;
  // Well-formed and of this session: the ledger takes it even when it failed (its digest is then
  // stated by the verdict and receipt).
  bool recordable = false;
  std::optional<proto::Digest> digest;                   // of every recordable or verified report
  std::optional<proto::Held<proto::FillReport>> report;  // verified and naming the order
};
ReportCheck CheckReport(const proto::SignedEnvelope& envelope, const SessionFacts& s);

// The first answered label that is not its expected one, as a wrongLabel failure; reason NONE when
// all are right. `labels` holds 32 bytes per label of `round` (CheckAnswerFitsRound passed) and
// `expected(k)` the k-th expected label, in the same order.
template <typename Expected>
SessionFailure CompareLabels(const SessionFacts& s, proto::ChallengeRound::Reader round, const uint8_t* labels,
                             const Expected& expected);

// The transcript the agent returns from `finish`: signed by the node, of this session, and the
// digest, round count and verdict digest the challenger computed.
struct TranscriptCheck {
  SessionFailure failure;
  bool recordable = false;  // well-formed and of this session
};
TranscriptCheck CheckTranscript(const proto::SignedEnvelope& envelope, const SessionFacts& s,
                                const proto::Digest& digest, uint32_t rounds, const proto::Digest& verdict_digest);

// --- implementation ---------------------------------------------------------------------------

template <typename Expected>
SessionFailure CompareLabels(const SessionFacts& s, proto::ChallengeRound::Reader round, const uint8_t* labels,
                             const Expected& expected) {
  size_t k = 0;
  for (auto device : round.getDevices()) {
    for (uint64_t g : device.getLabelIndices()) {
      const uint8_t* want = expected(k);
      const uint8_t* got = labels + k * proto::kLabelBytes;
      ++k;
      if (std::memcmp(got, want, proto::kLabelBytes) == 0) continue;
      SessionFailure f = SessionFailure::Of(proto::FailureReason::WRONG_LABEL, "label differs from the expected one");
      f.device = s.plan->devices[device.getDeviceIndex()].selector;
      f.has_round = true;
      f.round = round.getRoundIndex();
      f.has_label = true;
      f.label_index = g;
      f.expected.assign(want, want + proto::kLabelBytes);
      f.received.assign(got, got + proto::kLabelBytes);
      return f;
    }
  }
  return SessionFailure();
}

}  // namespace wipeproof
