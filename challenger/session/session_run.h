// One run of the protocol over prepared challenges (session_runner.h: the steps, the failure
// mapping, what is recorded). Internal to the session room: SessionRunner owns one per Run().
//
// Driven as events on the client's kj event loop: the report and every device's fill notice are
// awaited at once, each device is challenged in the turn its notice verifies, and rounds follow
// one another (proof rounds back to back, holding rounds after random gaps: round_planner.h) until
// the session and its wave are done. Each moment is read from the clock once: the order's
// departure (monotonic, wall and real time together) is the origin of every offset recorded.
//
// Thread-safety: one Run() on the thread that owns the event loop.
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "challenger/session/agent_connector.h"
#include "challenger/session/challenges.h"
#include "challenger/session/expected_labels.h"
#include "challenger/session/round_planner.h"
#include "challenger/session/session_checks.h"
#include "challenger/session/session_fills.h"
#include "challenger/session/session_runner.h"
#include "challenger/session/wave_guard.h"
#include "proto/transcript.h"

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
  // When the order went out, read once: the origin of every offset.
  struct OrderSent {
    int64_t monotonic_us = -1;  // env clock
    int64_t unix_us = 0;        // env clock's wall time (0: never sent)
    kj::TimePoint real = kj::origin<kj::TimePoint>();
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

  // Drive: the events.
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
  void Fail(SessionFailure failure);
  void Wake();
  void WaitUntil(kj::TimePoint when);
  template <typename T>
  kj::Maybe<T> WaitBounded(kj::Promise<T> promise, uint64_t limit_us);

  // Where the session stands.
  bool ProofDone() const;
  bool Closing() const;
  uint64_t SinceOrderUs() const;
  void ReportProgress() const;

  // The end: verdict, finish or abort, records.
  void FinishOrAbort(proto::ProverAgent::Client* agent);
  void Finish(proto::ProverAgent::Client& agent);
  void Abort(proto::ProverAgent::Client& agent);
  StatusOr<proto::SignedEnvelope> BuildVerdict(const SessionFailure& failure, VerdictSummary* summary);
  std::vector<uint64_t> ChunksChecked() const;
  void SignVerdictOrMinimal();
  void SupersedeWithFailure();
  void Record();

  const SessionPlan& plan_;
  const SessionKeys& keys_;
  const SessionEnv& env_;
  WaveGuard wave_;
  const ChallengeSet& challenges_;
  const ExpectedLabels& expected_;
  std::string name_;  // "session <hex> node <name>" for logs
  SessionOutcome out_;
  SessionFailure failure_;

  proto::ProverAgent::Client* agent_ = nullptr;
  TaskErrors errors_;
  kj::TaskSet tasks_;
  kj::Own<kj::PromiseFulfiller<void>> wake_;

  std::optional<proto::Held<proto::WipeOrder>> order_;  // as signed
  SessionFacts facts_;                                  // what the checks read
  proto::TranscriptHasher transcript_;
  SessionFills fills_;
  OrderSent sent_;
  std::vector<DeviceRoundState> devices_;
  std::optional<InFlight> in_flight_;
  kj::TimePoint next_round_at_ = kj::origin<kj::TimePoint>();  // no holding round before
  bool holding_used_up_logged_ = false;
  bool report_arrived_ = false;  // any answer to startSession, even a refusal
  bool transcript_recordable_ = false;
  std::vector<std::string> wave_not_held_;
};

}  // namespace wipeproof
