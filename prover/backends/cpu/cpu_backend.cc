#include "prover/backends/cpu/cpu_backend.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include <glog/logging.h>

#include "kernels/graph_schedule.h"
#include "kernels/region_labeler.h"
#include "prover/backends/cpu/locked_memory.h"

namespace wipeproof {
namespace {

constexpr char kHostDeviceId[] = "host";

// Acquired host memory: a LockedMemory plus the plan it was last filled with.
class HostMemory final : public DeviceMemory {
 public:
  HostMemory(DeviceInfo device, LockedMemory memory, SimdLevel simd, HostFiller filler)
      : device_(std::move(device)), memory_(std::move(memory)), simd_(simd), filler_(std::move(filler)) {}
  ~HostMemory() override { Release(); }

  const DeviceInfo& device() const override { return device_; }
  uint64_t bytes_held() const override { return memory_.size(); }

  Status Fill(const RegionSpec& plan, const FillOptions& options) override {
    if (memory_.data() == nullptr) return FailedPreconditionError("host memory was released");
    if (plan.count > label_capacity()) {
      return InvalidArgumentError("plan of " + std::to_string(plan.count) + " labels exceeds the " +
                                  std::to_string(label_capacity()) + " labels (" + std::to_string(bytes_held()) +
                                  " bytes) held on " + device_.id);
    }
    WP_RETURN_IF_ERROR(ValidateRegion(plan));
    filled_ = false;  // a failed or cancelled fill leaves nothing to look up
    filled_by_ = "cpu";
    if (filler_.fill) {
      Status external = filler_.fill(memory_.data(), plan, options);
      if (external.ok()) {
        filled_by_ = filler_.name;
        plan_ = plan;
        filled_ = true;
        return Status::Ok();
      }
      if (options.cancel && options.cancel->load()) return external;
      LOG(WARNING) << "host fill by " << filler_.name << " failed, labeling on the CPU: " << external.ToString();
    }
    RegionLabelOptions labeler;
    labeler.threads = options.threads;
    labeler.simd = simd_;
    labeler.progress = options.progress;
    labeler.cancel = options.cancel;
    WP_RETURN_IF_ERROR(LabelRegion(plan, memory_.data(), labeler));
    plan_ = plan;
    filled_ = true;
    return Status::Ok();
  }

  Status Lookup(const uint64_t* global_indices, size_t n, uint8_t* out) const override {
    if (memory_.data() == nullptr) return FailedPreconditionError("host memory was released");
    if (!filled_) return FailedPreconditionError("no labels to look up: host memory has not been filled");
    const uint64_t end = plan_.first + plan_.count;
    // Every index is checked (nothing is written for a refused lookup) and its label's cache line
    // requested first; the copies then find most lines arriving together instead of waiting for
    // each miss in turn (a round's labels lie in distinct random chunks: one miss each).
    for (size_t i = 0; i < n; ++i) {
      const uint64_t g = global_indices[i];
      if (g < plan_.first || g >= end) {
        return InvalidArgumentError("label index " + std::to_string(g) + " is outside the filled range [" +
                                    std::to_string(plan_.first) + ", " + std::to_string(end) + ")");
      }
      __builtin_prefetch(memory_.data() + (g - plan_.first) * kLabelBytes);
    }
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(out + i * kLabelBytes, memory_.data() + (global_indices[i] - plan_.first) * kLabelBytes, kLabelBytes);
    }
    return Status::Ok();
  }

  std::string FillDetailsJson() const override {
    if (!filled_) return "{}";
    std::string name;
    for (char c : filled_by_) {
      if (c == '"' || c == '\\') name += '\\';
      if (static_cast<unsigned char>(c) >= 0x20) name += c;
    }
    return "{\"filled_by\": \"" + name + "\"}";
  }

  void Release() override {
    filled_ = false;
    memory_.Release();
  }

 private:
  DeviceInfo device_;
  LockedMemory memory_;
  SimdLevel simd_;
  HostFiller filler_;
  RegionSpec plan_;
  bool filled_ = false;
  std::string filled_by_;  // "cpu" or the filler's name
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(CpuBackendConfig config) : config_(std::move(config)) {}

  DeviceKind kind() const override { return DeviceKind::kHost; }

  std::vector<DeviceInfo> Devices() const override {
    auto info = ReadInfo();
    if (!info.ok()) {
      LOG(WARNING) << "host memory size unknown: " << info.status().ToString();
      return {DeviceFor(HostMemInfo{})};
    }
    return {DeviceFor(*info)};
  }

  StatusOr<std::unique_ptr<DeviceMemory>> Acquire(const std::string& id, const AcquireOptions& options) override {
    if (id != kHostDeviceId) return NotFoundError("no host device '" + id + "' (the host device is \"host\")");
    WP_ASSIGN_OR_RETURN(HostMemInfo info, ReadInfo());
    const uint64_t page = PageBytes();
    uint64_t bytes = 0;
    if (options.bytes > 0) {
      if (options.bytes > info.available_bytes) {
        return ResourceExhaustedError("host memory budget of " + std::to_string(options.bytes) +
                                      " bytes exceeds MemAvailable (" + std::to_string(info.available_bytes) +
                                      " bytes); free memory or ask for less");
      }
      bytes = options.bytes / page * page;
    } else {
      const uint64_t reserve = std::max(options.reserve_bytes, config_.min_reserve_bytes);
      if (info.available_bytes <= reserve) {
        return ResourceExhaustedError("host MemAvailable (" + std::to_string(info.available_bytes) +
                                      " bytes) is not above the reserve (" + std::to_string(reserve) + " bytes)");
      }
      bytes = (info.available_bytes - reserve) / page * page;
    }
    if (bytes == 0) {
      return InvalidArgumentError("host memory budget of " + std::to_string(options.bytes) +
                                  " bytes is less than one page (" + std::to_string(page) + " bytes)");
    }
    MemlockLimit limit = config_.memlock_limit ? config_.memlock_limit() : ReadMemlockLimit();
    WP_RETURN_IF_ERROR(CheckMemlockLimit(bytes, limit));
    WP_ASSIGN_OR_RETURN(LockedMemory memory, LockedMemory::Map(bytes));
    return std::unique_ptr<DeviceMemory>(new HostMemory(DeviceFor(info), std::move(memory), config_.simd, config_.host_filler));
  }

 private:
  StatusOr<HostMemInfo> ReadInfo() const {
    return config_.meminfo ? config_.meminfo() : ReadMemInfo(config_.meminfo_path);
  }

  static DeviceInfo DeviceFor(const HostMemInfo& info) {
    DeviceInfo d;
    d.kind = DeviceKind::kHost;
    d.id = kHostDeviceId;
    d.name = "host memory";  // its size is total_bytes (printed beside the name)
    d.ordinal = 0;
    d.total_bytes = info.total_bytes;
    d.available_bytes = info.available_bytes;
    return d;
  }

  const CpuBackendConfig config_;
};

}  // namespace

std::unique_ptr<Backend> MakeCpuBackend(const CpuBackendConfig& config) {
  return std::make_unique<CpuBackend>(config);
}

}  // namespace wipeproof
