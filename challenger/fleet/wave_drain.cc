#include "challenger/fleet/wave_drain.h"

#include <glog/logging.h>

#include <thread>

namespace wipeproof {

WaveDrain::WaveDrain(std::string wave, std::vector<DrainMember> members, LifecycleNotice notice)
    : wave_(std::move(wave)), members_(std::move(members)), notice_(std::move(notice)), drained_(members_.size(), 0) {}

void WaveDrain::Say(int severity, const std::string& line) const {
  if (notice_) {
    notice_("wave " + wave_ + ": " + line);
  } else {
    LOG_AT_LEVEL(severity) << "wave " << wave_ << ": " << line;
  }
}

std::string WaveDrain::FailureReason(const std::string& why) const {
  return LifecycleReasonText("wipeproof wave " + wave_ + ": wipe FAILED: " + why);
}

std::vector<Status> WaveDrain::DrainAll() {
  std::vector<Status> result(members_.size(), Status::Ok());
  const std::string reason = "wipeproof wave " + wave_ + ": wipe in progress";
  std::vector<std::thread> threads;
  for (size_t i = 0; i < members_.size(); ++i) {
    if (members_[i].hook == nullptr) continue;
    threads.emplace_back([&, i] {
      const DrainMember& m = members_[i];
      Say(google::GLOG_INFO, "draining node " + m.node + " (" + m.hook->Describe() + " node " + m.scheduler_name + ")");
      result[i] = m.hook->Drain(m.scheduler_name, reason);
      if (result[i].ok()) {
        drained_[i] = 1;
        Say(google::GLOG_INFO, "node " + m.node + " drained");
        return;
      }
      Say(google::GLOG_ERROR, "node " + m.node + " not wiped: drain failed: " + result[i].ToString());
      Status kept = m.hook->KeepDrained(
          m.scheduler_name, LifecycleReasonText("wipeproof wave " + wave_ + ": drain failed: " + result[i].message()));
      if (!kept.ok()) Say(google::GLOG_ERROR, "node " + m.node + ": " + kept.ToString());
    });
  }
  for (std::thread& t : threads) t.join();
  return result;
}

std::vector<Status> WaveDrain::Settle(const std::vector<MemberEnd>& ends) {
  std::vector<Status> result(members_.size(), Status::Ok());
  for (size_t i = 0; i < members_.size() && i < ends.size(); ++i) {
    if (!drained_[i]) continue;
    const DrainMember& m = members_[i];
    if (ends[i].pass) {
      result[i] = m.hook->Resume(m.scheduler_name);
      if (result[i].ok()) {
        Say(google::GLOG_INFO, "node " + m.node + " passed and was resumed");
      } else {
        Say(google::GLOG_ERROR, "node " + m.node + " passed but could not be resumed: " + result[i].ToString());
      }
    } else {
      const std::string reason = FailureReason(ends[i].reason);
      result[i] = m.hook->KeepDrained(m.scheduler_name, reason);
      Say(google::GLOG_WARNING,
          "node " + m.node + " stays drained: " + reason +
              (result[i].ok() ? "" : " (could not set the reason: " + result[i].ToString() + ")"));
    }
  }
  return result;
}

}  // namespace wipeproof
