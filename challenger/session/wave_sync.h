// Keeps the sessions of one wave run in step, so that every node's rounds happen while every other
// node of the wave holds its own labels (design-brief.md "What a pass proves": neighbouring nodes
// wiped in the same wave). Two barriers:
//   1. after the fill: no member starts its rounds before every member has a fill report (or
//      failed), so no member's memory is free while another is being challenged;
//   2. before release: no member frees its memory (finish or abort) before every member's rounds
//      ended. A member that failed waits here too before aborting.
// After barrier 2 each member learns which members did not hold labels throughout (failed fill or
// failed rounds); its verdict's wave-complete assumption then does not hold.
//
// Each member calls ArriveFilled once and then ArriveReleasing once, from its own thread; every
// member must arrive at both (the session runner guarantees it on every path), and each wait is
// bounded by the slowest member's own deadlines.
//
// Thread-safety: thread-safe; one object per wave run.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace wipeproof {

class WaveSync {
 public:
  explicit WaveSync(std::vector<std::string> members);

  // Barrier 1. `filled`: this member has a valid fill report.
  void ArriveFilled(const std::string& member, bool filled);
  // Barrier 2. `held`: this member filled and passed every round so far. Returns the members
  // (others than `member`) that did not hold labels throughout, in member order.
  std::vector<std::string> ArriveReleasing(const std::string& member, bool held);
  // For a member whose session ended without arriving (an error before or outside the session
  // runner): arrives at whichever barriers it has not, as not held, and waits like ArriveReleasing.
  // No-op for a member that arrived at both. Arrivals count once per member.
  void Leave(const std::string& member);

  size_t size() const { return members_.size(); }

 private:
  const std::vector<std::string> members_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t filled_arrivals_ = 0;
  size_t release_arrivals_ = 0;
  std::map<std::string, bool> ok_;           // member -> held labels throughout
  std::set<std::string> filled_, released_;  // members that arrived at barrier 1, 2
};

}  // namespace wipeproof
