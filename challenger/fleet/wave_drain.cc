#include "challenger/fleet/wave_drain.h"

#include <glog/logging.h>

#include <thread>

#include "challenger/fleet/slurm_lifecycle.h"
#include "challenger/session/assumptions.h"
#include "common/terminal_text.h"

namespace wipeproof {

WaveDrain::WaveDrain(std::string wave, std::vector<DrainMember> members, LifecycleNotice notice)
    : wave_(std::move(wave)), members_(std::move(members)), notice_(std::move(notice)), drained_(members_.size(), 0) {}

// A line may carry what a scheduler or hook said of a node (a Slurm reason, an annotation, a hook's
// output): escaped and cut here, so the inspected party can neither forge log lines nor flood the
// log, whichever way the line goes.
void WaveDrain::Say(int severity, const std::string& line) const {
  constexpr size_t kMaxLineBytes = 1024;
  const std::string text =
      TerminalSafe("wave " + wave_ + ": " + (line.size() > kMaxLineBytes ? line.substr(0, kMaxLineBytes) + "..." : line));
  if (notice_) {
    notice_(text);
  } else {
    LOG_AT_LEVEL(severity) << text;
  }
}

std::string WaveDrain::FailureReason(const std::string& why) const {
  return LifecycleReasonText("wipeproof wave " + wave_ + ": wipe FAILED: " + why);
}

double LifecycleLongestS(const LifecycleSpec& spec) {
  const double c = spec.command_timeout_s;
  switch (spec.kind) {
    case LifecycleKind::kNone:
      return 0;
    case LifecycleKind::kSlurm:
      return spec.grace_s + kRequeueWaitS + spec.poll_s + 5 * c;
    case LifecycleKind::kKubernetes:
      return spec.grace_s + 5 * c;
    case LifecycleKind::kCommand:
      return spec.grace_s + 3 * c;
  }
  return 0;
}

MemberEnd MemberEndOf(const StatusOr<SessionOutcome>& outcome, ResumePolicy policy) {
  MemberEnd end;
  if (!outcome.ok()) {
    end.reason = "not run: " + outcome.status().ToString();
  } else if (!outcome->pass) {
    end.reason = FailureReasonName(outcome->failure.reason) + ": " + outcome->failure.text;
  } else if (!outcome->ledger.ok()) {
    end.reason = "pass not fully recorded: " + outcome->ledger.ToString();  // T-RESUME-UNRECORDED
  } else if (policy == ResumePolicy::kOnPass) {
    end.pass = true;
  } else if (!outcome->summary.bound_stated) {
    end.reason = "no bound stated: " + outcome->summary.statement;
  } else {
    end.pass = true;
    // Every assumption wipeproof can establish must hold; physical-binding and no-uncovered-memory
    // never do (AssumptionCanBeEstablished), and waiting for them would resume no node ever.
    for (const AssumptionResult& a : outcome->summary.assumptions) {
      if (a.held || !AssumptionCanBeEstablished(a.name)) continue;
      end.pass = false;
      end.reason = "assumption " + a.name + " not held: " + a.detail;
      break;
    }
  }
  return end;
}

std::vector<Status> WaveDrain::DrainAll() {
  std::vector<Status> result(members_.size(), Status::Ok());
  const std::string reason = "wipeproof wave " + wave_ + ": wipe in progress";
  std::vector<std::thread> threads;
  for (size_t i = 0; i < members_.size(); ++i) {
    if (members_[i].hook == nullptr) continue;
    threads.emplace_back([&, i] {
      const DrainMember& m = members_[i];
      const std::string where = m.hook->Describe() + " node " + m.scheduler_name;
      // Someone else's drain, cordon or outage is theirs: never drained over, never resumed.
      StatusOr<SchedulerState> state = m.hook->ReadState(m.scheduler_name);
      if (!state.ok()) {
        result[i] = FailedPreconditionError("not wiped: its state could not be read (" + where +
                                            "): " + state.status().ToString() + "; left as it is");
        Say(google::GLOG_ERROR, "node " + m.node + " " + result[i].message());
        return;
      }
      if (!state->in_service) {
        result[i] = FailedPreconditionError("not wiped: out of service already (" + where + ": " + state->detail +
                                            "); not drained or resumed by this wave");
        Say(google::GLOG_WARNING, "node " + m.node + " " + result[i].message());
        return;
      }
      Say(google::GLOG_INFO, "draining node " + m.node + " (" + where + ")");
      Status drain = m.hook->Drain(m.scheduler_name, reason);
      if (drain.ok()) {
        drained_[i] = 1;
        Say(google::GLOG_INFO, "node " + m.node + " drained");
        return;
      }
      result[i] = FailedPreconditionError("not wiped: the drain failed: " + drain.ToString());
      Say(google::GLOG_ERROR, "node " + m.node + " not wiped: drain failed: " + drain.ToString());
      Status kept = m.hook->KeepDrained(
          m.scheduler_name, LifecycleReasonText("wipeproof wave " + wave_ + ": drain failed: " + drain.message()));
      if (!kept.ok()) Say(google::GLOG_ERROR, "node " + m.node + ": " + kept.ToString());
    });
  }
  for (std::thread& t : threads) t.join();
  return result;
}

std::vector<Status> WaveDrain::Abandon(const std::string& why) {
  std::vector<Status> result(members_.size(), Status::Ok());
  for (size_t i = 0; i < members_.size(); ++i) {
    if (!drained_[i]) continue;
    drained_[i] = 0;
    const DrainMember& m = members_[i];
    result[i] = m.hook->Resume(m.scheduler_name);
    if (result[i].ok()) {
      Say(google::GLOG_WARNING, "node " + m.node + " not wiped (" + why + ") and resumed");
    } else {
      Say(google::GLOG_ERROR,
          "node " + m.node + " not wiped (" + why + ") and could not be resumed: " + result[i].ToString());
      Status kept =
          m.hook->KeepDrained(m.scheduler_name, LifecycleReasonText("wipeproof wave " + wave_ + ": not wiped: " + why));
      if (!kept.ok()) Say(google::GLOG_ERROR, "node " + m.node + ": " + kept.ToString());
    }
  }
  return result;
}

std::vector<Status> WaveDrain::Settle(const std::vector<MemberEnd>& ends) {
  std::vector<Status> result(members_.size(), Status::Ok());
  for (size_t i = 0; i < members_.size() && i < ends.size(); ++i) {
    if (!drained_[i]) continue;
    const DrainMember& m = members_[i];
    if (ends[i].pass) {
      result[i] = m.hook->Resume(m.scheduler_name);
      if (result[i].ok()) {
        Say(google::GLOG_INFO, "node " + m.node + " passed and was resumed");
      } else {
        Say(google::GLOG_ERROR, "node " + m.node + " passed but could not be resumed: " + result[i].ToString());
      }
    } else {
      const std::string reason = FailureReason(ends[i].reason);
      result[i] = m.hook->KeepDrained(m.scheduler_name, reason);
      Say(google::GLOG_WARNING,
          "node " + m.node + " stays drained: " + reason +
              (result[i].ok() ? "" : " (could not set the reason: " + result[i].ToString() + ")"));
    }
  }
  return result;
}

}  // namespace wipeproof
