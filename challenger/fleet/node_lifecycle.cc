#include "challenger/fleet/node_lifecycle.h"

#include "challenger/fleet/command_lifecycle.h"
#include "challenger/fleet/kubernetes_lifecycle.h"
#include "challenger/fleet/slurm_lifecycle.h"

namespace wipeproof {

std::unique_ptr<NodeLifecycle> MakeNodeLifecycle(const LifecycleSpec& spec) {
  switch (spec.kind) {
    case LifecycleKind::kNone:
      return nullptr;
    case LifecycleKind::kSlurm:
      return std::make_unique<SlurmLifecycle>(spec);
    case LifecycleKind::kKubernetes:
      return std::make_unique<KubernetesLifecycle>(spec);
    case LifecycleKind::kCommand:
      return std::make_unique<CommandLifecycle>(spec);
  }
  return nullptr;
}

std::string LifecycleReasonText(const std::string& reason) {
  constexpr size_t kMax = 240;
  std::string text;
  for (char c : reason) {
    const unsigned char u = static_cast<unsigned char>(c);
    text += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  if (text.size() > kMax) {
    size_t cut = kMax - 3;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    text = text.substr(0, cut) + "...";
  }
  if (text.find_first_not_of(' ') == std::string::npos) text = "wipeproof";
  return text;
}

}  // namespace wipeproof
