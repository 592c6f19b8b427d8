#include "kernels/gpu/gpu_shapes.h"

#include <algorithm>
#include <cctype>

namespace wipeproof {
namespace gpu {

GpuShape H200Shape() {
  GpuShape s;
  s.name = "H200";
  s.multiprocessors = 132;
  s.clock_hz = 1.98e9;
  s.memory_bytes = 143771ull << 20;  // 140.4 GiB
  s.context_bytes = 600ull << 20;
  s.memory_bytes_per_s = 4.8e12;
  s.sources =
      "NVIDIA H200 SXM datasheet (132 SMs, 1980 MHz max boost, 4.8 TB/s); Hopper: 64 INT32 lanes per SM in 4 "
      "sub-partitions, 64K registers, 2048 threads, 32 blocks per SM, 227 KiB of shared memory per block (opt-in); "
      "memory total as nvidia-smi prints it "
      "(143771 MiB); context assumed 600 MiB; FillKernel registers from ptxas sm_90 (nvcc 13) on this commit; "
      "570 instructions per compression: issue 12's ptxas count";
  return s;
}

GpuShape H100Shape() {
  GpuShape s = H200Shape();
  s.name = "H100";
  s.memory_bytes = 81559ull << 20;  // 79.6 GiB
  s.memory_bytes_per_s = 3.35e12;
  s.sources =
      "NVIDIA H100 SXM5 datasheet (132 SMs, 1980 MHz max boost, 3.35 TB/s); otherwise as H200 (same SM); memory "
      "total as nvidia-smi prints it (81559 MiB); context assumed 600 MiB";
  return s;
}

GpuShape Mi300xShape() {
  GpuShape s;
  s.name = "MI300X";
  s.multiprocessors = 304;
  s.subpartitions = 4;
  s.int_lanes_per_subpartition = 16;
  s.warp_width = 64;
  s.clock_hz = 2.1e9;
  s.memory_bytes = 196288ull << 20;  // 191.7 GiB
  s.context_bytes = 600ull << 20;
  s.memory_bytes_per_s = 5.3e12;
  s.max_threads_per_multiprocessor = 2048;
  s.max_blocks_per_multiprocessor = 32;
  s.max_warps_per_subpartition = 8;
  s.shared_bytes_per_block = 64 * 1024;  // CDNA3: 64 KiB LDS per CU
  s.registers_per_subpartition = 512 * 64;  // 512 VGPRs per lane, 64 lanes per SIMD
  s.register_granule = 8;
  s.fill_registers[0] = 88;  // clang 15 gfx940 VGPRs on this commit (gfx942 not compiled here)
  s.fill_registers[1] = 112;
  s.instructions_per_compression = 600;  // assumed: no ISA count for gfx942 here
  s.sources =
      "AMD Instinct MI300X datasheet (304 CUs, 2100 MHz peak engine clock, 5.3 TB/s, 192 GB); CDNA3: 4 SIMD16 per "
      "CU running wave64, 512 VGPRs per SIMD lane, 8 waves per SIMD, 64 KiB LDS; memory total assumed 196288 MiB; "
      "FillKernel VGPRs from clang 15 gfx940 on this commit; 600 instructions per compression assumed";
  return s;
}

std::vector<GpuShape> NamedGpuShapes() { return {H200Shape(), H100Shape(), Mi300xShape()}; }

bool GpuShapeByName(const std::string& name, GpuShape* shape) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const GpuShape& s : NamedGpuShapes()) {
    std::string n;
    for (char c : s.name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (n == lower) {
      *shape = s;
      return true;
    }
  }
  return false;
}

int ResidentBlocksPerMultiprocessor(const GpuShape& shape, int format, uint32_t threads) {
  if (threads == 0) return 0;
  const int regs = (shape.fill_registers[format != 0 ? 1 : 0] + shape.register_granule - 1) / shape.register_granule *
                   shape.register_granule;
  const int warps_per_block = static_cast<int>((threads + shape.warp_width - 1) / shape.warp_width);
  const int warps_per_sub = std::min(shape.max_warps_per_subpartition,
                                     shape.registers_per_subpartition / std::max(1, regs * shape.warp_width));
  const int by_registers = shape.subpartitions * warps_per_sub / warps_per_block;
  const int by_threads = shape.max_threads_per_multiprocessor / static_cast<int>(threads);
  return std::max(0, std::min({by_registers, by_threads, shape.max_blocks_per_multiprocessor}));
}

double RooflineCompressionsPerSecond(const GpuShape& shape) {
  return static_cast<double>(shape.multiprocessors) * shape.subpartitions * shape.int_lanes_per_subpartition *
         shape.clock_hz / shape.instructions_per_compression;
}

}  // namespace gpu
}  // namespace wipeproof
