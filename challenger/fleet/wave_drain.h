// A wave run's node-lifecycle steps (node_lifecycle.h): every member with a hook has its state read
// and is drained before any order goes out, and after the sessions each is resumed only if its
// verdict passed as its spec's resume policy asks (MemberEndOf); any other end leaves it drained
// with the reason
//   "wipeproof wave W: wipe FAILED: wrongLabel: ..." (or "... no bound stated: ...", "... not run: ...").
// A member already out of service for another reason (drained, down, cordoned), or whose state
// cannot be read, is left exactly as it is: not drained, not wiped, never resumed, its reason
// untouched (the wave's to give back is only what the wave took; and its work may still be running,
// which a wipe would take the memory from). A member whose drain failed is not wiped either and
// stays drained with "wipeproof wave W: drain failed: ...". Either way the wave runs on without
// it, so it is not whole. Used by RunPreparedWave (wave_run.h).
//
// Thread-safety: DrainAll runs the members' drains on threads of its own and joins them before it
// returns; call DrainAll and Settle from one thread, in that order.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "challenger/fleet/node_lifecycle.h"
#include "challenger/session/session_runner.h"
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

// How a member's wipe ended, for its resume (`policy`: its lifecycle spec's): a pass only when the
// session passed, every record reached the ledger and, under kOnBound, the verdict states a bound
// with every assumption held that can be (AssumptionCanBeEstablished: physical-binding and
// no-uncovered-memory never are, and are not waited for). Otherwise the reason: "not run: <status>", "pass not fully recorded:
// ...", "no bound stated: <statement>", "assumption <name> not held: <detail>" or
// "<failureReason>: <text>".
MemberEnd MemberEndOf(const StatusOr<SessionOutcome>& outcome, ResumePolicy policy);

// The longest a member's lifecycle steps may take in one run (seconds), each command at its
// timeout c = command_timeout_s: reading its state (c), the drain, and the resume or keep-drained
// after the sessions. slurm: c + grace_s + kRequeueWaitS + poll_s + 3c (update, requeue, last
// squeue) + c = grace_s + 60 + poll_s + 5c; kubernetes: c + c + (grace_s + c) + 2c = grace_s + 5c;
// command: c + (grace_s + c) + c = grace_s + 3c; none: 0. The rule the shipped stop timeouts follow
// (docs/operations.md "Stopping serve").
double LifecycleLongestS(const LifecycleSpec& spec);

// Receives each line a wave's drain steps report ("wave W: node N drained (slurm node S)"); may be
// called from several threads at once.
using LifecycleNotice = std::function<void(const std::string& line)>;

class WaveDrain {
 public:
  // `notice` gets every step's line; empty = glog (INFO for steps, WARNING/ERROR for failures).
  WaveDrain(std::string wave, std::vector<DrainMember> members, LifecycleNotice notice = {});

  // Reads the state of every member with a hook and drains those in service, all at once (each
  // waits for its own running work), with the reason "wipeproof wave W: wipe in progress". Returns,
  // per member in order, OK (drained, or no hook) or FAILED_PRECONDITION saying why it must not be
  // wiped: "not wiped: out of service already (<detail>); not drained or resumed by this wave",
  // "not wiped: its state could not be read: ...; left as it is", or "not wiped: the drain failed:
  // ..." (that member has been kept drained with the drain's error as its reason; best effort:
  // errors logged).
  std::vector<Status> DrainAll();

  // Gives back every member DrainAll drained, when the wave is abandoned before any order went out
  // (the challenger is stopping): nothing was wiped, and each was in service before. Returns per
  // member OK or the hook's error (also logged). Settle then does nothing.
  std::vector<Status> Abandon(const std::string& why);

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
