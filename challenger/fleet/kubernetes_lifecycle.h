// The Kubernetes node-lifecycle hook (node_lifecycle.h), through kubectl:
//   state:  kubectl get node NODE -o jsonpath=<kNodeStateJsonPath>: out of service when
//           spec.unschedulable is true (cordoned), the wipeproof.io/drain-reason annotation is set
//           (a drain of ours an operator has not cleared), or a taint says the node is not ready,
//           unreachable, out of service or cordoned
//   drain:  kubectl annotate node NODE --overwrite wipeproof.io/drain-reason=REASON, then
//           kubectl drain NODE --ignore-daemonsets --delete-emptydir-data --timeout=<grace_s>s
//           (cordons the node and evicts every pod but DaemonSets', the agent's included, waiting
//           for them to leave; PodDisruptionBudgets are respected)
//   resume: kubectl uncordon NODE, then the annotation removed (wipeproof.io/drain-reason-)
//   keep drained: kubectl cordon NODE and the annotation set to the failure's reason
// Each command gets `--kubeconfig FILE` when the spec names one. Untested against a live cluster:
// the tests check the commands it runs (docs/operations.md says so too).
//
// Thread-safety: as NodeLifecycle.
#pragma once

#include <string>
#include <vector>

#include "challenger/fleet/node_lifecycle.h"

namespace wipeproof {

// The node annotation carrying the reason.
inline constexpr char kDrainReasonAnnotation[] = "wipeproof.io/drain-reason";

// Three lines: spec.unschedulable, the drain-reason annotation, the taints' keys (space-separated).
inline constexpr char kNodeStateJsonPath[] =
    "jsonpath={.spec.unschedulable}{\"\\n\"}{.metadata.annotations.wipeproof\\.io/drain-reason}{\"\\n\"}"
    "{range .spec.taints[*]}{.key}{\" \"}{end}";

// The state that jsonpath printed.
SchedulerState ParseKubernetesNodeState(const std::string& text);

class KubernetesLifecycle : public NodeLifecycle {
 public:
  explicit KubernetesLifecycle(LifecycleSpec spec) : spec_(std::move(spec)) {}

  StatusOr<SchedulerState> ReadState(const std::string& node) override;
  Status Drain(const std::string& node, const std::string& reason) override;
  Status Resume(const std::string& node) override;
  Status KeepDrained(const std::string& node, const std::string& reason) override;
  std::string Describe() const override { return "kubernetes"; }

 private:
  StatusOr<std::string> KubectlOutput(std::vector<std::string> args, double timeout_s) const;
  Status Kubectl(std::vector<std::string> args, double timeout_s) const {
    return KubectlOutput(std::move(args), timeout_s).status();
  }
  LifecycleSpec spec_;
};

}  // namespace wipeproof
