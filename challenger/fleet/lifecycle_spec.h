// How the challenger takes a node out of its workload scheduler's hands for a wipe and gives it
// back (node_lifecycle.h): the inventory's `lifecycle` object, on a node or on a wave (a node's own
// overrides its wave's; docs/operations.md "Draining nodes around a wipe").
//
// JSON (every field but "kind" optional):
//   {"kind": "slurm",                   "slurm", "kubernetes", "command" or "none" (no drain; on a
//                                       node it turns off its wave's)
//    "grace_s": 600,                    seconds running work may take to leave after the drain (Slurm:
//                                       then it is requeued; Kubernetes: kubectl drain's --timeout),
//                                       in [0, 86400]
//    "poll_s": 2,                       Slurm: seconds between looks at the node's running jobs, in
//                                       [0.1, 600]
//    "command_timeout_s": 60,           one scheduler command (scontrol, kubectl, the hook), in
//                                       [1, 86400]; a command hook's drain gets grace_s more
//    "bin_dir": "/usr/bin",             slurm, kubernetes: the folder of scontrol and squeue, or of
//                                       kubectl; default: looked up in PATH
//    "slurm_conf": "/etc/wipeproof/slurm-client.conf",   slurm: the client configuration scontrol and
//                                       squeue read (SLURM_CONF); with token_file, one that names
//                                       AuthAltTypes=auth/jwt and no munge socket of the cluster
//    "token_file": "/etc/wipeproof/slurm.jwt",    slurm: a Slurm JWT (`scontrol token username=U` on
//                                       the controller), passed as SLURM_JWT and read again for every
//                                       command (a refreshed token is picked up): the file itself, not a
//                                       link, owned by the challenger's user, mode 0600 or 0400
//                                       (common/credential_file.h).
//                                       The least-privilege path: no munge key on the challenger,
//                                       whose Slurm identity is then U (docs/deploy.md section 5)
//    "kubeconfig": "/etc/wipeproof/kubeconfig",   kubernetes: passed as --kubeconfig
//    "command": "/usr/local/sbin/wipe-hook",      command: the operator's executable, run as
//                                       COMMAND state NODE | drain NODE REASON | resume NODE |
//                                       fail NODE REASON
//    "resume": "on-bound"}              when a member is given back: "on-bound" (default: a pass
//                                       whose verdict states a bound with every assumption held that
//                                       wipeproof can establish: all but physical-binding and
//                                       no-uncovered-memory, assumptions.h) or
//                                       "on-pass" (any recorded pass; labs)
// The node's name in the scheduler is the node's `scheduler_name` in the inventory (default: its
// inventory name).
//
// Thread-safety: LifecycleSpec is a value.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace wipeproof {

enum class LifecycleKind { kNone, kSlurm, kKubernetes, kCommand };

// Which verdicts give a drained member back to its scheduler (wave_drain.h MemberEndOf).
enum class ResumePolicy {
  kOnBound,  // a recorded pass that states a bound with every establishable assumption held (assumptions.h)
  kOnPass,   // any recorded pass, bound or not (labs)
};

struct LifecycleSpec {
  LifecycleKind kind = LifecycleKind::kNone;
  double grace_s = 600;
  double poll_s = 2;
  double command_timeout_s = 60;
  std::string bin_dir;     // "" = PATH
  std::string kubeconfig;  // "" = kubectl's default
  std::string slurm_conf;  // kSlurm: SLURM_CONF for its tools; "" = Slurm's default
  std::string token_file;  // kSlurm: its content is SLURM_JWT; "" = munge (the cluster's key)
  std::string command;     // kCommand: the executable
  ResumePolicy resume = ResumePolicy::kOnBound;
};

// "none", "slurm", "kubernetes", "command".
const char* LifecycleKindName(LifecycleKind kind);

// Parses the `lifecycle` object at `path` ("nodes[0].lifecycle"). Relative `bin_dir` and `kubeconfig`
// paths, and a `command` with a '/' in it, are resolved against `base_dir` (the inventory's folder;
// "" = as given); a bare command name is looked up in PATH.
// Errors: INVALID_ARGUMENT naming the field (unknown kind, out-of-range number, a field the kind
// does not take, command missing for kind "command").
StatusOr<LifecycleSpec> ParseLifecycleSpec(const nlohmann::json& value, const std::string& path,
                                           const std::string& base_dir);

}  // namespace wipeproof
