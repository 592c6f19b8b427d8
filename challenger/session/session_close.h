// How a session ends once its rounds are over or it failed (session_runner.h steps 5-6): the
// verdict signed by the challenger key (a minimal `internal` one when it cannot be), then `finish`
// with a pass (the agent's transcript must be the challenger's own, or a failing verdict supersedes
// the pass) or `abort` with a failure, then every record and the receipt in the ledger.
// Internal to the session room.
//
// Thread-safety: used on the session's thread only.
#pragma once

#include <kj/async.h>

#include <cstdint>
#include <vector>

#include "challenger/session/session_state.h"

namespace wipeproof {

class SessionClose {
 public:
  // `agent` is null when the session never connected.
  SessionClose(SessionState& s, proto::ProverAgent::Client* agent) : s_(s), agent_(agent) {}

  // Signs the verdict, then `finish` (pass) or `abort` (failure; not after a refusal or a
  // disconnect: the agent holds nothing then).
  void FinishOrAbort();
  // A failure that came after a verdict was signed: re-signs; a pass signed before is kept as
  // the superseded verdict.
  void SupersedeWithFailure();
  // Every record of the session and its receipt into the ledger (session_record.h).
  void Record();

 private:
  void Finish(proto::ProverAgent::Client& agent);
  void Abort(proto::ProverAgent::Client& agent);
  void SignVerdictOrMinimal();
  StatusOr<proto::SignedEnvelope> BuildVerdict(const SessionFailure& failure, VerdictSummary* summary) const;
  std::vector<uint64_t> ChunksChecked() const;
  // `promise`, or nothing once `limit_us` of real time passed.
  template <typename T>
  kj::Maybe<T> WaitBounded(kj::Promise<T> promise, uint64_t limit_us);

  SessionState& s_;
  proto::ProverAgent::Client* agent_;
};

}  // namespace wipeproof
