#include "challenger/cli/plan_economics_view.h"

#include <algorithm>
#include <vector>

#include "challenger/calibration/modelled_gpu_fills.h"
#include "common/numbers.h"
#include "common/terminal_text.h"

namespace wipeproof {

namespace {

std::string FillSeconds(double s) { return s < 600 ? FormatFixed(s, 1) + " s" : FormatFixed(s / 60, 1) + " min"; }

std::string CpuSeconds(double s) {
  if (s < 10) return FormatFixed(s, 2) + " s";
  if (s < 1000) return FormatFixed(s, 1) + " s";
  return FormatFixed(s, 0) + " s";
}

std::string NodeText(const PlanInputs& node) {
  std::string t;
  for (const PlanDeviceSpec& d : node.devices) {
    t += (t.empty() ? "" : " + ") + std::to_string(d.count) + " x " + TerminalSafe(d.model);
  }
  return t;
}

}  // namespace

std::string PlanEconomicsTable(const PlanInputs& node, const PlanEconomics& economics, uint64_t lookup_added_us) {
  const std::vector<std::string> shapes = ModelledGpuShapes();
  std::string t = "economics: what a faster network buys, per honest round p99.9";
  if (lookup_added_us > 0) {
    t += " (each the listed network part + the node profile's slowest lookup " + std::to_string(lookup_added_us) +
         " us)";
  }
  t += " and class, under the rule above (margin " + FormatFixed(node.policy.round_margin, 2) + ", " +
       LabelFormatName(economics.format) + "):\n";
  t += "  m, deadline, R: as plan --round_p999_us=<p99.9> computes them for the node above;\n";
  t += "  fill <shape>: one GPU of that shape, all its memory less the reserve " +
       FormatBytesHuman(economics.gpu_reserve_bytes) +
       ", at m: MODELLED by the device model (not measured), scaled from its nearest modelled m by nodes per "
       "label; a node's GPUs fill at once;\n";
  t += "  challenger CPU: the expected labels of one node-wipe of the node above (" + NodeText(node) + ") at " +
       FormatFixed(node.verify_compressions_per_s_per_core / 1e6, 1) +
       " M compressions/s per core, computed before the order; node-wipes per core-hour = 3600 s / that\n\n";

  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"p99.9", "class", "m", "deadline", "R"};
  for (const std::string& s : shapes) header.push_back("fill " + s);
  header.push_back("challenger CPU per node-wipe");
  header.push_back("node-wipes per core-hour");
  rows.push_back(header);
  std::vector<std::string> refusals;
  for (const EconomicsRow& r : economics.rows) {
    for (const EconomicsClass& c : r.classes) {
      std::vector<std::string> cells = {std::to_string(r.honest_round_p999_us) + " us", TerminalSafe(c.adversary.name)};
      if (!c.feasible) {
        cells.push_back("refused");
        while (cells.size() < header.size()) cells.push_back("-");
        refusals.push_back("at " + std::to_string(r.honest_round_p999_us) + " us, " + TerminalSafe(c.adversary.name) +
                           ": refused: " + TerminalSafe(c.refusal));
      } else {
        cells.push_back("2^" + std::to_string(FloorLog2(c.chunk_labels)));
        cells.push_back(std::to_string(c.round_deadline_us) + " us");
        cells.push_back(std::to_string(c.rounds));
        for (const ShapeFill& f : c.fills) cells.push_back(FillSeconds(f.fill_s));
        cells.push_back(CpuSeconds(c.cpu_s_per_node_wipe));
        cells.push_back(FormatFixed(c.node_wipes_per_core_hour, 1));
      }
      rows.push_back(cells);
    }
  }
  t += AlignColumns(rows);
  for (const std::string& refusal : refusals) t += refusal + "\n";
  t += "fills: " + ModelledGpuFillsSource() + "\n";
  return t;
}

nlohmann::ordered_json PlanEconomicsJson(const PlanInputs& node, const PlanEconomics& economics,
                                         uint64_t lookup_added_us) {
  nlohmann::ordered_json j;
  j["format"] = LabelFormatName(economics.format);
  j["margin"] = node.policy.round_margin;
  j["node_lookup_p999_us_added"] = lookup_added_us;
  j["gpu_reserve_bytes"] = economics.gpu_reserve_bytes;
  j["verify_compressions_per_s_per_core"] = node.verify_compressions_per_s_per_core;
  j["nodes_per_wave"] = node.nodes_per_wave;
  nlohmann::ordered_json figures = nlohmann::ordered_json::array();
  for (const ModelledGpuFill& f : ModelledGpuFills()) {
    figures.push_back({{"shape", f.shape},
                       {"memory_bytes", f.memory_bytes},
                       {"format", LabelFormatName(f.format)},
                       {"chunk_labels", f.chunk_labels},
                       {"labels", f.labels},
                       {"fill_s", f.fill_s},
                       {"bytes_per_s", f.BytesPerSecond()}});
  }
  j["fill_model"] = {{"kind", "modelled"}, {"source", ModelledGpuFillsSource()}, {"figures", figures}};
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const EconomicsRow& r : economics.rows) {
    nlohmann::ordered_json classes = nlohmann::ordered_json::array();
    for (const EconomicsClass& c : r.classes) {
      nlohmann::ordered_json cj;
      cj["class"] = c.adversary.name;
      cj["feasible"] = c.feasible;
      if (!c.feasible) {
        cj["refusal"] = c.refusal;
        classes.push_back(cj);
        continue;
      }
      cj["chunk_labels"] = c.chunk_labels;
      cj["round_deadline_us"] = c.round_deadline_us;
      cj["rounds"] = c.rounds;
      nlohmann::ordered_json fills = nlohmann::ordered_json::array();
      for (const ShapeFill& f : c.fills) {
        fills.push_back({{"shape", f.shape},
                         {"fill_s", f.fill_s},
                         {"kind", "modelled"},
                         {"scaled_from_chunk_labels", f.model_chunk_labels}});
      }
      cj["fills"] = fills;
      cj["challenger_cpu_s_per_node_wipe"] = c.cpu_s_per_node_wipe;
      cj["node_wipes_per_core_hour"] = c.node_wipes_per_core_hour;
      classes.push_back(cj);
    }
    rows.push_back({{"honest_round_p999_us", r.honest_round_p999_us}, {"classes", classes}});
  }
  j["rows"] = rows;
  return j;
}

}  // namespace wipeproof
