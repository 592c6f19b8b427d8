#include "prover/bench/gpu_check_model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "kernels/gpu/emulated_runtime.h"

namespace wipeproof {
namespace gpu {

FillModel ModelPlan(const GpuShape& shape, const RegionSpec& spec, const FillStats& stats,
                    ModelAssumptions assumptions) {
  const uint32_t m = spec.chunk_labels;
  const auto t0 = std::chrono::steady_clock::now();
  const DeviceProgram main = BuildDeviceProgram(m, m);
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const RegionChunks rc = DescribeRegion(spec.format == LabelFormat::k192, m, spec.first, spec.count);
  const RegionChunks::Graph last = rc.GraphOf(rc.chunk_end - 1);
  DeviceProgram own;
  if (last.graph_labels != m || last.ranks_needed != m) own = BuildDeviceProgram(last.graph_labels, last.ranks_needed);
  if (assumptions.host_setup_source.empty()) {
    assumptions.host_setup_s = build_s;
    assumptions.host_setup_source = "BuildDeviceProgram(m) timed on the machine that ran this model";
  }
  return ModelFill(shape, assumptions, stats, spec.format == LabelFormat::kC1 ? 0 : 1,
                   [&](uint32_t graph) -> const DeviceProgram& { return graph == 0 ? main : own; });
}

Json AssumptionsJson(const GpuShape& shape, const ModelAssumptions& a) {
  Json s;
  s.Str("name", shape.name)
      .Int("multiprocessors", shape.multiprocessors)
      .Int("subpartitions", shape.subpartitions)
      .Int("int_lanes_per_subpartition", shape.int_lanes_per_subpartition)
      .Int("warp_width", shape.warp_width)
      .Num("clock_hz", shape.clock_hz)
      .Int("memory_bytes", shape.memory_bytes)
      .Int("context_bytes", shape.context_bytes)
      .Num("memory_bytes_per_s", shape.memory_bytes_per_s)
      .Int("fill_registers_c1", shape.fill_registers[0])
      .Int("fill_registers_192", shape.fill_registers[1])
      .Int("resident_teams_of_64_c1", ResidentBlocksPerMultiprocessor(shape, 0, 64) * shape.multiprocessors)
      .Int("resident_teams_of_64_192", ResidentBlocksPerMultiprocessor(shape, 1, 64) * shape.multiprocessors)
      .Num("instructions_per_compression", shape.instructions_per_compression)
      .Num("roofline_compressions_per_s", RooflineCompressionsPerSecond(shape))
      .Str("sources", shape.sources);
  Json j;
  j.Obj("gpu", s)
      .Num("instructions_per_item", a.instructions_per_item)
      .Num("issue_efficiency", a.issue_efficiency)
      .Num("step_latency_cycles", a.step_latency_cycles)
      .Num("launch_overhead_s", a.launch_overhead_s)
      .Num("bytes_per_node", a.bytes_per_node)
      .Num("memory_efficiency", a.memory_efficiency)
      .Num("host_setup_s", a.host_setup_s)
      .Str("host_setup_source", a.host_setup_source)
      .Str("note",
           "modelled, not measured: instructions_per_item, issue_efficiency, step_latency_cycles, "
           "launch_overhead_s, bytes_per_node and memory_efficiency are assumptions to be replaced by "
           "scripts/gpu-check.sh's measurements");
  return j;
}

Json ModelJson(const FillModel& m) {
  std::vector<Json> launches;
  for (size_t i = 0; i < m.launches.size(); ++i) {
    const LaunchModel& l = m.launches[i];
    Json j;
    j.Int("launch", i)
        .Str("phase", l.phase)
        .Int("team_threads", l.team_threads)
        .Int("teams", l.teams)
        .Int("chunks", l.chunks)
        .Num("occupancy", l.occupancy)
        .Num("lane_use", l.lane_use)
        .Int("barriers", l.barriers)
        .Num("throughput_s", l.throughput_s)
        .Num("critical_path_s", l.critical_path_s)
        .Num("memory_s", l.memory_s)
        .Num("predicted_s", l.predicted_s);
    launches.push_back(j);
  }
  Json j;
  j.Str("kind", "modelled")
      .Num("predicted_total_s", m.total_s)
      .Num("main_s", m.main_s)
      .Num("tail_s", m.tail_s)
      .Num("tail_share", m.tail_share)
      .Num("host_setup_s", m.assumptions.host_setup_s)
      .Num("cv0_build_s", m.cv0_build_s)
      .Num("lane_use", m.lane_use)
      .Num("compressions", m.compressions)
      .Num("compressions_per_s", m.total_s > 0 ? m.compressions / m.total_s : 0)
      .Num("fraction_of_roofline", m.total_s > 0 ? m.compressions / m.total_s / m.roofline_compressions_per_s : 0)
      .Int("labels", m.labels)
      .Num("bytes_per_s", m.bytes_per_s)
      .Num("mib_per_s", m.bytes_per_s / (1 << 20))
      .Obj("assumptions", AssumptionsJson(m.shape, m.assumptions))
      .Arr("launches", launches);
  return j;
}

bool ShapeForDevice(const GpuDeviceProps& props, GpuShape* shape) {
  std::string name;
  for (char c : props.name) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const char* keys[] = {"h200", "h100", "mi300x"};
  for (const char* k : keys) {
    if (name.find(k) != std::string::npos && GpuShapeByName(k, shape)) {
      if (props.multiprocessors > 0) shape->multiprocessors = props.multiprocessors;
      if (props.total_bytes > 0) shape->memory_bytes = props.total_bytes;
      return true;
    }
  }
  return false;
}

namespace {

struct ModelCase {
  const char* name;
  LabelFormat format;
  uint32_t m;
  double target_max_s;         // c1: the fill must end by then (0: none)
  double target_min_mib_s;     // 192: at least this rate (0: none)
  double target_min_lane_use;  // 0: none
};

}  // namespace

Json LookupModelJson(uint32_t labels_per_stream) {
  const LookupAssumptions a;
  Json assumptions;
  assumptions.Num("stage_s_per_label", a.stage_s_per_label)
      .Num("submit_s", a.submit_s)
      .Num("start_latency_s", a.start_latency_s)
      .Num("host_read_latency_s", a.host_read_latency_s)
      .Num("place_latency_s", a.place_latency_s)
      .Num("memory_latency_s", a.memory_latency_s)
      .Num("host_write_s", a.host_write_s)
      .Num("completion_s", a.completion_s)
      .Num("copy_bytes_per_s", a.copy_bytes_per_s)
      .Str("source",
           "assumed latencies, the same for every shape; the staging and the placement measured on "
           "one H200 (prover/backends/gpu/lookup_model.h)");
  std::vector<Json> rows;
  for (int streams : {1, 8}) {
    const LookupModel m = ModelLookups(a, labels_per_stream, streams);
    Json r;
    r.Int("streams", streams)
        .Int("q_per_stream", labels_per_stream)
        .Num("submit_us", m.submit_us)
        .Num("device_us", m.device_us)
        .Num("copy_us", m.copy_us)
        .Num("total_us", m.total_us);
    rows.push_back(r);
  }
  Json out;
  out.Str("kind", "modelled").Arr("together", rows).Obj("assumptions", assumptions);
  return out;
}

int StepModel(const std::string& gpu, const ModelAssumptions& assumptions, Json* out) {
  std::vector<GpuShape> shapes;
  if (gpu.empty() || gpu == "all") {
    shapes = NamedGpuShapes();
  } else {
    GpuShape s;
    if (!GpuShapeByName(gpu, &s)) {
      out->Str("error", "unknown --gpu '" + gpu + "' (h200, h100, mi300x, all)");
      return 2;
    }
    shapes.push_back(s);
  }
  // Issue 12's targets, for a full H200.
  const ModelCase cases[] = {{"c1 m=2^14", LabelFormat::kC1, 1u << 14, 36, 0, 0.93},
                             {"c1 m=2^17", LabelFormat::kC1, 1u << 17, 60, 0, 0.85},
                             {"192 m=2^17", LabelFormat::k192, 1u << 17, 0, 930, 0}};
  std::vector<Json> rows;
  bool all_met = true;
  for (const GpuShape& shape : shapes) {
    for (const ModelCase& c : cases) {
      EmulatedRuntime runtime(DryRunConfigFor(shape));
      Json row;
      row.Str("gpu", shape.name).Str("case", c.name).Str("kind", "modelled");
      auto region = DeviceRegion::Acquire(&runtime, 0, DeviceRegionOptions());
      if (!region.ok()) {
        row.Str("error", region.status().ToString());
        rows.push_back(row);
        all_met = false;
        continue;
      }
      const uint64_t capacity = (*region)->label_capacity();
      RegionSpec spec;
      spec.format = c.format;
      spec.chunk_labels = c.m;
      spec.first = static_cast<uint64_t>(c.m) * 1000003;
      spec.count = c.format == LabelFormat::k192 ? capacity / c.m * c.m : capacity;
      // The plan alone (fill_plan.h): what the fill would run on a device of this shape.
      auto plan = (*region)->Plan(spec);
      if (!plan.ok()) {
        row.Str("error", plan.status().ToString());
        rows.push_back(row);
        all_met = false;
        continue;
      }
      const FillStats& stats = plan->stats;
      const FillModel model = ModelPlan(shape, spec, stats, assumptions);
      const double mib_s = model.bytes_per_s / (1 << 20);
      row.Int("labels", spec.count)
          .Num("gib", spec.count * 32.0 / (1ull << 30))
          .Int("launches", stats.launches)
          .Int("team_threads", stats.main_shape.threads)
          .Int("team_chunks", stats.main_shape.chunks)
          .Int("chunks_in_flight", stats.main_chunks_in_flight)
          .Int("deferred_chunks", stats.deferred_chunks)
          .Int("bytes_outside_label_slots_peak", stats.bytes_outside_label_slots_peak)
          .Int("region_scratch_peak_bytes", stats.region_scratch_peak_bytes)
          .Num("predicted_total_s", model.total_s)
          .Num("main_s", model.main_s)
          .Num("tail_s", model.tail_s)
          .Num("tail_share", model.tail_share)
          .Num("lane_use", model.lane_use)
          .Num("fraction_of_roofline",
               model.total_s > 0 ? model.compressions / model.total_s / model.roofline_compressions_per_s : 0)
          .Num("mib_per_s", mib_s);
      if (shape.name == "H200") {
        Json targets;
        bool met = model.tail_share <= 0.05 && stats.bytes_outside_label_slots_peak <= (256ull << 20);
        targets.Num("tail_share_max", 0.05).Int("bytes_outside_label_slots_peak_max", 256ull << 20);
        if (c.target_max_s > 0) {
          targets.Num("total_s_max", c.target_max_s);
          met = met && model.total_s <= c.target_max_s;
        }
        if (c.target_min_mib_s > 0) {
          targets.Num("mib_per_s_min", c.target_min_mib_s);
          met = met && mib_s >= c.target_min_mib_s;
        }
        if (c.target_min_lane_use > 0) {
          targets.Num("lane_use_min", c.target_min_lane_use);
          met = met && model.lane_use >= c.target_min_lane_use;
        }
        row.Obj("issue_12_targets", targets).Bool("modelled_meets_targets", met);
        all_met = all_met && met;
      }
      row.Obj("model", ModelJson(model));
      rows.push_back(row);
      std::fprintf(stderr, "model %-7s %-11s %7.1f s modelled (tail %.1f%%, lane use %.3f, %.0f MiB/s)\n",
                   shape.name.c_str(), c.name, model.total_s, model.tail_share * 100, model.lane_use, mib_s);
    }
  }
  out->Str("kind", "modelled").Arr("cases", rows).Bool("all_h200_targets_met_in_model", all_met);
  out->Obj("lookups", LookupModelJson(256));
  return 0;
}

}  // namespace gpu
}  // namespace wipeproof
