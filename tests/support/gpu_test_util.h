// Helpers shared by the GPU tests: regions, reference labels from the CPU engine, and a direct
// (DeviceRegion-free) run of the fill kernel's logic with chosen team shapes.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/gpu/device_program.h"
#include "kernels/gpu/emulated_runtime.h"
#include "kernels/gpu/session_constants.h"
#include "kernels/gpu/team_executor.h"
#include "kernels/graph_schedule.h"
#include "kernels/region_labeler.h"
#include "prover/backends/gpu/fill_passes.h"

namespace wipeproof {
namespace gpu {
namespace testing {

inline RegionSpec Spec(LabelFormat format, uint32_t m, uint64_t first, uint64_t count, uint8_t seed_byte = 0x5A) {
  RegionSpec spec;
  spec.format = format;
  for (int i = 0; i < kSeedBytes; ++i) spec.seed[i] = static_cast<uint8_t>(seed_byte + 7 * i);
  spec.chunk_labels = m;
  spec.first = first;
  spec.count = count;
  return spec;
}

// The CPU engine's labels for a region: the oracle.
inline std::vector<uint8_t> Reference(const RegionSpec& spec) {
  std::vector<uint8_t> out(spec.count * 32);
  RegionLabelOptions options;
  options.threads = 2;
  Status st = LabelRegion(spec, out.data(), options);
  if (!st.ok()) out.clear();
  return out;
}

struct DirectRunOptions {
  uint32_t team_threads = 64;    // G
  uint32_t chunks_per_team = 4;  // C
  uint32_t teams = 3;            // per launch
  uint64_t piece_labels = 777;   // the region is split into pieces of this many slots
  EmulatedThreadOrder order = EmulatedThreadOrder::kForward;
  bool shared = false;     // team scratch in (emulated) shared memory
  uint64_t cv0_nodes = 0;  // 192: block-0 table size (0: computed in the kernel)
  bool levelled = true;    // super-steps (false: a barrier after every op)
};

// Labels `spec` with the fill kernel's logic (EmulateFill), the region spread over pieces.
inline std::vector<uint8_t> DirectRun(const RegionSpec& spec, const DirectRunOptions& o) {
  const bool f192 = spec.format == LabelFormat::k192;
  const RegionChunks rc = DescribeRegion(f192, spec.chunk_labels, spec.first, spec.count);
  // Pieces, with a few guard words after each to catch overruns.
  std::vector<std::vector<uint32_t>> pieces;
  std::vector<uint64_t> slot_begin{0}, bases;
  for (uint64_t s = 0; s < spec.count; s += o.piece_labels) {
    const uint64_t n = std::min(o.piece_labels, spec.count - s);
    pieces.emplace_back(n * 8 + 8, 0xA5A5A5A5u);
    bases.push_back(reinterpret_cast<uint64_t>(pieces.back().data()));
    slot_begin.push_back(slot_begin.back() + n);
  }
  auto run = [&](uint32_t graph_labels, uint64_t c0, uint64_t c1, uint32_t C) {
    const DeviceProgram program = BuildDeviceProgram(graph_labels, graph_labels, o.levelled);
    const GraphShape shape = ShapeForChunkLabels(graph_labels);
    std::vector<std::vector<uint32_t>> scratch(o.teams);
    std::vector<uint64_t> team_table;
    for (auto& s : scratch) {
      s.assign(static_cast<size_t>(C) * shape.scratch_labels * 8 + 8, 0x5A5A5A5Au);
      team_table.push_back(reinterpret_cast<uint64_t>(s.data()));
    }
    std::vector<uint32_t> cv0;
    FillLaunch launch;
    FillWaveArgs& a = launch.args;
    a.session = BuildSessionConstants(spec.format, spec.seed, spec.chunk_labels, graph_labels);
    if (f192 && o.cv0_nodes > 0 && graph_labels == spec.chunk_labels) {
      Cv0BuildArgs b;
      cv0.assign(o.cv0_nodes * 8, 0);
      b.table = cv0.data();
      b.nodes = o.cv0_nodes;
      std::memcpy(b.int_key, a.session.int_key, 32);
      std::memcpy(b.src_key, a.session.src_key, 32);
      b.source_nodes[0] = program.source_nodes[0];
      b.source_nodes[1] = program.source_nodes[1];
      for (uint64_t n = 0; n < b.nodes; ++n) Cv0Entry(b, n);
      a.cv0 = cv0.data();
      a.cv0_nodes = o.cv0_nodes;
    }
    a.program = program.words.data();
    a.op_count = program.ops;
    a.scratch_labels = shape.scratch_labels;
    a.region_first = spec.first;
    a.region_count = spec.count;
    a.chunks_per_team = C;
    a.scratch_in_shared = o.shared ? 1 : 0;
    a.team_scratch = team_table.data();
    a.slots.slot_begin = slot_begin.data();
    a.slots.base = bases.data();
    a.slots.count = static_cast<uint32_t>(bases.size());
    launch.threads_per_team = o.team_threads;
    const uint64_t wave = static_cast<uint64_t>(o.teams) * C;
    for (uint64_t c = c0; c < c1; c += wave) {
      a.chunk_begin = c;
      a.chunk_end = std::min(c1, c + wave);
      launch.teams = static_cast<uint32_t>((a.chunk_end - c + C - 1) / C);
      if (!EmulateFill(launch, o.order).ok()) return false;
    }
    return true;
  };
  std::vector<uint8_t> out;
  if (!run(spec.chunk_labels, rc.chunk_begin, rc.main_end, o.chunks_per_team)) return out;
  if (rc.partial_192 && !run(rc.partial_graph_labels, rc.main_end, rc.main_end + 1, 1)) return out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const uint64_t n = slot_begin[i + 1] - slot_begin[i];
    for (int g = 0; g < 8; ++g) {
      if (pieces[i][n * 8 + g] != 0xA5A5A5A5u) return {};  // a write past the piece
    }
    const auto* bytes = reinterpret_cast<const uint8_t*>(pieces[i].data());
    out.insert(out.end(), bytes, bytes + n * 32);
  }
  return out;
}

}  // namespace testing
}  // namespace gpu
}  // namespace wipeproof
