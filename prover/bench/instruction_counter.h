// Instructions retired in user space by one thread, from the kernel's hardware counter
// (perf_event_open(2), PERF_COUNT_HW_INSTRUCTIONS). Instruction counts stay stable on a shared
// machine where times do not, so the benchmarks report them beside times where they can. Many
// virtual machines expose no counter, and perf_event_paranoid may forbid it: the counter is then
// unavailable, Read() returns 0 and unavailable_reason() says why.
//
// Thread-safety: the counter counts the thread that opened it; Read() may be called from any thread.
#pragma once

#include <cstdint>
#include <string>

namespace wipeproof {

class InstructionCounter {
 public:
  enum Deferred { kDeferred };
  // Opens the counter for the calling thread.
  InstructionCounter() { OpenForThisThread(); }
  // Opens nothing yet: call OpenForThisThread on the thread to count.
  explicit InstructionCounter(Deferred) : reason_("not opened") {}
  ~InstructionCounter();
  InstructionCounter(const InstructionCounter&) = delete;
  InstructionCounter& operator=(const InstructionCounter&) = delete;

  void OpenForThisThread();
  bool available() const { return fd_ >= 0; }
  const std::string& unavailable_reason() const { return reason_; }
  // Instructions since opening; 0 when unavailable.
  uint64_t Read() const;

 private:
  int fd_ = -1;
  std::string reason_;
};

}  // namespace wipeproof
