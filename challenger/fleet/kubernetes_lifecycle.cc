#include "challenger/fleet/kubernetes_lifecycle.h"

#include <sstream>

#include "challenger/fleet/trusted_file.h"
#include "common/subprocess.h"

namespace wipeproof {

SchedulerState ParseKubernetesNodeState(const std::string& text) {
  std::istringstream lines(text);
  std::string unschedulable, reason, taints;
  std::getline(lines, unschedulable);
  std::getline(lines, reason);
  std::getline(lines, taints);
  static const char* const kOutTaints[] = {"node.kubernetes.io/unschedulable", "node.kubernetes.io/not-ready",
                                           "node.kubernetes.io/unreachable", "node.kubernetes.io/out-of-service",
                                           "node.kubernetes.io/network-unavailable"};
  SchedulerState out;
  std::vector<std::string> why;
  // Our drain-reason annotation says why a cordon is there; alone (a node uncordoned by hand keeps
  // it) it takes nothing out of service, so it cannot make a schedulable node skip its wipes.
  if (unschedulable == "true") {
    why.push_back("cordoned (spec.unschedulable)");
    if (!reason.empty()) why.push_back(std::string(kDrainReasonAnnotation) + " '" + reason + "'");
  }
  std::istringstream keys(taints);
  for (std::string key; keys >> key;) {
    for (const char* t : kOutTaints) {
      if (key == t) why.push_back("taint " + key);
    }
  }
  for (const std::string& w : why) out.detail += (out.detail.empty() ? "" : ", ") + w;
  out.in_service = why.empty();
  if (out.in_service) out.detail = "schedulable";
  return out;
}

StatusOr<SchedulerState> KubernetesLifecycle::ReadState(const std::string& node) {
  WP_ASSIGN_OR_RETURN(std::string out,
                      KubectlOutput({"get", "node", node, "-o", kNodeStateJsonPath}, spec_.command_timeout_s));
  return ParseKubernetesNodeState(out);
}

StatusOr<std::string> KubernetesLifecycle::KubectlOutput(std::vector<std::string> args, double timeout_s) const {
  std::vector<std::string> argv = {spec_.bin_dir.empty() ? std::string("kubectl") : spec_.bin_dir + "/kubectl"};
  if (!spec_.kubeconfig.empty()) {
    argv.push_back("--kubeconfig");
    argv.push_back(spec_.kubeconfig);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  // Run or read with the challenger's rights (a kubeconfig's `exec` user runs code): no other user
  // may be able to change them.
  WP_RETURN_IF_ERROR(CheckTrustedFile(argv.front(), "kubernetes bin_dir's", TrustedFileUse::kRun));
  if (!spec_.kubeconfig.empty())
    WP_RETURN_IF_ERROR(CheckTrustedFile(spec_.kubeconfig, "kubeconfig", TrustedFileUse::kRead));
  return RunProcessChecked(argv, static_cast<uint64_t>(timeout_s * 1e6));
}

Status KubernetesLifecycle::Drain(const std::string& node, const std::string& reason) {
  WP_RETURN_IF_ERROR(Kubectl({"annotate", "node", node, "--overwrite",
                              std::string(kDrainReasonAnnotation) + "=" + LifecycleReasonText(reason)},
                             spec_.command_timeout_s));
  const int grace = static_cast<int>(spec_.grace_s);
  return Kubectl(
      {"drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=" + std::to_string(grace) + "s"},
      spec_.grace_s + spec_.command_timeout_s);
}

Status KubernetesLifecycle::Resume(const std::string& node) {
  WP_RETURN_IF_ERROR(Kubectl({"uncordon", node}, spec_.command_timeout_s));
  return Kubectl({"annotate", "node", node, std::string(kDrainReasonAnnotation) + "-"}, spec_.command_timeout_s);
}

Status KubernetesLifecycle::KeepDrained(const std::string& node, const std::string& reason) {
  WP_RETURN_IF_ERROR(Kubectl({"cordon", node}, spec_.command_timeout_s));
  return Kubectl({"annotate", "node", node, "--overwrite",
                  std::string(kDrainReasonAnnotation) + "=" + LifecycleReasonText(reason)},
                 spec_.command_timeout_s);
}

}  // namespace wipeproof
