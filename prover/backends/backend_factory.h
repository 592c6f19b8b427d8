// The one place backends are built (no self-registration). A GPU backend that cannot start is
// listed as "cuda: disabled: <reason>" and the agent carries on with the others; so is one whose
// device faulted later (its devices are no longer offered until the agent restarts).
// Thread-safety: CreateBackends is thread-compatible; the returned backends are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "prover/backends/backend.h"
#include "prover/backends/cpu/cpu_backend.h"

namespace wipeproof {

struct BackendConfig {
  bool enable_host = true;
  bool enable_cuda = true;
  bool enable_hip = true;
  // Label host memory with the first usable GPU (gpu_host_fill.h) instead of the CPU cores.
  // Off by default: the filler needs GPU scratch, which a session that also wipes that GPU has
  // already taken; use it for host-only wipes on GPU nodes. Falls back to the CPU on any error.
  bool gpu_host_fill = false;
  CpuBackendConfig host;

  void Enable(DeviceKind kind);      // sets that kind's enable_ flag
  void EnableOnly(DeviceKind kind);  // that kind's backend and no other
};

struct BackendSet {
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<std::string> disabled;  // "cuda: disabled: <reason>": backends that did not start

  // All devices of all backends (none of a backend that became unusable).
  std::vector<DeviceInfo> Devices() const;
  // `disabled`, then "cuda: disabled: <reason>" for each backend that became unusable since
  // (Backend::unusable_reason: a device fault).
  std::vector<std::string> DisabledNow() const;
  // The backend owning device `id`, or nullptr.
  Backend* FindByDeviceId(const std::string& id) const;
};

BackendSet CreateBackends(const BackendConfig& config);

}  // namespace wipeproof
