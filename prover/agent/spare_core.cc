#include "prover/agent/spare_core.h"

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

bool SpareCoreEnabled(SpareCoreMode mode, unsigned hardware_threads) {
  if (mode == SpareCoreMode::kAuto) return hardware_threads >= kSpareCoreMinThreads;
  return mode == SpareCoreMode::kOn;
}

}  // namespace wipeproof
