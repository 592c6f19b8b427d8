// The node-lifecycle hook of a wave run: before a member's order its state in the workload scheduler
// is read, and a node already out of service for another reason (drained, down, cordoned) is left
// exactly as it is: not drained, not wiped, never resumed, its reason never overwritten. Otherwise
// its workload scheduler is told to
// let the node go (drain), after its verdict to take it back (resume) only on a pass; a failed or
// aborted wipe leaves it drained with the verdict's reason where operators look (Slurm's node
// reason, a Kubernetes node annotation, the operator's own hook). Configured per node or per wave
// in the inventory (lifecycle_spec.h); wave_drain.h runs it around a wave.
//
// Implementations run the scheduler's own command-line tools without a shell (common/subprocess.h),
// each call bounded by the spec's command_timeout_s; a command's stderr is part of its error.
//
// Thread-safety: one object may serve several nodes at once (a wave drains its members in
// parallel): implementations keep no per-call state.
#pragma once

#include <memory>
#include <string>

#include "challenger/fleet/lifecycle_spec.h"
#include "common/status.h"

namespace wipeproof {

// A node's state in its scheduler before a wave touches it.
struct SchedulerState {
  bool in_service = true;  // false: drained, down or cordoned already, by someone or something else
  std::string detail;      // what the scheduler says ("state IDLE+DRAIN, reason 'fan failure'")
};

class NodeLifecycle {
 public:
  virtual ~NodeLifecycle() = default;

  // Reads `node`'s state without changing it. Errors as Drain; on error the wave leaves the node
  // alone (neither drains nor wipes it): a state it cannot read may be someone else's drain.
  virtual StatusOr<SchedulerState> ReadState(const std::string& node) = 0;

  // Stops new work on `node` (its name in the scheduler) and returns once no work runs there any
  // more, or it has been requeued or evicted after the grace period. `reason` is shown to
  // operators while it is drained. Errors: UNAVAILABLE (a command failed, with its stderr),
  // DEADLINE_EXCEEDED (work still running after the grace period and the requeue), NOT_FOUND (the
  // tool is missing). On error the node may be left drained; the wave does not wipe it.
  virtual Status Drain(const std::string& node, const std::string& reason) = 0;

  // Gives `node` back to the scheduler (after a pass). Errors as Drain.
  virtual Status Resume(const std::string& node) = 0;

  // Leaves `node` drained, with `reason` (after a failed or aborted wipe). Errors as Drain.
  virtual Status KeepDrained(const std::string& node, const std::string& reason) = 0;

  // "slurm", "kubernetes", "command /path/to/hook": for logs.
  virtual std::string Describe() const = 0;
};

// The implementation `spec` names; nullptr for kind none.
std::unique_ptr<NodeLifecycle> MakeNodeLifecycle(const LifecycleSpec& spec);

// A reason as schedulers accept it: one line (control characters become spaces), at most 240
// bytes (cut with "..."), never empty.
std::string LifecycleReasonText(const std::string& reason);

}  // namespace wipeproof
