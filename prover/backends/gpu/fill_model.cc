#include "prover/backends/gpu/fill_model.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "kernels/gpu/lane_replay.h"

namespace wipeproof {
namespace gpu {

FillModel ModelFill(const GpuShape& shape, const ModelAssumptions& assumptions, const FillStats& stats, int format,
                    const std::function<const DeviceProgram&(uint32_t graph)>& programs) {
  FillModel f;
  f.shape = shape;
  f.assumptions = assumptions;
  f.roofline_compressions_per_s = RooflineCompressionsPerSecond(shape);
  const double cycles_per_warp_instruction = static_cast<double>(shape.warp_width) / shape.int_lanes_per_subpartition;
  // Replays, one per (graph, C, G, cached block-0 nodes).
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint64_t>, ReplayResult> replays;
  auto replay = [&](uint32_t graph, uint32_t chunks, uint32_t threads, uint64_t cv0) -> const ReplayResult& {
    const auto key = std::make_tuple(graph, chunks, threads, cv0);
    auto it = replays.find(key);
    if (it != replays.end()) return it->second;
    ReplayShape rs;
    rs.team_threads = threads;
    rs.chunks = chunks;
    rs.warp_width = static_cast<uint32_t>(shape.warp_width);
    ReplayCost cost;
    cost.format = format;
    cost.cv0_nodes = cv0;
    cost.instructions_per_compression = shape.instructions_per_compression;
    cost.instructions_per_item = assumptions.instructions_per_item;
    return replays.emplace(key, ReplayTeam(programs(graph), rs, cost)).first->second;
  };
  double useful_weighted = 0, issued_weighted = 0;
  bool main_done = false;
  for (const LaunchStats& l : stats.launch_log) {
    LaunchModel m;
    m.phase = l.phase;
    m.team_threads = l.team_threads;
    m.teams = l.teams;
    m.chunks = l.chunks;
    const int resident = ResidentBlocksPerMultiprocessor(shape, format, l.team_threads) * shape.multiprocessors;
    m.occupancy = resident > 0 ? static_cast<double>(l.teams) / resident : 0;
    // Blocks to multiprocessors round-robin, in launch order.
    std::vector<double> sm_work(shape.multiprocessors, 0.0), sm_warp_max(shape.multiprocessors, 0.0);
    uint64_t block = 0;
    double useful = 0, issued = 0, nodes = 0;
    for (const LaunchStats::TeamGroup& g : l.groups) {
      const ReplayResult& r = replay(g.graph, g.chunks, l.team_threads, l.cv0_nodes);
      const double per_warp = r.warp_instructions / std::max<uint32_t>(1, r.warps);
      for (uint32_t t = 0; t < g.teams; ++t, ++block) {
        const size_t sm = block % shape.multiprocessors;
        sm_work[sm] += r.warp_instructions;
        sm_warp_max[sm] = std::max(sm_warp_max[sm], per_warp);
      }
      const double cp = (r.critical_path_instructions * cycles_per_warp_instruction +
                         static_cast<double>(r.steps) * assumptions.step_latency_cycles) /
                        shape.clock_hz;
      if (cp > m.critical_path_s) {
        m.critical_path_s = cp;
        m.barriers = r.steps;
      }
      useful += r.useful_compressions * g.teams;
      issued += r.warp_compressions * shape.warp_width * g.teams;
      nodes += static_cast<double>(programs(g.graph).nodes) * g.chunks * g.teams;
    }
    double busiest = 0;
    for (int sm = 0; sm < shape.multiprocessors; ++sm) {
      busiest = std::max(busiest, std::max(sm_work[sm] / shape.subpartitions, sm_warp_max[sm]));
    }
    m.throughput_s = busiest * cycles_per_warp_instruction / shape.clock_hz / assumptions.issue_efficiency;
    m.memory_s = nodes * assumptions.bytes_per_node / (shape.memory_bytes_per_s * assumptions.memory_efficiency);
    m.compressions = useful;
    m.lane_use = issued > 0 ? useful / issued : 0;
    m.predicted_s = std::max({m.throughput_s, m.critical_path_s, m.memory_s}) + assumptions.launch_overhead_s;
    useful_weighted += useful;
    issued_weighted += issued;
    f.compressions += useful;
    if (l.phase != "main") main_done = true;
    (main_done ? f.tail_s : f.main_s) += m.predicted_s;
    f.launches.push_back(m);
  }
  if (format != 0) {
    // Block-0 tables: one compression per node number, every lane busy.
    f.cv0_build_s = static_cast<double>(stats.cv0_table_nodes) / f.roofline_compressions_per_s;
  }
  f.lane_use = issued_weighted > 0 ? useful_weighted / issued_weighted : 0;
  f.total_s = assumptions.host_setup_s + f.cv0_build_s + f.main_s + f.tail_s;
  f.tail_share = f.total_s > 0 ? f.tail_s / f.total_s : 0;
  f.labels = stats.labels;
  f.bytes_per_s = f.total_s > 0 ? stats.labels * 32.0 / f.total_s : 0;
  return f;
}

}  // namespace gpu
}  // namespace wipeproof
