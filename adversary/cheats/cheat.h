// One way to cheat, as hooks into the cheating agent's protocol steps (cheating_agent.h). The agent
// runs the honest protocol and calls the hooks of its one Cheat at each step; every hook's default
// is the honest behaviour, so a cheat overrides only the steps where it departs. make_cheat.h builds
// the cheat a Deviation asks for; each family of adversaries has its file beside this one.
//
// The steps, in the order the agent calls them:
//   startSession  OnOrderReceived, OnOrderVerified, ChooseKeyMaterial, OnFilled, OnReportFacts,
//                 OnNoticeFacts (per device), OnReportSending, HoldReport
//   deviceFilled  DeliverNotice
//   round         OnRound, OnChallenge, ReplayedAnswer, AnswerUnstoredLabel (per label whose chunk
//                 is not kStored), OnAnswer, OnRoundDone
//   finish        OnFinish, OnTranscriptDigest, OnTranscriptSending
//   abort         OnAbort
//   and OnSessionEnd whenever the agent lets the session go (finish, abort, a failed fill).
// A hook that returns an Interception with a promise ends the RPC with that promise instead (a
// refusal, an exception, or kj::NEVER_DONE for a call that never returns).
//
// Thread-safety: on the agent's event-loop thread.
#pragma once

#include <kj/async.h>
#include <kj/time.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "adversary/agent_log.h"
#include "adversary/held_labels.h"
#include "adversary/sim_time.h"
#include "kernels/label_spec.h"
#include "proto/crypto.h"
#include "proto/node_messages.h"
#include "proto/signing.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::adversary {

// What a cheat may read and change: the agent's own state, which outlives the cheat.
struct CheatTools {
  HeldLabels* held = nullptr;  // the session's labels, as the agent filled them
  AgentLog* log = nullptr;
  AdversaryMemory* memory = nullptr;
  std::mt19937_64* rng = nullptr;  // the adversary's own choices (seeded: the selftest is reproducible)
  AgentClock* clock = nullptr;
  const SimTiming* timing = nullptr;
};

// Empty: the agent carries on. A promise: the RPC returns it.
using Interception = std::optional<kj::Promise<void>>;

// How the agent answers a deviceFilled call.
struct NoticeDelivery {
  bool never = false;                         // the call never returns
  kj::Duration delay = 0 * kj::MILLISECONDS;  // > 0: answered after this much real time (when the
                                              // agent has a timer; else at once)
};

// One round's challenge as the agent read it: indices[i] lists the label indices asked of device
// request.getDevices()[i].getDeviceIndex().
struct Challenge {
  proto::ChallengeRound::Reader request;
  std::vector<std::vector<uint64_t>> indices;

  uint32_t round() const { return request.getRoundIndex(); }
  size_t device(size_t i) const { return request.getDevices()[static_cast<unsigned>(i)].getDeviceIndex(); }
};

class Cheat {
 public:
  virtual ~Cheat() = default;

  // startSession. Before the order is read.
  virtual Interception OnOrderReceived() { return std::nullopt; }
  // The order verified under the challenger key and its delegation under the authority key.
  virtual Interception OnOrderVerified() { return std::nullopt; }
  // The key material the labels are made from; `filled` starts as the order's.
  virtual void ChooseKeyMaterial(RegionSpec* /*filled*/) {}
  // Every device filled (all chunks kStored) and the fill's time charged.
  virtual void OnFilled() {}
  // What the fill report will say of each device, one entry per device in order.
  virtual void OnReportFacts(std::vector<proto::DeviceFillFacts>* /*facts*/) {}
  // What device `device`'s notice will say (a copy of its report facts).
  virtual void OnNoticeFacts(size_t /*device*/, size_t /*devices*/, proto::DeviceFillFacts* /*facts*/) {}
  // The signed report, already in the transcript, before it is sent.
  virtual void OnReportSending(proto::SignedEnvelope* /*report*/) {}
  // The report is written into startSession's results; a promise here returns startSession only
  // when it resolves (or fails it), while deviceFilled and rounds are answered meanwhile.
  virtual Interception HoldReport() { return std::nullopt; }

  // deviceFilled for device `device` of `devices`.
  virtual NoticeDelivery DeliverNotice(size_t /*device*/, size_t /*devices*/) { return {}; }

  // round. Round `round` for this session, past the shape check, before anything is looked up.
  virtual Interception OnRound(uint32_t /*round*/) { return std::nullopt; }
  // The round fits the order; `answered` (a copy of asked.indices) is what the agent will answer.
  virtual Interception OnChallenge(const Challenge& /*asked*/, std::vector<std::vector<uint64_t>>* /*answered*/) {
    return std::nullopt;
  }
  // A canonical RoundAnswer to send verbatim instead of answering; nullptr: answer.
  virtual const proto::Bytes* ReplayedAnswer(uint32_t /*round*/) { return nullptr; }
  // Label `g` of device `d`, whose chunk is not kStored: true when written to `out` (32 bytes);
  // false answers zeros (nothing is there).
  virtual bool AnswerUnstoredLabel(size_t /*d*/, uint64_t /*g*/, uint8_t* /*out*/) { return false; }
  // The answer as written, before the round's honest time is charged.
  virtual void OnAnswer(uint32_t /*round*/, proto::RoundAnswer::Builder /*answer*/) {}
  // The round answered and in the transcript.
  virtual void OnRoundDone(const Challenge& /*asked*/, proto::RoundAnswer::Reader /*answer*/) {}

  // finish. Before the verdict is read.
  virtual Interception OnFinish() { return std::nullopt; }
  // The transcript digest, before it is signed.
  virtual void OnTranscriptDigest(proto::Digest* /*digest*/) {}
  // The signed transcript to send; AdversaryMemory still holds the previous session's.
  virtual void OnTranscriptSending(proto::SignedEnvelope* /*transcript*/) {}

  // abort, after the agent let the session go.
  virtual Interception OnAbort() { return std::nullopt; }

  // The agent let the session go: forget what was kept for it.
  virtual void OnSessionEnd() {}
};

}  // namespace wipeproof::adversary
