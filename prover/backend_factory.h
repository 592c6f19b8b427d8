// The one place backends are built (no self-registration). A GPU backend that cannot start is
// listed as "cuda: disabled: <reason>" and the agent carries on with the others.
// Thread-safety: CreateBackends is thread-compatible; the returned backends are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "prover/backend.h"
#include "prover/cpu_backend.h"

namespace wipeproof {

struct BackendConfig {
  bool enable_host = true;
  bool enable_cuda = true;
  bool enable_hip = true;
  CpuBackendConfig host;
};

struct BackendSet {
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<std::string> disabled;  // "cuda: disabled: <reason>"

  // All devices of all backends.
  std::vector<DeviceInfo> Devices() const;
  // The backend owning device `id`, or nullptr.
  Backend* FindByDeviceId(const std::string& id) const;
};

BackendSet CreateBackends(const BackendConfig& config);

}  // namespace wipeproof
