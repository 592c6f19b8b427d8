// The device model's side of wipeproof-gpu-check (prover/backends/gpu/fill_model.h): the model of
// a fill plan as JSON with its assumptions, the named shape a real device resembles (so a fill on
// a GPU prints modelled and measured figures side by side), and the `model` step: issue 12's
// cases planned on a named GPU shape (the dry run) and modelled against the targets.
// Every figure this prints is labelled "modelled".
//
// Thread-safety: thread-compatible.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/gpu/gpu_runtime.h"
#include "kernels/gpu/gpu_shapes.h"
#include "kernels/region_labeler.h"
#include "prover/backends/gpu/device_region.h"
#include "prover/backends/gpu/fill_model.h"
#include "prover/backends/gpu/lookup_model.h"
#include "prover/bench/gpu_check_json.h"

namespace wipeproof {
namespace gpu {

// The model of `stats` (a fill of `spec`) on `shape`. Builds the programs the plan ran, and times
// that on this machine as the host's setup.
FillModel ModelPlan(const GpuShape& shape, const RegionSpec& spec, const FillStats& stats,
                    ModelAssumptions assumptions = {});

// The model's assumptions and the shape's figures, with their sources.
Json AssumptionsJson(const GpuShape& shape, const ModelAssumptions& a);
// The whole model: totals, the tail's share, lane use, and one entry per launch.
Json ModelJson(const FillModel& m);

// The lookup model (lookup_model.h) of q labels on 1 and on 8 streams started together, with its
// assumptions: what `lookup` measures as "together".
Json LookupModelJson(uint32_t labels_per_stream);

// The named shape a real device resembles by name (H200, H100, MI300X), with the device's own
// multiprocessor count and memory. Returns false when it resembles none.
bool ShapeForDevice(const GpuDeviceProps& props, GpuShape* shape);

// The `model` step: for each named shape (or the one `gpu` names), plans a fill of all memory at
// c1 m = 2^14, c1 m = 2^17 and 192 m = 2^17 on a dry-run device of that shape and models it;
// on the H200 shape against issue 12's targets. Returns 0, or 2 for an unknown shape.
int StepModel(const std::string& gpu, const ModelAssumptions& assumptions, Json* out);

}  // namespace gpu
}  // namespace wipeproof
