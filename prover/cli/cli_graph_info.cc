// `wipeproof-prover graph-info`: the graph metrics for m as JSON (label-spec.md §3 table).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "kernels/exclusive_chains.h"
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
  // The work held outputs prove (exclusive_chains.h): nodes of their exclusive chains, per output
  // when all m are held, the fewest, and the least per held output when only the shortest 90% or
  // 99% are held (a prover that drops labels drops the cheapest).
  const ExclusiveChains chains = ComputeExclusiveChains(*m);
  auto per_output = [&](uint32_t k) { return k == 0 ? 0.0 : static_cast<double>(chains.prefix[k]) / k; };
  out["exclusive_chain_nodes"] = {{"per_output", per_output(g.m)},
                                  {"min", chains.prefix.size() > 1 ? chains.prefix[1] : 0},
                                  {"per_output_of_shortest_99_percent", per_output(g.m - g.m / 100)},
                                  {"per_output_of_shortest_90_percent", per_output(g.m - g.m / 10)},
                                  {"share_of_nodes_hashed", static_cast<double>(chains.prefix[g.m]) / g.nodes_hashed}};
  std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  return kExitOk;
}

const CliSubcommand& GraphInfoSubcommand() {
  static const CliSubcommand kSubcommand = {"graph-info",
   "print the metrics of the graph for m as JSON (label-spec.md §3 table)",
   "Replays the graph schedule for m outputs and prints: nodes, nodes_per_output, nodes_hashed,\n"
   "min/max output depth, peak live labels (the labeler's scratch), schedule size, and the\n"
   "exclusive chains (kernels/exclusive_chains.h: the nodes any computation of held outputs must\n"
   "evaluate, per output). m = 2^17 takes about a second.",
   {"chunk_labels"},
   &RunGraphInfo,
   {{"chunk_labels", "m, labels per chunk (graph outputs), in [1, 1048576] (required)"}}};
  return kSubcommand;
}

}  // namespace wipeproof
