// The operator's own node-lifecycle hook (node_lifecycle.h): an executable run without a shell as
//   COMMAND state NODE            (command_timeout_s; prints "in-service", or "out-of-service" and
//                                 optionally a space and why, on its first line; anything else,
//                                 or a hook without `state`, is an error and the node is left alone)
//   COMMAND drain NODE REASON     (may take grace_s + command_timeout_s; exit 0 once no work runs)
//   COMMAND resume NODE           (command_timeout_s)
//   COMMAND fail NODE REASON      (keep drained with the reason; command_timeout_s)
// Exit status 0 is success; otherwise the error carries the status and the hook's stderr.
//
// Thread-safety: as NodeLifecycle.
#pragma once

#include <string>
#include <vector>

#include "challenger/fleet/node_lifecycle.h"

namespace wipeproof {

class CommandLifecycle : public NodeLifecycle {
 public:
  explicit CommandLifecycle(LifecycleSpec spec) : spec_(std::move(spec)) {}

  StatusOr<SchedulerState> ReadState(const std::string& node) override;
  Status Drain(const std::string& node, const std::string& reason) override;
  Status Resume(const std::string& node) override;
  Status KeepDrained(const std::string& node, const std::string& reason) override;
  std::string Describe() const override { return "command " + spec_.command; }

 private:
  LifecycleSpec spec_;
};

}  // namespace wipeproof
