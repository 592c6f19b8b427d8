// Modelled fill figures of the named GPU shapes, for `plan`'s economics (plan_economics.h): what the
// device model (prover/backends/gpu/fill_model.h, run by `wipeproof-gpu-check model --gpu=all`)
// predicts for a fill of all memory of one H200, H100 and MI300X (kernels/gpu/gpu_shapes.h). The
// challenger links no GPU code (tests/challenger/cli/links_no_gpu_runtime.sh) and never includes
// prover/, so the model's output is carried here as data, copied from one run of that command
// (ModelledGpuFillsSource says which). Every figure is MODELLED: one H200 run measured these fills
// 1.10-1.43x slower (docs/benchmarks.md "The first H200 run"), so they are lower bounds on a fill's
// time. ctest `modelled_gpu_fills_match_model` reruns the model and fails when a figure here is
// more than 3% off it; plan_economics_test checks the names and memory sizes against gpu_shapes.h.
//
// Units: bytes, labels (32 bytes each), seconds.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/label_spec.h"

namespace wipeproof {

struct ModelledGpuFill {
  std::string shape;          // as gpu_shapes.h names it: "H200", "H100", "MI300X"
  uint64_t memory_bytes = 0;  // the device's total memory as its runtime reports it (gpu_shapes.h)
  LabelFormat format = LabelFormat::kC1;
  uint32_t chunk_labels = 0;  // m the model ran at
  uint64_t labels = 0;        // labels the modelled fill wrote (all memory less the context)
  double fill_s = 0;          // the model's predicted_total_s
  double BytesPerSecond() const { return static_cast<double>(labels) * 32 / fill_s; }
};

// The figures, grouped by shape in ModelledGpuShapes() order: c1 at m = 2^14 and 2^17, 192 at 2^17.
const std::vector<ModelledGpuFill>& ModelledGpuFills();
// The shapes, in the order the economics prints them: "H200", "H100", "MI300X".
std::vector<std::string> ModelledGpuShapes();
// One line: the command, the commit it was built from, the date, and the model's assumptions.
std::string ModelledGpuFillsSource();

}  // namespace wipeproof
