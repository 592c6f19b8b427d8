// The Kubernetes node-lifecycle hook (node_lifecycle.h), through kubectl:
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

class KubernetesLifecycle : public NodeLifecycle {
 public:
  explicit KubernetesLifecycle(LifecycleSpec spec) : spec_(std::move(spec)) {}

  Status Drain(const std::string& node, const std::string& reason) override;
  Status Resume(const std::string& node) override;
  Status KeepDrained(const std::string& node, const std::string& reason) override;
  std::string Describe() const override { return "kubernetes"; }

 private:
  Status Kubectl(std::vector<std::string> args, double timeout_s) const;
  LifecycleSpec spec_;
};

}  // namespace wipeproof
