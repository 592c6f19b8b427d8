// `wipeproof-prover graph-info`: the graph metrics for m as JSON (label-spec.md §3 table).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "kernels/graph_metrics.h"
#include "kernels/graph_schedule.h"
#include "prover/cli/cli.h"
#include "prover/cli/cli_flags.h"

namespace wipeproof {

int RunGraphInfo() {
  auto m = ChunkLabelsFromFlag(/*default_m=*/0);
  if (!m.ok()) return UsageError("graph-info", m.status().message());
  const GraphMetrics g = ComputeGraphMetrics(*m);
  nlohmann::ordered_json out;
  out["chunk_labels"] = g.m;
  out["nodes"] = g.nodes;
  out["nodes_per_output"] = g.nodes_per_output;
  out["nodes_hashed"] = g.nodes_hashed;
  out["min_output_depth"] = g.min_output_depth;
  out["max_output_depth"] = g.max_output_depth;
  out["min_output_depth_per_m"] = static_cast<double>(g.min_output_depth) / g.m;
  out["peak_live_labels"] = g.peak_live_labels;
  out["scratch_bytes"] = g.peak_live_labels * kLabelBytes;
  out["chunk_bytes"] = static_cast<uint64_t>(g.m) * kLabelBytes;
  out["schedule_ops"] = g.schedule_ops;
  std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  return kExitOk;
}

const CliSubcommand& GraphInfoSubcommand() {
  static const CliSubcommand kSubcommand = {"graph-info",
   "print the metrics of the graph for m as JSON (label-spec.md §3 table)",
   "Replays the graph schedule for m outputs and prints: nodes, nodes_per_output, nodes_hashed,\n"
   "min/max output depth, peak live labels (the labeler's scratch) and schedule size. m = 2^17\n"
   "takes about a second.",
   {"chunk_labels"},
   &RunGraphInfo,
   {{"chunk_labels", "m, labels per chunk (graph outputs), in [1, 1048576] (required)"}}};
  return kSubcommand;
}

}  // namespace wipeproof
