// One run of the protocol over prepared challenges (session_runner.h: the steps, the failure
// mapping, what is recorded). Internal to the session room: SessionRunner makes one per Run().
//
// From the order to the last round the session is driven as events on the client's kj event
// loop: the report and every device's fill notice are awaited at once (session_fills.h), each
// device is challenged in the turn its notice verifies, and rounds follow one another (proof
// rounds back to back, holding rounds after random gaps: round_planner.h) until the session and
// its wave are done. Then session_close.h ends it. The order's departure is read from the clock
// once (monotonic, wall and real time together) and is the origin of every offset recorded.
//
// Thread-safety: one Run() on the thread that owns the event loop.
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <optional>
#include <utility>
#include <vector>

#include "challenger/session/agent_connector.h"
#include "challenger/session/challenges.h"
#include "challenger/session/expected_labels.h"
#include "challenger/session/round_planner.h"
#include "challenger/session/session_state.h"

namespace wipeproof {

class SessionRun {
 public:
  SessionRun(const SessionPlan& plan, const SessionKeys& keys, const SessionEnv& env, const ChallengeSet& challenges,
             const ExpectedLabels& expected, uint64_t prepare_us);

  StatusOr<SessionOutcome> Run(AgentConnector& connector);

 private:
  // Failures from tasks_ that escaped their own handlers: a challenger bug, recorded as `internal`.
  struct TaskErrors final : kj::TaskSet::ErrorHandler {
    SessionRun* session = nullptr;
    void taskFailed(kj::Exception&& e) override;
  };
  // One planned device's rounds (its fill: SessionFills).
  struct DeviceRoundState {
    DeviceRounds sent;           // batches sent so far (round_planner.h)
    uint32_t proof_correct = 0;  // proof batches answered right and in time
  };
  // The round on the wire.
  struct InFlight {
    uint32_t index = 0;
    std::vector<std::pair<size_t, uint32_t>> parts;  // (device, batch), in the round's order
    bool proof = false;
    proto::Bytes round;  // canonical, as sent
    int64_t sent_us = 0;
    kj::TimePoint sent_real = kj::origin<kj::TimePoint>();
  };

  Status RecordOrder();
  void Drive(proto::ProverAgent::Client& agent);
  void SendRequests(proto::ProverAgent::Client& agent);
  kj::TimePoint NextWake() const;
  void OnNotice(size_t d, proto::Envelope::Reader wire);
  void OnReport(proto::Envelope::Reader wire);
  void OnAnswer(proto::RoundAnswer::Reader answer);
  void OnRoundError(const kj::Exception& e);
  bool CheckAnswer(const InFlight& round, proto::RoundAnswer::Reader answer);
  void MaybeSendRound();
  void SendRound(const PlannedRound& planned);
  void CheckRealTimeLimits();
  // Logs `round` as ended (timing row and exchange, `answer` empty when none) and returns its row.
  RoundRecord& EndRound(const InFlight& round, proto::Bytes answer);
  // SessionState::Fail, and the loop looks again at once.
  void Fail(SessionFailure failure);
  void Wake();
  void WaitUntil(kj::TimePoint when);
  bool ProofDone() const;
  bool Closing() const;
  void ReportProgress() const;

  SessionState s_;
  const ChallengeSet& challenges_;
  const ExpectedLabels& expected_;
  proto::ProverAgent::Client* agent_ = nullptr;
  TaskErrors errors_;
  kj::TaskSet tasks_;
  kj::Own<kj::PromiseFulfiller<void>> wake_;
  std::vector<DeviceRoundState> devices_;
  std::optional<InFlight> in_flight_;
  kj::TimePoint next_round_at_ = kj::origin<kj::TimePoint>();  // no holding round before
  bool holding_used_up_logged_ = false;
  bool report_arrived_ = false;  // any answer to startSession, even a refusal
};

}  // namespace wipeproof
