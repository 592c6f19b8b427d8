#include "challenger/fleet/command_lifecycle.h"

#include "common/subprocess.h"

namespace wipeproof {

namespace {
uint64_t Micros(double seconds) { return static_cast<uint64_t>(seconds * 1e6); }
}  // namespace

StatusOr<SchedulerState> CommandLifecycle::ReadState(const std::string& node) {
  WP_ASSIGN_OR_RETURN(std::string out,
                      RunProcessChecked({spec_.command, "state", node}, Micros(spec_.command_timeout_s)));
  const std::string line = out.substr(0, out.find('\n'));
  SchedulerState state;
  if (line == "in-service") {
    state.detail = "in service";
    return state;
  }
  const std::string out_word = "out-of-service";
  if (line.rfind(out_word, 0) == 0 && (line.size() == out_word.size() || line[out_word.size()] == ' ')) {
    state.in_service = false;
    state.detail = line.size() > out_word.size() ? "out of service: " + line.substr(out_word.size() + 1)
                                                 : std::string("out of service");
    return state;
  }
  return UnavailableError("'" + spec_.command + " state " + node +
                          "' printed neither 'in-service' nor 'out-of-service': '" + LifecycleReasonText(line) + "'");
}

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
