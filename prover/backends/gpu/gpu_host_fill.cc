#include "prover/backends/gpu/gpu_host_fill.h"

#include <cstring>
#include <utility>

#include "kernels/graph_schedule.h"
#include "prover/backends/gpu/device_region.h"

namespace wipeproof {

StatusOr<std::unique_ptr<GpuHostFiller>> GpuHostFiller::Create(std::unique_ptr<gpu::GpuRuntime> runtime, int ordinal,
                                                               uint64_t scratch_bytes) {
  if (!runtime) return UnavailableError("no GPU runtime");
  int count = 0;
  Status st = runtime->DeviceCount(&count);
  if (!st.ok()) return UnavailableError(st.message());
  if (ordinal < 0 || ordinal >= count) {
    return UnavailableError(std::string("no ") + runtime->name() + " device " + std::to_string(ordinal));
  }
  gpu::GpuDeviceProps props;
  WP_RETURN_IF_ERROR(runtime->Properties(ordinal, &props));
  std::string device = std::string(runtime->name()) + ":" + props.id;
  return std::unique_ptr<GpuHostFiller>(new GpuHostFiller(std::move(runtime), ordinal, scratch_bytes, device));
}

Status GpuHostFiller::Fill(uint8_t* host, const RegionSpec& plan, const FillOptions& options) {
  WP_ASSIGN_OR_RETURN(auto region,
                      gpu::DeviceRegion::AdoptHostMemory(runtime_.get(), ordinal_, host, plan.count * kLabelBytes));
  gpu::FillTuning tuning;
  tuning.side_scratch_bytes = scratch_bytes_;  // halves on RESOURCE_EXHAUSTED down to one chunk
  gpu::FillControl control;
  control.progress = options.progress;
  control.cancel = options.cancel;
  Status st = region->Fill(plan, tuning, control);
  region->Release();  // unpins; the labels stay in host memory
  return st.ok() ? st : st.WithContext("GPU fill of host memory on " + device_);
}

}  // namespace wipeproof
