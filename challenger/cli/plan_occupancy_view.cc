#include "challenger/cli/plan_occupancy_view.h"

#include <cstdio>

#include "common/numbers.h"
#include "common/terminal_text.h"

namespace wipeproof {

namespace {

std::string Duration(uint64_t us) {
  const double s = static_cast<double>(us) / 1e6;
  if (s < 1) return FormatFixed(s * 1000, 1) + " ms";
  if (s < 600) return FormatFixed(s, 1) + " s";
  return FormatFixed(s / 60, 1) + " min";
}

}  // namespace

StatusOr<std::vector<OccupancyClassPlan>> PlanOccupancyPerClass(const PlanInputs& node, const PlanResult& plan,
                                                                double shortfall_fraction, uint64_t short_time_us,
                                                                uint64_t window_us) {
  std::vector<OccupancyClassPlan> out;
  for (const ClassPlan& c : plan.classes) {
    if (!c.feasible) continue;
    OccupancyPlanInputs in;
    in.chunk_labels = c.chunk_labels;
    in.format = node.policy.format;
    in.confidence = node.policy.confidence;
    in.short_time_us = short_time_us;
    in.window_us = window_us;
    in.verify_compressions_per_s_per_core = node.verify_compressions_per_s_per_core;
    uint64_t planned = 0;
    for (const PlanDeviceRow& row : c.devices) {
      for (uint32_t k = 0; k < row.count; ++k) {
        PlannedDevice d;
        d.selector = row.model;
        d.label_count = row.planned_bytes / 32;
        d.labels_per_round = row.labels_per_round;
        in.devices.push_back(d);
        planned += row.planned_bytes;
      }
    }
    in.shortfall_bytes = static_cast<uint64_t>(shortfall_fraction * static_cast<double>(planned));
    WP_ASSIGN_OR_RETURN(std::vector<OccupancyPlanRow> rows, PlanOccupancy(in));
    out.push_back({c.adversary.name, c.chunk_labels, planned, in.shortfall_bytes, std::move(rows)});
  }
  return out;
}

std::string PlanOccupancyTable(const std::vector<OccupancyClassPlan>& plans, double confidence, uint64_t short_time_us,
                               uint64_t window_us) {
  std::string s = "Occupancy windows: at " + FormatFixed(confidence * 100, 2) +
                  "% confidence, short by more than b for at most T* = " + Duration(short_time_us) +
                  " (plus U: rounds in flight, the challenger's delays) of a window of " + Duration(window_us) +
                  "; each label checked is one chunk the challenger recomputes.\n";
  for (const OccupancyClassPlan& p : plans) {
    s += "class " + TerminalSafe(p.adversary) + " (m " + std::to_string(p.chunk_labels) + ", b " +
         std::to_string(p.shortfall_bytes) + " of " + std::to_string(p.planned_bytes) + " planned bytes):\n";
    std::vector<std::vector<std::string>> rows = {
        {"labels/round", "d(b)", "mean gap", "rounds/h", "chunks/node-h", "CPU/node-h", "pool", "memory"}};
    for (const OccupancyPlanRow& r : p.rows) {
      if (r.mean_gap_us == 0) {
        rows.push_back({std::to_string(r.labels_per_round), FormatFixed(r.detection, 4), "-", "-", "-", "-", "-",
                        "no gap reaches T* (d(b) too small)"});
        continue;
      }
      rows.push_back({std::to_string(r.labels_per_round), FormatFixed(r.detection, 4), Duration(r.mean_gap_us),
                      FormatFixed(r.rounds_per_hour, 0), FormatFixed(r.chunks_per_node_hour, 0),
                      FormatFixed(r.cpu_s_per_node_hour, 1) + " s", std::to_string(r.pool_rounds),
                      FormatBytesHuman(r.challenger_bytes) +
                          (r.fits ? "" : "  (does not fit: gap above the window or pool over its limit)")});
    }
    s += AlignColumns(rows, "  ");
  }
  s += "More labels per round: fewer rounds for the same T*, more chunks (CPU) per hour. wipe "
       "--occupancy_labels=L --occupancy_mean_gap_s=G runs a row.\n";
  return s;
}

nlohmann::ordered_json PlanOccupancyJson(const std::vector<OccupancyClassPlan>& plans, double confidence,
                                         uint64_t short_time_us, uint64_t window_us) {
  nlohmann::ordered_json j;
  j["confidence"] = confidence;
  j["short_time_us"] = short_time_us;
  j["window_us"] = window_us;
  j["classes"] = nlohmann::ordered_json::array();
  for (const OccupancyClassPlan& p : plans) {
    nlohmann::ordered_json c;
    c["class"] = p.adversary;
    c["chunk_labels"] = p.chunk_labels;
    c["planned_bytes"] = p.planned_bytes;
    c["shortfall_bytes"] = p.shortfall_bytes;
    c["rows"] = nlohmann::ordered_json::array();
    for (const OccupancyPlanRow& r : p.rows) {
      c["rows"].push_back({{"labels_per_round", r.labels_per_round},
                           {"detection", r.detection},
                           {"mean_gap_us", r.mean_gap_us},
                           {"rounds_per_hour", r.rounds_per_hour},
                           {"chunks_per_node_hour", r.chunks_per_node_hour},
                           {"cpu_s_per_node_hour", r.cpu_s_per_node_hour},
                           {"pool_rounds", r.pool_rounds},
                           {"challenger_bytes", r.challenger_bytes},
                           {"fits", r.fits}});
    }
    j["classes"].push_back(c);
  }
  return j;
}

}  // namespace wipeproof
