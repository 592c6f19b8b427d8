// The Slurm node-lifecycle hook (node_lifecycle.h), through scontrol and squeue:
//   state:  scontrol -o show node NODE; out of service when State= carries any of DRAIN, DRAINING,
//           DRAINED, DOWN, FAIL, FAILING, MAINT, REBOOT_REQUESTED, REBOOT_ISSUED, POWERED_DOWN,
//           POWERING_DOWN, POWER_DOWN, FUTURE, NOT_RESPONDING, UNKNOWN, or '*' (not responding);
//           the detail names the state and Reason=
//   drain:  scontrol update nodename=NODE state=drain reason=REASON, then squeue -h -w NODE
//           -t RUNNING,COMPLETING,CONFIGURING,SUSPENDED -o %A every poll_s until no job is left;
//           after grace_s the jobs still there are requeued (scontrol requeue ID,...), and the
//           drain fails (DEADLINE_EXCEEDED) if any is still there kRequeueWaitS later
//   resume: scontrol update nodename=NODE state=resume
//   keep drained: scontrol update nodename=NODE state=drain reason=REASON (the reason replaced)
// Each runs with SLURM_CONF = the spec's slurm_conf and SLURM_JWT = its token_file's token when set
// (lifecycle_spec.h): then the challenger needs no munge key, and Slurm knows it as the token's
// user, which Slurm 22.05 lets update nodes only at AdminLevel Administrator (docs/deploy.md
// section 5: how to make that user unable to run jobs or mint tokens).
// `scontrol show node NODE` then shows State=...+DRAIN and Reason=REASON.
//
// Thread-safety: as NodeLifecycle.
#pragma once

#include <string>
#include <vector>

#include "challenger/fleet/node_lifecycle.h"

namespace wipeproof {

// Seconds a drain waits for requeued jobs to leave the node.
inline constexpr double kRequeueWaitS = 60;

// The state `scontrol -o show node` printed (one line "NodeName=... State=IDLE+DRAIN ... Reason=...").
// Errors: UNAVAILABLE when it has no State= field.
StatusOr<SchedulerState> ParseSlurmNodeState(const std::string& show_node);

class SlurmLifecycle : public NodeLifecycle {
 public:
  explicit SlurmLifecycle(LifecycleSpec spec) : spec_(std::move(spec)) {}

  StatusOr<SchedulerState> ReadState(const std::string& node) override;
  Status Drain(const std::string& node, const std::string& reason) override;
  Status Resume(const std::string& node) override;
  Status KeepDrained(const std::string& node, const std::string& reason) override;
  std::string Describe() const override { return "slurm"; }

  // The ids of the jobs running on `node` (squeue). Errors as NodeLifecycle::Drain.
  StatusOr<std::vector<std::string>> RunningJobs(const std::string& node) const;

 private:
  std::string Tool(const char* name) const;
  // SLURM_CONF and SLURM_JWT (the token file read now) for the tools, as the spec names them.
  // Errors: ReadCredentialFile's (NOT_FOUND, PERMISSION_DENIED: a link, another owner, group or
  // other bits; INVALID_ARGUMENT: not a regular file, over 64 KiB), UNAVAILABLE (not one token).
  StatusOr<std::vector<std::string>> Environment() const;
  // `argv` run with Environment(), within the command timeout (RunProcessChecked).
  StatusOr<std::string> Run(const std::vector<std::string>& argv) const;
  LifecycleSpec spec_;
};

}  // namespace wipeproof
