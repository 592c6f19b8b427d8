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
// The loop sleeps until something is due: an event, a deadline, the next holding round, or a change
// of its wave (the member that completes the wave's fill or end wakes it: wave_sync.h listeners,
// loop_wake.h), at most 100 ms. Between an answer's receipt and the next round's send it does only
// what decides that round: the answer's canonical copy for the log, its fit to the round and every
// label compared; the rounds' transcript hash waits until no round is in flight. Rounds go on the
// round channel (proto/round_channel_client.h) once it is open and the fill report is in, over RPC
// before or without it. What each round costs the challenger is kept in the outcome
// (round_costs.h), never in the ledger.
//
// Thread-safety: one Run() on the thread that owns the event loop.
#pragma once

#include <capnp/message.h>
#include <kj/async.h>
#include <kj/timer.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "challenger/session/agent_connector.h"
#include "challenger/session/challenges.h"
#include "challenger/session/expected_labels.h"
#include "challenger/session/loop_wake.h"
#include "challenger/session/round_planner.h"
#include "challenger/session/session_state.h"
#include "challenger/session/touched_byte_pool.h"
#include "proto/round_channel_client.h"

namespace wipeproof {

class SessionRun {
 public:
  SessionRun(const SessionPlan& plan, const SessionKeys& keys, const SessionEnv& env, const ChallengeSet& challenges,
             ExpectedLabels& expected, uint64_t prepare_us);

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
    bool occupancy = false;
    bool on_channel = false;  // sent on the round channel (`message`'s root: a RoundChannelRequest)
    // The round as built and sent: read by the check (shared with the channel's send, which may
    // outlive a late round).
    std::shared_ptr<capnp::MallocMessageBuilder> message;
    proto::Bytes round;      // canonical, as sent (moved into the round log when the round ends)
    std::string not_logged;  // why `round` is empty (its canonical encoding failed), or empty
    int64_t sent_us = 0;
    kj::TimePoint sent_real = kj::origin<kj::TimePoint>();
  };

  Status RecordOrder();
  // Before the first round: the round log's containers at their largest, and a buffer for each
  // round's and each answer's canonical bytes, written once (touched_byte_pool.h).
  void PrepareRoundStorage();
  // The canonical bytes of `reader` for the round log, in a buffer of log_bytes_.
  StatusOr<proto::Bytes> LogCopy(capnp::AnyStruct::Reader reader);
  void Drive(proto::ProverAgent::Client& agent, AgentConnector& connector);
  void SendRequests(proto::ProverAgent::Client& agent);
  void OpenRoundChannel(proto::ProverAgent::Client& agent, AgentConnector& connector);
  kj::TimePoint NextWake() const;
  void OnNotice(size_t d, proto::Envelope::Reader wire);
  void OnReport(proto::Envelope::Reader wire);
  // An answer received on either transport: checked whole (OnRoundError when malformed or larger
  // than its round needs), then OnAnswer.
  void OnReceived(const std::function<proto::RoundAnswer::Reader()>& answer_of);
  // `answered_us` (the session's monotonic clock) and `received_ns` (SteadyNowNs): when it arrived.
  void OnAnswer(proto::RoundAnswer::Reader answer, int64_t answered_us, uint64_t received_ns);
  SessionFailure FillFailure(const kj::Exception& e) const;
  void OnRoundError(const kj::Exception& e);
  // `logged`: the round's exchange as EndRound logged it (canonical round and answer bytes);
  // `answer_canonical`: whether the answer could be put in canonical form.
  bool CheckAnswer(const InFlight& round, proto::RoundAnswer::Reader answer, const RoundExchange& logged,
                   const Status& answer_canonical);
  void MaybeSendRound();
  // Adds the rounds whose answers were checked and not yet hashed to the transcript, in order.
  void HashPendingRounds();
  // Asks the worker for an occupancy batch; false (the round waits, or the window ends) if not ready.
  bool OccupancyBatchReady(uint32_t batch);
  // `decided_ns` and `cpu_start_ns` (round_costs.h): when MaybeSendRound decided to send, for RoundCost.
  void SendRound(const PlannedRound& planned, uint64_t decided_ns, uint64_t cpu_start_ns);
  void CheckRealTimeLimits();
  // Logs `round` as ended at `ended_us` on the session's clock (timing row and exchange, `answer`
  // empty when none; round.round is moved into the exchange) and returns its row.
  RoundRecord& EndRound(InFlight& round, proto::Bytes answer, int64_t ended_us);
  // SessionState::Fail, and the loop looks again at once.
  void Fail(SessionFailure failure);
  void Wake();
  void WaitUntil(kj::TimePoint when);
  bool ProofDone() const;
  // The occupancy window (occupancy_bound.h): opened at the last proof round's answer, closed at its
  // length, when the pool is used up, or (as the session ends) on a failure.
  void OpenOccupancyWindow(int64_t answered_us);
  void CloseOccupancyWindow();
  bool OccupancyWindowOver() const;
  bool OccupancyOpen() const { return occupancy_.ran && !occupancy_closed_; }
  bool OccupancyDone() const { return s_.plan.occupancy_window_us == 0 || occupancy_closed_; }
  bool Closing() const;
  void ReportProgress() const;

  SessionState s_;
  const ChallengeSet& challenges_;
  ExpectedLabels& expected_;
  proto::ProverAgent::Client* agent_ = nullptr;
  TaskErrors errors_;
  // The round channel (proto/round_channel_client.h), once OpenRoundChannel opened it; declared
  // before tasks_, so the promises that use it go first.
  kj::Own<kj::AsyncIoStream> channel_stream_;
  std::unique_ptr<proto::RoundChannelClient> channel_;
  bool channel_open_ = false;
  bool channel_busy_ = false;  // a round's send on the channel has not resolved
  kj::TaskSet tasks_;
  kj::Own<kj::PromiseFulfiller<void>> wake_;
  // Fired by the wave (a WaveSync listener) from another member's thread; shared with the listener,
  // which may run once more just after it was removed.
  std::shared_ptr<LoopWake> wave_wake_ = std::make_shared<LoopWake>();
  std::vector<DeviceRoundState> devices_;
  std::optional<InFlight> in_flight_;
  kj::TimePoint next_round_at_ = kj::origin<kj::TimePoint>();  // no holding round before
  bool holding_used_up_logged_ = false;
  bool occupancy_behind_logged_ = false;
  OccupancyFacts occupancy_;      // into the verdict (SessionState::occupancy) when the run ends
  bool occupancy_closed_ = false;
  uint64_t occupancy_sent_before_us_ = 0;  // one past the last occupancy round's send, after the order
  // The gap drawn last (occupancy_bound.h "Protected time"): its length, when it started (after the
  // order, session clock), whether it runs now; the gaps' running time so far.
  uint64_t occupancy_gap_us_ = 0;
  uint64_t occupancy_gap_from_us_ = 0;
  bool occupancy_gap_running_ = false;
  uint64_t occupancy_protected_us_ = 0;
  kj::TimePoint occupancy_end_real_ = kj::origin<kj::TimePoint>();
  // Each round's thread CPU too (RoundCost::*_cpu_ns: two clock reads of ~0.5 us each per span), only
  // when a RoundCostStats gathers them.
  const bool measure_cpu_;
  std::vector<DeviceRounds> rounds_scratch_;      // MaybeSendRound's plan input, reused
  std::vector<const uint8_t*> expected_scratch_;  // CheckAnswer's expected labels, reused
  std::vector<size_t> transcript_pending_;        // exchanges of rounds checked, not yet hashed, in order
  // The round log's copies of rounds and answers, in buffers written before the rounds (Drive).
  TouchedBytePool log_bytes_;
  bool report_arrived_ = false;  // any answer to startSession, even a refusal
  // A round refused before the report (OnRoundError): recorded when the report arrives, unless
  // startSession's own failure (why the session ended) comes first.
  std::optional<SessionFailure> round_failure_before_report_;
};

}  // namespace wipeproof
