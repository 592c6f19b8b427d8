#include "challenger/fleet/command_lifecycle.h"

#include "common/subprocess.h"

namespace wipeproof {

namespace {
uint64_t Micros(double seconds) { return static_cast<uint64_t>(seconds * 1e6); }
}  // namespace

Status CommandLifecycle::Drain(const std::string& node, const std::string& reason) {
  return RunProcessChecked({spec_.command, "drain", node, LifecycleReasonText(reason)},
                           Micros(spec_.grace_s + spec_.command_timeout_s))
      .status();
}

Status CommandLifecycle::Resume(const std::string& node) {
  return RunProcessChecked({spec_.command, "resume", node}, Micros(spec_.command_timeout_s)).status();
}

Status CommandLifecycle::KeepDrained(const std::string& node, const std::string& reason) {
  return RunProcessChecked({spec_.command, "fail", node, LifecycleReasonText(reason)}, Micros(spec_.command_timeout_s))
      .status();
}

}  // namespace wipeproof
