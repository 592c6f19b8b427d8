// A wave run's node-lifecycle steps (node_lifecycle.h): every member with a hook is drained before
// any order goes out, and after the sessions each is resumed only if its verdict passed; a failed
// or aborted wipe (or one that never ran) leaves it drained with the reason
//   "wipeproof wave W: wipe FAILED: wrongLabel: ..." (or "... wipe not run: ...").
// A member whose drain failed is not wiped (the wave runs on without it, so it is not whole) and
// stays drained with "wipeproof wave W: drain failed: ...". Used by RunPreparedWave (wave_run.h).
//
// Thread-safety: DrainAll runs the members' drains on threads of its own and joins them before it
// returns; call DrainAll and Settle from one thread, in that order.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "challenger/fleet/node_lifecycle.h"
#include "common/status.h"

namespace wipeproof {

// One member of a wave run and how its scheduler lets it go.
struct DrainMember {
  std::string node;               // inventory name
  std::string scheduler_name;     // its name in the scheduler (inventory scheduler_name, or node)
  NodeLifecycle* hook = nullptr;  // null: nothing to drain; not owned
};

// What a member's wipe came to.
struct MemberEnd {
  bool pass = false;
  std::string reason;  // why not, when !pass: "wrongLabel: ..." or "not run: ..."
};

// Receives each line a wave's drain steps report ("wave W: node N drained (slurm node S)"); may be
// called from several threads at once.
using LifecycleNotice = std::function<void(const std::string& line)>;

class WaveDrain {
 public:
  // `notice` gets every step's line; empty = glog (INFO for steps, WARNING/ERROR for failures).
  WaveDrain(std::string wave, std::vector<DrainMember> members, LifecycleNotice notice = {});

  // Drains every member with a hook, all at once (each waits for its own running work), with the
  // reason "wipeproof wave W: wipe in progress". Returns, per member in order, OK (drained, or no
  // hook) or why its drain failed; such a member must not be wiped, and has been kept drained with
  // the drain's error as its reason (best effort: errors logged).
  std::vector<Status> DrainAll();

  // After the wipes (`ends` per member, in order): a member drained by DrainAll is resumed when it
  // passed and kept drained with "wipeproof wave W: wipe FAILED: <reason>" otherwise. Members
  // without a hook, or whose drain failed, are left alone. Returns per member OK or the hook's
  // error (also logged).
  std::vector<Status> Settle(const std::vector<MemberEnd>& ends);

  // The reason a failed member is left drained with.
  std::string FailureReason(const std::string& why) const;

 private:
  void Say(int severity, const std::string& line) const;

  std::string wave_;
  std::vector<DrainMember> members_;
  LifecycleNotice notice_;
  std::vector<char> drained_;  // per member: drained by DrainAll (char: written from threads)
};

}  // namespace wipeproof
