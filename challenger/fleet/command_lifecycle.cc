#include "challenger/fleet/command_lifecycle.h"

#include "challenger/fleet/trusted_file.h"
#include "common/subprocess.h"

namespace wipeproof {

namespace {
uint64_t Micros(double seconds) { return static_cast<uint64_t>(seconds * 1e6); }

StatusOr<std::string> RunHook(const LifecycleSpec& spec, std::vector<std::string> argv, uint64_t timeout_us) {
  WP_RETURN_IF_ERROR(CheckTrustedFile(spec.command, "command hook", TrustedFileUse::kRun));
  return RunProcessChecked(argv, timeout_us);
}
}  // namespace

StatusOr<SchedulerState> CommandLifecycle::ReadState(const std::string& node) {
  WP_ASSIGN_OR_RETURN(std::string out,
                      RunHook(spec_, {spec_.command, "state", node}, Micros(spec_.command_timeout_s)));
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
  return RunHook(spec_, {spec_.command, "drain", node, LifecycleReasonText(reason)},
                 Micros(spec_.grace_s + spec_.command_timeout_s))
      .status();
}

Status CommandLifecycle::Resume(const std::string& node) {
  return RunHook(spec_, {spec_.command, "resume", node}, Micros(spec_.command_timeout_s)).status();
}

Status CommandLifecycle::KeepDrained(const std::string& node, const std::string& reason) {
  return RunHook(spec_, {spec_.command, "fail", node, LifecycleReasonText(reason)}, Micros(spec_.command_timeout_s))
      .status();
}

}  // namespace wipeproof
