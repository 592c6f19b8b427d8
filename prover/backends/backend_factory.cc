#include "prover/backends/backend_factory.h"

#include "prover/backends/gpu/gpu_runtimes.h"
#include "prover/backends/gpu/gpu_host_fill.h"

#include <memory>

namespace wipeproof {

const char* DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kHost: return "host";
    case DeviceKind::kCuda: return "cuda";
    case DeviceKind::kHip: return "hip";
  }
  return "unknown";
}

bool DeviceKindFromName(const std::string& name, DeviceKind* kind) {
  for (DeviceKind k : {DeviceKind::kHost, DeviceKind::kCuda, DeviceKind::kHip}) {
    if (name == DeviceKindName(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

void BackendConfig::EnableOnly(DeviceKind kind) {
  enable_host = kind == DeviceKind::kHost;
  enable_cuda = kind == DeviceKind::kCuda;
  enable_hip = kind == DeviceKind::kHip;
}

void BackendConfig::Enable(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kHost: enable_host = true; break;
    case DeviceKind::kCuda: enable_cuda = true; break;
    case DeviceKind::kHip: enable_hip = true; break;
  }
}

std::vector<DeviceInfo> BackendSet::Devices() const {
  std::vector<DeviceInfo> all;
  for (const auto& b : backends) {
    for (auto& d : b->Devices()) all.push_back(std::move(d));
  }
  return all;
}

std::vector<std::string> BackendSet::DisabledNow() const {
  std::vector<std::string> out = disabled;
  for (const auto& b : backends) {
    const std::string why = b->unusable_reason();
    if (!why.empty()) out.push_back(std::string(DeviceKindName(b->kind())) + ": disabled: " + why);
  }
  return out;
}

Backend* BackendSet::FindByDeviceId(const std::string& id) const {
  for (const auto& b : backends) {
    for (const auto& d : b->Devices()) {
      if (d.id == id) return b.get();
    }
  }
  return nullptr;
}

BackendSet CreateBackends(const BackendConfig& config) {
  BackendSet set;
  auto add_gpu = [&set](const char* name, StatusOr<std::unique_ptr<Backend>> made) {
    if (made.ok()) {
      set.backends.push_back(std::move(made).value());
    } else {
      set.disabled.push_back(std::string(name) + ": disabled: " + made.status().message());
    }
  };
  // GPUs first: when one is present, the host backend may use it to label host memory.
  if (config.enable_cuda) add_gpu("cuda", MakeCudaBackend());
  if (config.enable_hip) add_gpu("hip", MakeHipBackend());
  if (config.enable_host) {
    CpuBackendConfig host = config.host;
    if (config.gpu_host_fill) {
      auto filler = MakeGpuHostFiller();
      if (filler.ok()) {
        std::shared_ptr<GpuHostFiller> gpu(std::move(filler).value());
        host.host_filler.name = gpu->device();
        host.host_filler.fill = [gpu](uint8_t* memory, const RegionSpec& plan, const FillOptions& options) {
          return gpu->Fill(memory, plan, options);
        };
      } else {
        set.disabled.push_back("host gpu-fill: disabled: " + filler.status().message());
      }
    }
    set.backends.push_back(MakeCpuBackend(host));
  }
  return set;
}

}  // namespace wipeproof
