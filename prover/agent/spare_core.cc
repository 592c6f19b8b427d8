#include "prover/agent/spare_core.h"

#include <sched.h>

#include <thread>

namespace wipeproof {

bool SpareCoreModeFromName(const std::string& name, SpareCoreMode* mode) {
  if (name == "auto") {
    *mode = SpareCoreMode::kAuto;
  } else if (name == "on") {
    *mode = SpareCoreMode::kOn;
  } else if (name == "off") {
    *mode = SpareCoreMode::kOff;
  } else {
    return false;
  }
  return true;
}

unsigned UsableHardwareThreads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return static_cast<unsigned>(count);
  }
  return std::thread::hardware_concurrency();
}

bool SpareCoreEnabled(SpareCoreMode mode, unsigned hardware_threads) {
  if (mode == SpareCoreMode::kAuto) return hardware_threads >= kSpareCoreMinThreads;
  return mode == SpareCoreMode::kOn;
}

}  // namespace wipeproof
