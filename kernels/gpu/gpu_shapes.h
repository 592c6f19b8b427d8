// Named GPU shapes for the planner's dry run and the fill model (prover/backends/gpu/fill_model.h):
// what a device of that kind reports and what its integer pipes can do. Every figure here is a
// vendor datasheet value or a compiler report of this source, named where it is defined; none
// was measured on the device (one H200 run, 2026-12-04, bore out the registers and the integer
// issue rate: docs/benchmarks.md "The first H200 run").
//
// Thread-safety: pure functions and plain data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wipeproof {
namespace gpu {

struct GpuShape {
  std::string name;
  int multiprocessors = 0;              // SMs / CUs
  int subpartitions = 4;                // SM sub-partitions (NVIDIA) / SIMDs (AMD) per multiprocessor
  int int_lanes_per_subpartition = 16;  // 32-bit integer lanes each: a warp instruction takes W / 16 cycles
  int warp_width = 32;                  // 32 (NVIDIA warp), 64 (AMD wavefront)
  double clock_hz = 0;                  // SM clock assumed under a sustained integer load (max boost)
  uint64_t memory_bytes = 0;            // total device memory as the runtime reports it
  uint64_t context_bytes = 0;           // what the runtime context takes before acquisition (assumed)
  double memory_bytes_per_s = 0;        // peak memory bandwidth
  int max_threads_per_multiprocessor = 2048;
  uint64_t shared_bytes_per_block = 227 * 1024;  // dynamic shared memory (LDS) a block can opt in to
  int max_blocks_per_multiprocessor = 32;
  int max_warps_per_subpartition = 16;
  int registers_per_subpartition = 16384;     // 32-bit registers per sub-partition (per SIMD on AMD: 512 x 64)
  int register_granule = 8;                   // registers per thread are allocated in multiples of this
  int fill_registers[2] = {64, 80};           // FillKernel c1 / 192 registers per thread, as compiled here
  double instructions_per_compression = 570;  // integer-pipe instructions of one compression
  std::string sources;                        // where the figures come from
};

// H200 SXM (141 GB HBM3e), H100 SXM (80 GB HBM3) and MI300X (192 GB HBM3).
GpuShape H200Shape();
GpuShape H100Shape();
GpuShape Mi300xShape();
std::vector<GpuShape> NamedGpuShapes();
// By name ("h200", "h100", "mi300x"; case-insensitive). Returns false when unknown.
bool GpuShapeByName(const std::string& name, GpuShape* shape);

// Fill teams (blocks) of `threads` threads resident per multiprocessor: registers, warps,
// threads and blocks per multiprocessor, as the occupancy calculator counts them.
int ResidentBlocksPerMultiprocessor(const GpuShape& shape, int format, uint32_t threads);

// Compressions per second with every integer lane busy: multiprocessors x subpartitions x lanes x
// clock / instructions_per_compression.
double RooflineCompressionsPerSecond(const GpuShape& shape);

}  // namespace gpu
}  // namespace wipeproof
