#include "challenger/fleet/slurm_lifecycle.h"

#include <glog/logging.h>

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
