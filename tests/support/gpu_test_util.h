// Helpers shared by the GPU tests: regions, reference labels from the CPU engine, and a direct
// (DeviceRegion-free) run of the fill kernel's logic with chosen team shapes and layouts.
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
#include "prover/backends/gpu/label_layout.h"
#include "prover/backends/gpu/memory_acquisition.h"

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
  bool in_place = true;    // whole chunks in their own slots (false: scratch teams, natural layout)
  uint64_t cv0_nodes = 0;  // 192: block-0 table size (0: computed in the kernel)
  bool levelled = true;    // super-steps (false: a barrier after every op)
  ProgramLayout program_layout = ProgramLayout::kWork;  // kSharedScratch: scratch teams only
};

// Labels `spec` with the fill kernel's logic (EmulateFill), the region spread over pieces, and
// reads every label back through label_layout.h, in index order. Returns {} when a write strayed
// past a piece or a work area (guard words), or a launch failed.
inline std::vector<uint8_t> DirectRun(const RegionSpec& spec, const DirectRunOptions& o) {
  const bool f192 = spec.format == LabelFormat::k192;
  const uint32_t m = spec.chunk_labels;
  const RegionChunks rc = DescribeRegion(f192, m, spec.first, spec.count);
  constexpr uint32_t kGuard = 0xA5A5A5A5u, kScratchGuard = 0x5A5A5A5Au;
  // Pieces, with a few guard words after each to catch overruns.
  std::vector<std::vector<uint32_t>> pieces;
  std::vector<uint64_t> slot_begin{0}, bases;
  for (uint64_t s = 0; s < spec.count; s += o.piece_labels) {
    const uint64_t n = std::min(o.piece_labels, spec.count - s);
    pieces.emplace_back(n * 8 + 8, kGuard);
    bases.push_back(reinterpret_cast<uint64_t>(pieces.back().data()));
    slot_begin.push_back(slot_begin.back() + n);
  }
  std::vector<std::vector<uint32_t>> scratch;  // work areas, guard words after each
  auto area = [&](uint64_t labels) {
    scratch.emplace_back(labels * 8 + 8, kScratchGuard);
    return reinterpret_cast<uint64_t>(scratch.back().data());
  };
  const DeviceProgram program = BuildDeviceProgram(m, m, o.levelled, o.program_layout);
  const RegionChunks::Graph last = rc.GraphOf(rc.chunk_end - 1);
  const bool own_graph = last.graph_labels != m || last.ranks_needed != m;
  DeviceProgram partial_program;
  if (own_graph)
    partial_program = BuildDeviceProgram(last.graph_labels, last.ranks_needed, o.levelled, o.program_layout);
  FillLaunch launch;
  FillWaveArgs& a = launch.args;
  a.session = BuildSessionConstants(spec.format, spec.seed, m, m);
  const DeviceProgram* programs[2] = {&program, &partial_program};
  for (int g = 0; g < 2; ++g) {
    if (programs[g]->ops == 0) continue;
    a.graph[g].program = programs[g]->words.data();
    a.graph[g].step_begin = programs[g]->step_begin.data();
    a.graph[g].steps = programs[g]->steps;
    a.graph[g].work_labels = programs[g]->work_labels;
    const SessionConstants c = BuildSessionConstants(spec.format, spec.seed, m, g == 0 ? m : last.graph_labels);
    std::memcpy(a.graph[g].descriptor, c.descriptor, sizeof c.descriptor);
  }
  std::vector<uint32_t> cv0;
  if (f192 && o.cv0_nodes > 0) {
    Cv0BuildArgs b;
    cv0.assign(o.cv0_nodes * 8, 0);
    b.table = cv0.data();
    b.nodes = o.cv0_nodes;
    std::memcpy(b.int_key, a.session.int_key, 32);
    std::memcpy(b.src_key, a.session.src_key, 32);
    for (uint64_t n = 0; n < b.nodes; ++n) Cv0Entry(b, n);
    a.cv0 = cv0.data();
    a.cv0_nodes = o.cv0_nodes;
  }
  a.region_first = spec.first;
  a.region_count = spec.count;
  a.slots.slot_begin = slot_begin.data();
  a.slots.base = bases.data();
  a.slots.count = static_cast<uint32_t>(bases.size());
  launch.threads_per_team = o.team_threads;
  // Teams: partial chunks first (scratch, C = 1), then whole chunks C at a time.
  std::vector<TeamDesc> teams;
  SlotMap map;
  {
    std::vector<DeviceAllocation> allocations;
    for (size_t i = 0; i < pieces.size(); ++i)
      allocations.push_back({pieces[i].data(), (slot_begin[i + 1] - slot_begin[i]) * 32});
    map = SlotMap(allocations);
  }
  for (uint64_t c : rc.PartialChunks()) {
    TeamDesc d;
    d.first_chunk = c;
    d.chunks = 1;
    d.graph = own_graph && c == rc.chunk_end - 1 ? 1 : 0;
    d.extra = area(programs[d.graph]->work_labels);
    teams.push_back(d);
  }
  std::vector<LayoutRun> runs;
  if (rc.whole_end > rc.whole_begin && o.in_place) {
    runs.push_back({rc.whole_begin, rc.whole_end, o.chunks_per_team});
  }
  for (uint64_t c = rc.whole_begin; c < rc.whole_end; c += o.chunks_per_team) {
    TeamDesc d;
    d.first_chunk = c;
    d.chunks = static_cast<uint32_t>(std::min<uint64_t>(o.chunks_per_team, rc.whole_end - c));
    if (!o.in_place) {
      d.extra = area(static_cast<uint64_t>(d.chunks) * program.work_labels);
    } else {
      d.inplace_slots = m;
      if (program.work_labels > m) d.extra = area(static_cast<uint64_t>(d.chunks) * (program.work_labels - m));
      d.block_slot = rc.SlotBegin(c);
      const uint64_t block_end = d.block_slot + static_cast<uint64_t>(d.chunks) * m;
      const SlotMap::Place p = map.Locate(d.block_slot);
      const uint64_t piece_end = map.slot_begin()[p.piece + 1];
      d.seg0 = map.bases()[p.piece] + p.offset_bytes;
      d.split = static_cast<uint32_t>(2 * (std::min(block_end, piece_end) - d.block_slot));
      if (block_end > piece_end) {
        d.seg1 = map.bases()[p.piece + 1];
        d.flags |= block_end > map.slot_begin()[p.piece + 2] ? kTeamSlotTable : kTeamSplit;
      }
    }
    teams.push_back(d);
  }
  for (TeamDesc& d : teams) {
    const ChunkDivider div = MakeChunkDivider(d.chunks);
    d.chunk_magic = div.magic;
    d.chunk_shift = div.shift;
  }
  std::vector<uint8_t> out;
  for (size_t t = 0; t < teams.size(); t += o.teams) {
    const size_t n = std::min<size_t>(o.teams, teams.size() - t);
    a.teams = teams.data() + t;
    a.team_count = static_cast<uint32_t>(n);
    a.max_team_chunks = 0;
    for (size_t i = 0; i < n; ++i) a.max_team_chunks = std::max(a.max_team_chunks, teams[t + i].chunks);
    if (!EmulateFill(launch, o.order).ok()) return out;
  }
  for (size_t i = 0; i < pieces.size(); ++i) {
    const uint64_t n = slot_begin[i + 1] - slot_begin[i];
    for (int g = 0; g < 8; ++g) {
      if (pieces[i][n * 8 + g] != kGuard) return out;  // a write past the piece
    }
  }
  for (const auto& s : scratch) {
    for (int g = 0; g < 8; ++g) {
      if (s[s.size() - 8 + g] != kScratchGuard) return out;  // a write past a work area
    }
  }
  LabelLayout layout(spec.first, spec.count, m);
  layout.AddRuns(runs);
  out.resize(spec.count * 32);
  for (uint64_t i = 0; i < spec.count; ++i) {
    LabelLayout::Half halves[2];
    layout.Locate(spec.first + i, halves);
    for (int h = 0; h < 2; ++h) {
      const SlotMap::Place p = map.Locate(halves[h].slot);
      std::memcpy(out.data() + i * 32 + h * 16,
                  reinterpret_cast<const uint8_t*>(map.bases()[p.piece]) + p.offset_bytes + halves[h].byte_offset, 16);
    }
  }
  return out;
}

}  // namespace testing
}  // namespace gpu
}  // namespace wipeproof
