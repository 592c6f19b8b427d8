#include "prover/backends/gpu/gpu_backend.h"

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "prover/backends/gpu/device_region.h"

namespace wipeproof {
namespace {

// Bytes this backend holds per device ordinal, so held_by_others_bytes can leave them out.
class HeldBytes {
 public:
  void Add(int ordinal, int64_t delta) {
    std::lock_guard<std::mutex> lock(mu_);
    held_[ordinal] += delta;
  }
  uint64_t Get(int ordinal) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(ordinal);
    return it == held_.end() || it->second < 0 ? 0 : static_cast<uint64_t>(it->second);
  }

 private:
  mutable std::mutex mu_;
  std::map<int, int64_t> held_;
};

DeviceInfo InfoFor(DeviceKind kind, const gpu::GpuDeviceProps& p, uint64_t held_here) {
  DeviceInfo d;
  d.kind = kind;
  d.id = p.id;
  d.name = p.name;
  d.ordinal = p.ordinal;
  d.total_bytes = p.total_bytes;
  d.available_bytes = p.free_bytes;
  const uint64_t used = p.total_bytes > p.free_bytes ? p.total_bytes - p.free_bytes : 0;
  d.held_by_others_bytes = used > held_here ? used - held_here : 0;
  return d;
}

class GpuMemory final : public DeviceMemory {
 public:
  GpuMemory(DeviceInfo device, std::unique_ptr<gpu::DeviceRegion> region, const GpuBackendConfig& config,
            std::shared_ptr<HeldBytes> held)
      : device_(std::move(device)), region_(std::move(region)), config_(config), held_(std::move(held)) {
    held_bytes_ = region_->bytes_held();
    held_->Add(device_.ordinal, static_cast<int64_t>(held_bytes_));
  }
  ~GpuMemory() override { Release(); }

  const DeviceInfo& device() const override { return device_; }
  uint64_t bytes_held() const override { return region_->bytes_held(); }
  uint64_t scratch_bytes() const override { return region_->scratch_bytes(); }

  Status Fill(const RegionSpec& spec, const FillOptions& options) override {
    gpu::FillControl control;
    control.progress = options.progress;
    control.cancel = options.cancel;
    gpu::FillStats stats;
    Status st = region_->Fill(spec, config_.tuning, control, &stats);
    std::lock_guard<std::mutex> lock(mu_);
    details_ = DetailsJson(stats, st);
    return st;
  }

  Status Lookup(const uint64_t* global_indices, size_t n, uint8_t* out) const override {
    return region_->Lookup(global_indices, n, out);
  }
  Status StartLookup(const uint64_t* global_indices, size_t n, uint8_t* out) const override {
    return region_->StartLookup(global_indices, n, out);
  }
  Status FinishLookup() const override { return region_->FinishLookup(); }

  void Release() override {
    region_->Release();
    if (held_bytes_ > 0) held_->Add(device_.ordinal, -static_cast<int64_t>(held_bytes_));
    held_bytes_ = 0;
  }

  std::string FillDetailsJson() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return details_;
  }

 private:
  std::string DetailsJson(const gpu::FillStats& s, const Status& st) const {
    std::string plan;
    for (char c : s.plan) plan += c == '\n' ? std::string("; ") : c == '"' ? std::string("'") : std::string(1, c);
    const gpu::MemoryAccount& a = region_->memory_account();
    return std::string("{") + "\"ok\": " + (st.ok() ? "true" : "false") +
           ", \"seconds\": " + std::to_string(s.seconds) + ", \"node_hashes\": " + std::to_string(s.nodes) +
           ", \"passes\": " + std::to_string(s.passes) + ", \"launches\": " + std::to_string(s.launches) +
           ", \"team_threads\": " + std::to_string(s.main_shape.threads) +
           ", \"team_chunks\": " + std::to_string(s.main_shape.chunks) +
           ", \"chunks_in_flight\": " + std::to_string(s.main_chunks_in_flight) +
           ", \"side_scratch_bytes\": " + std::to_string(s.side_scratch_bytes) +
           ", \"bytes_outside_label_slots_peak\": " + std::to_string(s.bytes_outside_label_slots_peak) +
           ", \"lookup_tables_bytes\": " + std::to_string(region_->lookup_tables_bytes()) +
           ", \"region_scratch_peak_bytes\": " + std::to_string(s.region_scratch_peak_bytes) +
           ", \"cv0_table_nodes\": " + std::to_string(s.cv0_table_nodes) +
           ", \"deferred_chunks\": " + std::to_string(s.deferred_chunks) +
           ", \"pieces\": " + std::to_string(region_->pieces().size()) +
           ", \"total_bytes\": " + std::to_string(a.total_bytes) +
           ", \"free_before_acquire_bytes\": " + std::to_string(a.free_before_bytes) +
           ", \"free_after_acquire_bytes\": " + std::to_string(a.free_after_bytes) +
           ", \"context_and_others_bytes\": " + std::to_string(a.context_and_others_bytes) +
           ", \"compression_checked\": " + (a.compression_checked ? "true" : "false") + ", \"plan\": \"" + plan + "\"}";
  }

  DeviceInfo device_;
  std::unique_ptr<gpu::DeviceRegion> region_;
  GpuBackendConfig config_;
  std::shared_ptr<HeldBytes> held_;
  uint64_t held_bytes_ = 0;
  mutable std::mutex mu_;
  std::string details_ = "{}";
};

class GpuBackend final : public Backend {
 public:
  GpuBackend(DeviceKind kind, std::unique_ptr<gpu::GpuRuntime> runtime, const GpuBackendConfig& config, int devices)
      : kind_(kind),
        runtime_(std::move(runtime)),
        config_(config),
        devices_(devices),
        held_(std::make_shared<HeldBytes>()) {}

  DeviceKind kind() const override { return kind_; }

  std::vector<DeviceInfo> Devices() const override {
    std::vector<DeviceInfo> out;
    if (!runtime_->Health().ok()) return out;  // a device fault: nothing is offered until a restart
    for (int i = 0; i < devices_; ++i) {
      gpu::GpuDeviceProps p;
      if (runtime_->Properties(i, &p).ok()) out.push_back(InfoFor(kind_, p, held_->Get(i)));
    }
    return out;
  }

  std::string unusable_reason() const override {
    const Status health = runtime_->Health();
    return health.ok() ? std::string() : health.message();
  }

  StatusOr<std::unique_ptr<DeviceMemory>> Acquire(const std::string& id, const AcquireOptions& options) override {
    WP_ASSIGN_OR_RETURN(int ordinal, Find(id));
    gpu::GpuDeviceProps p;
    WP_RETURN_IF_ERROR(runtime_->Properties(ordinal, &p));
    gpu::DeviceRegionOptions region_options;
    region_options.bytes = options.bytes;
    region_options.reserve_bytes = options.reserve_bytes;
    region_options.policy = config_.policy;
    WP_ASSIGN_OR_RETURN(auto region, gpu::DeviceRegion::Acquire(runtime_.get(), ordinal, region_options));
    return std::unique_ptr<DeviceMemory>(
        new GpuMemory(InfoFor(kind_, p, held_->Get(ordinal)), std::move(region), config_, held_));
  }

  StatusOr<double> MeasureCompressionRate(const std::string& id, double seconds) override {
    WP_ASSIGN_OR_RETURN(int ordinal, Find(id));
    double rate = 0;
    WP_RETURN_IF_ERROR(runtime_->MeasureCompressionRate(ordinal, seconds, &rate));
    return rate;
  }

 private:
  StatusOr<int> Find(const std::string& id) const {
    for (int i = 0; i < devices_; ++i) {
      gpu::GpuDeviceProps p;
      if (runtime_->Properties(i, &p).ok() && p.id == id) return i;
    }
    return NotFoundError(std::string("no ") + DeviceKindName(kind_) + " device '" + id + "'");
  }

  const DeviceKind kind_;
  std::unique_ptr<gpu::GpuRuntime> runtime_;
  const GpuBackendConfig config_;
  const int devices_;
  std::shared_ptr<HeldBytes> held_;
};

}  // namespace

StatusOr<std::unique_ptr<Backend>> StartGpuBackend(DeviceKind kind, std::unique_ptr<gpu::GpuRuntime> runtime,
                                                   const GpuBackendConfig& config) {
  if (!runtime) return UnavailableError("no runtime");
  int count = 0;
  Status st = runtime->DeviceCount(&count);
  if (!st.ok()) return UnavailableError(st.message());
  if (count <= 0) return UnavailableError(std::string("no ") + runtime->name() + " device");
  return std::unique_ptr<Backend>(new GpuBackend(kind, std::move(runtime), config, count));
}

}  // namespace wipeproof
