// A device model of a fill, on the CPU: the seconds a fill's launches would take on a named GPU
// shape (kernels/gpu/gpu_shapes.h). Every figure it gives is *modelled*, never measured; its
// assumptions travel with it (ModelAssumptions, and the shape's sources) into every JSON that
// prints it (wipeproof-gpu-check --runtime=dry-run).
//
// Per launch (one wave, fill_passes.h), from the plan DeviceRegion::Fill made (FillStats'
// launch log) and an exact replay of the kernel's item-to-thread mapping for each team shape
// (kernels/gpu/lane_replay.h):
//  - throughput: blocks go to multiprocessors round-robin; a multiprocessor's warps share its
//    sub-partitions, each of whose integer lanes issues a warp instruction in warp_width / lanes
//    cycles; a warp's loop iteration issues its busiest lane's compressions times
//    instructions_per_compression plus instructions_per_item; the launch takes the busiest
//    sub-partition's issue time divided by issue_efficiency;
//  - critical path: the slowest team alone, its busiest warp per super-step plus
//    step_latency_cycles per super-step (barrier and a dependent load);
//  - memory: bytes_per_node for every node from memory at memory_efficiency of peak bandwidth;
//  - a launch takes the largest of the three plus launch_overhead_s.
// The fill adds the host's setup (building the programs) and the 192 block-0 table builds.
// "Main" is the main phase's launches; the *tail* is everything after them (the 192 deferred
// chunks' waves).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/gpu/device_program.h"
#include "kernels/gpu/gpu_shapes.h"
#include "prover/backends/gpu/device_region.h"

namespace wipeproof {
namespace gpu {

struct ModelAssumptions {
  double instructions_per_item = 60;  // per item: op search, addressing, 2-4 label loads, 1-2 stores (PTX estimate)
  double issue_efficiency = 0.92;     // of the integer issue slots, when every sub-partition has ready warps
  double step_latency_cycles = 700;   // per super-step on a team's critical path: barrier + dependent L2 load
  double launch_overhead_s = 30e-6;   // launch, synchronise, team-table copy, clock read-back
  double bytes_per_node = 80;         // label traffic of a node when nothing is cached (2 reads + 1 write, ~)
  double memory_efficiency = 0.8;     // of peak bandwidth
  double host_setup_s = 0;            // building the programs on the host before the first launch
  std::string host_setup_source;      // how host_setup_s was obtained
};

struct LaunchModel {
  std::string phase;
  uint32_t team_threads = 0, teams = 0;
  uint64_t chunks = 0;
  double lane_use = 0;      // useful compressions / SIMT lane-compressions issued
  uint64_t barriers = 0;    // super-steps of the slowest team
  double compressions = 0;  // useful
  double occupancy = 0;     // threads launched / threads the device holds at this team size
  double throughput_s = 0, critical_path_s = 0, memory_s = 0;
  double predicted_s = 0;
};

struct FillModel {
  GpuShape shape;
  ModelAssumptions assumptions;
  std::vector<LaunchModel> launches;
  double roofline_compressions_per_s = 0;
  double cv0_build_s = 0;
  double main_s = 0;   // main-phase launches
  double tail_s = 0;   // everything after them
  double total_s = 0;  // setup + cv0 builds + main + tail
  double tail_share = 0;
  double lane_use = 0;  // compression-weighted over all launches
  double compressions = 0;
  uint64_t labels = 0;
  double bytes_per_s = 0;  // labels * 32 / total_s
};

// `programs(graph)` returns the program a team group ran (0: graph m; 1: the last chunk's own);
// format 0 c1, 1 192.
FillModel ModelFill(const GpuShape& shape, const ModelAssumptions& assumptions, const FillStats& stats, int format,
                    const std::function<const DeviceProgram&(uint32_t graph)>& programs);

}  // namespace gpu
}  // namespace wipeproof
