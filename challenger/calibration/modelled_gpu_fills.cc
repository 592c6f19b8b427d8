#include "challenger/calibration/modelled_gpu_fills.h"

namespace wipeproof {

const std::vector<ModelledGpuFill>& ModelledGpuFills() {
  // `wipeproof-gpu-check model --gpu=all`: per case "gpu", the format and m of "case", "labels",
  // "predicted_total_s", and the shape's "memory_bytes" (ModelledGpuFillsSource).
  static const std::vector<ModelledGpuFill> kFills = {
      {"H200", 150754820096ull, LabelFormat::kC1, 1u << 14, 4674650112ull, 34.8153},
      {"H200", 150754820096ull, LabelFormat::kC1, 1u << 17, 4674650112ull, 52.4962},
      {"H200", 150754820096ull, LabelFormat::k192, 1u << 17, 4674551808ull, 102.731},
      {"H100", 85520809984ull, LabelFormat::kC1, 1u << 14, 2636087296ull, 19.5469},
      {"H100", 85520809984ull, LabelFormat::kC1, 1u << 17, 2636087296ull, 29.7034},
      {"H100", 85520809984ull, LabelFormat::k192, 1u << 17, 2635988992ull, 58.5509},
      {"MI300X", 205822885888ull, LabelFormat::kC1, 1u << 14, 6395527168ull, 22.46},
      {"MI300X", 205822885888ull, LabelFormat::kC1, 1u << 17, 6395527168ull, 33.4918},
      {"MI300X", 205822885888ull, LabelFormat::k192, 1u << 17, 6395527168ull, 63.5418},
  };
  return kFills;
}

std::vector<std::string> ModelledGpuShapes() { return {"H200", "H100", "MI300X"}; }

std::string ModelledGpuFillsSource() {
  return "modelled, not measured: `wipeproof-gpu-check model --gpu=all` (prover/backends/gpu/fill_model.h), run "
         "2026-12-03 on a build of commit 8615a5a, default assumptions (issue efficiency 0.92, 60 instructions per "
         "item, 700 cycles per barrier, 80 bytes per node at 0.8 of peak bandwidth; 570 instructions per compression "
         "on H100/H200 from ptxas sm_90, 600 assumed on MI300X); the shapes' figures are datasheet values "
         "(kernels/gpu/gpu_shapes.h)";
}

}  // namespace wipeproof
