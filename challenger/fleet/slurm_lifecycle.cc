#include "challenger/fleet/slurm_lifecycle.h"

#include <glog/logging.h>

#include <cctype>
#include <chrono>
#include <sstream>
#include <thread>

#include "challenger/fleet/trusted_file.h"
#include "common/credential_file.h"
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
  WP_ASSIGN_OR_RETURN(std::string out, Run({Tool("scontrol"), "-o", "show", "node", node}));
  return ParseSlurmNodeState(out);
}

std::string SlurmLifecycle::Tool(const char* name) const {
  return spec_.bin_dir.empty() ? std::string(name) : spec_.bin_dir + "/" + name;
}

StatusOr<std::vector<std::string>> SlurmLifecycle::Environment() const {
  std::vector<std::string> env;
  if (!spec_.slurm_conf.empty()) env.push_back("SLURM_CONF=" + spec_.slurm_conf);
  if (spec_.token_file.empty()) return env;
  // A token read fresh for every command: the refresh may replace it any time.
  auto text = ReadCredentialFile(spec_.token_file, 64 * 1024);
  if (!text.ok()) return Status(text.status().code(), "slurm token_file: " + text.status().message());
  std::string token = *text;
  if (token.rfind("SLURM_JWT=", 0) == 0) token = token.substr(10);  // as `scontrol token` prints it
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty() || token.find_first_of(" \t\n\r") != std::string::npos) {
    return UnavailableError("slurm token_file " + spec_.token_file + ": want one token (`scontrol token` output)");
  }
  env.push_back("SLURM_JWT=" + token);
  return env;
}

StatusOr<std::string> SlurmLifecycle::Run(const std::vector<std::string>& argv) const {
  // Run or read with the challenger's rights: no other user may be able to change them.
  WP_RETURN_IF_ERROR(CheckTrustedFile(argv.front(), "slurm bin_dir's", TrustedFileUse::kRun));
  if (!spec_.slurm_conf.empty())
    WP_RETURN_IF_ERROR(CheckTrustedFile(spec_.slurm_conf, "slurm_conf", TrustedFileUse::kRead));
  WP_ASSIGN_OR_RETURN(std::vector<std::string> env, Environment());
  return RunProcessChecked(argv, Micros(spec_.command_timeout_s), env);
}

StatusOr<std::vector<std::string>> SlurmLifecycle::RunningJobs(const std::string& node) const {
  WP_ASSIGN_OR_RETURN(std::string out, Run({Tool("squeue"), "-h", "-w", node, "-t",
                                            "RUNNING,COMPLETING,CONFIGURING,SUSPENDED", "-o", "%A"}));
  std::vector<std::string> ids;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) ids.push_back(line);
  }
  return ids;
}

Status SlurmLifecycle::Drain(const std::string& node, const std::string& reason) {
  WP_RETURN_IF_ERROR(
      Run({Tool("scontrol"), "update", "nodename=" + node, "state=drain", "reason=" + LifecycleReasonText(reason)})
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
      Status requeue = Run({Tool("scontrol"), "requeue", Joined(jobs)}).status();
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
  return Run({Tool("scontrol"), "update", "nodename=" + node, "state=resume"}).status();
}

Status SlurmLifecycle::KeepDrained(const std::string& node, const std::string& reason) {
  return Run({Tool("scontrol"), "update", "nodename=" + node, "state=drain", "reason=" + LifecycleReasonText(reason)})
      .status();
}

}  // namespace wipeproof
