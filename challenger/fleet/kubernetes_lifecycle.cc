#include "challenger/fleet/kubernetes_lifecycle.h"

#include "common/subprocess.h"

namespace wipeproof {

Status KubernetesLifecycle::Kubectl(std::vector<std::string> args, double timeout_s) const {
  std::vector<std::string> argv = {spec_.bin_dir.empty() ? std::string("kubectl") : spec_.bin_dir + "/kubectl"};
  if (!spec_.kubeconfig.empty()) {
    argv.push_back("--kubeconfig");
    argv.push_back(spec_.kubeconfig);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcessChecked(argv, static_cast<uint64_t>(timeout_s * 1e6)).status();
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
