#include "challenger/fleet/slurm_lifecycle.h"

#include <glog/logging.h>

#include <cctype>
#include <chrono>
#include <sstream>
#include <thread>

#include "common/subprocess.h"

namespace wipeproof {

namespace {

uint64_t Micros(double seconds) { return static_cast<uint64_t>(seconds * 1e6); }

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string Joined(const std::vector<std::string>& ids) {
  std::string text;
  for (const std::string& id : ids) text += (text.empty() ? "" : ",") + id;
  return text;
}

}  // namespace

StatusOr<SchedulerState> ParseSlurmNodeState(const std::string& show_node) {
  const std::string line = show_node.substr(0, show_node.find('\n'));
  std::string state;
  std::istringstream tokens(line);
  // The first State= is the node's: free text (Reason=, Comment=, Extra=) comes after it and may
  // hold "State=DRAIN" too, which would let whoever writes a comment make a running node look
  // drained and skip its wipes.
  for (std::string token; tokens >> token;) {
    if (token.rfind("Reason=", 0) == 0 || token.rfind("Comment=", 0) == 0 || token.rfind("Extra=", 0) == 0) break;
    if (token.rfind("State=", 0) == 0) {
      state = token.substr(6);
      break;
    }
  }
  if (state.empty()) {
    return UnavailableError("scontrol show node printed no State=: '" + LifecycleReasonText(line) + "'");
  }
  std::string reason;
  const size_t at = line.find(" Reason=");
  if (at != std::string::npos) reason = line.substr(at + 8);
  static const char* const kOut[] = {"DRAIN",         "DRAINING",       "DRAINED",       "DOWN",
                                     "FAIL",          "FAILING",        "MAINT",         "REBOOT_REQUESTED",
                                     "REBOOT_ISSUED", "POWERED_DOWN",   "POWERING_DOWN", "POWER_DOWN",
                                     "FUTURE",        "NOT_RESPONDING", "UNKNOWN"};
  SchedulerState out;
  out.in_service = state.find('*') == std::string::npos;
  std::istringstream flags(state);
  for (std::string flag; std::getline(flags, flag, '+');) {
    while (!flag.empty() && !std::isalpha(static_cast<unsigned char>(flag.back()))) flag.pop_back();
    for (const char* o : kOut) out.in_service = out.in_service && flag != o;
  }
  out.detail = "state " + state + (reason.empty() || reason == "(null)" ? "" : ", reason '" + reason + "'");
  return out;
}

StatusOr<SchedulerState> SlurmLifecycle::ReadState(const std::string& node) {
  WP_ASSIGN_OR_RETURN(std::string out, RunProcessChecked({Tool("scontrol"), "-o", "show", "node", node},
                                                         Micros(spec_.command_timeout_s)));
  return ParseSlurmNodeState(out);
}

std::string SlurmLifecycle::Tool(const char* name) const {
  return spec_.bin_dir.empty() ? std::string(name) : spec_.bin_dir + "/" + name;
}

StatusOr<std::vector<std::string>> SlurmLifecycle::RunningJobs(const std::string& node) const {
  WP_ASSIGN_OR_RETURN(std::string out, RunProcessChecked({Tool("squeue"), "-h", "-w", node, "-t",
                                                          "RUNNING,COMPLETING,CONFIGURING,SUSPENDED", "-o", "%A"},
                                                         Micros(spec_.command_timeout_s)));
  std::vector<std::string> ids;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) ids.push_back(line);
  }
  return ids;
}

Status SlurmLifecycle::Drain(const std::string& node, const std::string& reason) {
  WP_RETURN_IF_ERROR(RunProcessChecked({Tool("scontrol"), "update", "nodename=" + node, "state=drain",
                                        "reason=" + LifecycleReasonText(reason)},
                                       Micros(spec_.command_timeout_s))
                         .status());
  const int64_t grace_end = NowUs() + static_cast<int64_t>(Micros(spec_.grace_s));
  bool requeued = false;
  int64_t give_up = 0;
  for (;;) {
    WP_ASSIGN_OR_RETURN(std::vector<std::string> jobs, RunningJobs(node));
    if (jobs.empty()) return Status::Ok();
    const int64_t now = NowUs();
    if (!requeued && now >= grace_end) {
      LOG(WARNING) << "slurm: node " << node << ": jobs " << Joined(jobs) << " still running after the grace period of "
                   << spec_.grace_s << " s; requeueing them";
      Status requeue =
          RunProcessChecked({Tool("scontrol"), "requeue", Joined(jobs)}, Micros(spec_.command_timeout_s)).status();
      if (!requeue.ok()) LOG(WARNING) << "slurm: node " << node << ": " << requeue.ToString();
      requeued = true;
      give_up = now + static_cast<int64_t>(Micros(kRequeueWaitS));
    } else if (requeued && now >= give_up) {
      return DeadlineExceededError("slurm node " + node + ": jobs " + Joined(jobs) + " still running " +
                                   std::to_string(static_cast<int>(spec_.grace_s + kRequeueWaitS)) +
                                   " s after the drain (grace period, then requeue); the node stays drained");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(Micros(spec_.poll_s)));
  }
}

Status SlurmLifecycle::Resume(const std::string& node) {
  return RunProcessChecked({Tool("scontrol"), "update", "nodename=" + node, "state=resume"},
                           Micros(spec_.command_timeout_s))
      .status();
}

Status SlurmLifecycle::KeepDrained(const std::string& node, const std::string& reason) {
  return RunProcessChecked(
             {Tool("scontrol"), "update", "nodename=" + node, "state=drain", "reason=" + LifecycleReasonText(reason)},
             Micros(spec_.command_timeout_s))
      .status();
}

}  // namespace wipeproof
