// The authority's node-lifecycle hook (node_lifecycle.h; it runs as the challenger's user, so it is
// the authority's code, docs/operations.md): an executable run without a shell as
//   COMMAND state NODE            (command_timeout_s; prints "in-service", or "out-of-service" and
//                                 optionally a space and why, on its first line; anything else,
//                                 or a hook without `state`, is an error and the node is left alone)
//   COMMAND drain NODE REASON     (may take grace_s + command_timeout_s; exit 0 once no work runs)
//   COMMAND resume NODE           (command_timeout_s)
//   COMMAND fail NODE REASON      (keep drained with the reason; command_timeout_s)
// Exit status 0 is success; otherwise the error carries the status and the hook's stderr. Before
// each action a hook given by path is checked: PERMISSION_DENIED, and the hook not run, when a user
// other than root or this process's owns it or a folder above it, when group or others may write it
// or its own folder, or a folder above that without the sticky bit (for the path as given and for
// the file a link resolves to). A bare name (found in PATH) is not checked.
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
