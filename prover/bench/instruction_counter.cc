#include "prover/bench/instruction_counter.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace wipeproof {

void InstructionCounter::OpenForThisThread() {
  if (fd_ >= 0) close(fd_);
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_INSTRUCTIONS;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  fd_ = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1 /* any CPU */, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd_ < 0) {
    const int error = errno;
    reason_ = std::string("perf_event_open: ") + std::strerror(error) +
              (error == ENOENT || error == EOPNOTSUPP ? " (no hardware counter here: a virtual machine?)"
               : error == EACCES || error == EPERM    ? " (see /proc/sys/kernel/perf_event_paranoid)"
                                                      : "");
  } else {
    reason_.clear();
  }
}

InstructionCounter::~InstructionCounter() {
  if (fd_ >= 0) close(fd_);
}

uint64_t InstructionCounter::Read() const {
  if (fd_ < 0) return 0;
  uint64_t value = 0;
  if (read(fd_, &value, sizeof value) != static_cast<ssize_t>(sizeof value)) return 0;
  return value;
}

}  // namespace wipeproof
