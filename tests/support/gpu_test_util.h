// Helpers shared by the GPU tests: regions, reference labels from the CPU engine, and a direct
// (DeviceRegion-free) run of the fill kernel's logic with chosen team shapes and layouts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <cstring>
#include <vector>

#include "kernels/gpu/device_program.h"
#include "kernels/gpu/emulated_runtime.h"
#include "kernels/gpu/session_constants.h"
#include "kernels/gpu/team_executor.h"
#include "kernels/graph_schedule.h"
#include "kernels/region_labeler.h"
#include "prover/backends/gpu/fill_passes.h"
#include "prover/backends/gpu/fill_plan.h"
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

// Race check of the fill kernel's logic (team_executor.h TeamRunStep's access observer). Counts,
// over the tracked memory (the region's pieces and the work areas), *step conflicts*: a label
// written by one item and touched by another item of the same super-step (on a GPU thread timing
// would decide the bytes), *team conflicts*: a label touched by two teams of one launch with a
// write involved (teams run concurrently), and *strays*: accesses outside every tracked range.
// Labels are keyed by their first 16 bytes (the observer sees half 0's address). Flat arrays
// indexed by 16-byte unit, stamped per step and per launch, so nothing is cleared between steps.
struct HazardCounts {
  uint64_t accesses = 0;
  uint64_t step_conflicts = 0;
  uint64_t team_conflicts = 0;
  uint64_t strays = 0;
  uint64_t steps = 0;
};

class HazardObserver {
 public:
  // TeamRunStep's observer interface; `kAddressesOnly` skips the hashing (see NoAccessObserver).
  explicit HazardObserver(bool addresses_only) : addresses_only_(addresses_only) {}
  void Track(const void* base, uint64_t bytes) {
    const uint64_t b = reinterpret_cast<uint64_t>(base);
    ranges_.push_back({b, b + bytes, units_});
    units_ += (bytes + 15) / 16;
    std::sort(ranges_.begin(), ranges_.end(), [](const Range& x, const Range& y) { return x.begin < y.begin; });
    entries_.resize(units_);
  }
  void BeginLaunch() { ++launch_; }
  void BeginTeam(uint32_t team) { team_ = team; }
  void BeginStep() {
    ++step_;
    ++counts_.steps;
  }
  void Read(uint64_t item, const uint32_t* p) const { Touch(item, p, false); }
  void Write(uint64_t item, const uint32_t* p) const { Touch(item, p, true); }
  const HazardCounts& counts() const { return counts_; }
  bool addresses_only() const { return addresses_only_; }

 private:
  struct Range {
    uint64_t begin, end, first_unit;
  };
  struct Entry {
    uint64_t step = 0, item = 0, launch = 0;
    uint32_t team = 0;
    bool step_write = false, step_shared = false, step_counted = false, launch_write = false, team_counted = false;
  };
  void Touch(uint64_t item, const uint32_t* p, bool write) const {
    ++counts_.accesses;
    const uint64_t a = reinterpret_cast<uint64_t>(p);
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), a, [](uint64_t v, const Range& r) { return v < r.begin; });
    if (it == ranges_.begin() || a >= (--it)->end) {
      ++counts_.strays;
      return;
    }
    Entry& e = entries_[it->first_unit + (a - it->begin) / 16];
    if (e.step != step_) {
      e.step = step_, e.item = item, e.step_write = write, e.step_shared = false, e.step_counted = false;
    } else {
      e.step_shared = e.step_shared || e.item != item;
      e.step_write = e.step_write || write;
      if (e.step_shared && e.step_write && !e.step_counted) ++counts_.step_conflicts, e.step_counted = true;
    }
    if (e.launch != launch_) {
      e.launch = launch_, e.team = team_, e.launch_write = write, e.team_counted = false;
    } else if (e.team != team_) {
      e.launch_write = e.launch_write || write;
      if (e.launch_write && !e.team_counted) ++counts_.team_conflicts, e.team_counted = true;
    } else {
      e.launch_write = e.launch_write || write;
    }
  }

  const bool addresses_only_;
  std::vector<Range> ranges_;
  uint64_t units_ = 0;
  mutable std::vector<Entry> entries_;
  mutable HazardCounts counts_;
  uint64_t step_ = 0, launch_ = 0;
  uint32_t team_ = 0;
};

// TeamRunStep's observer: a HazardObserver, hashing or not.
template <bool kSkipHashes>
struct ObserverRef {
  static constexpr bool kAddressesOnly = kSkipHashes;
  HazardObserver* observer;
  void Read(uint64_t item, const uint32_t* p) const { observer->Read(item, p); }
  void Write(uint64_t item, const uint32_t* p) const { observer->Write(item, p); }
};

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
  // Set: every team runs one "thread" per step under this observer (item numbers are the step's),
  // instead of EmulateFill; with its addresses_only() the labels are zeros and DirectRun returns {}.
  HazardObserver* hazards = nullptr;
  // Tests of corrupt input: edit the main program before the run, or the teams of each launch.
  std::function<void(DeviceProgram*)> edit_program;
  std::function<void(std::vector<TeamDesc>*)> edit_teams;
  uint32_t* fault = nullptr;  // set: the launches' fault word (kernel_args.h kFault*), zeroed first
};

// One launch run step by step under `hazards` (DirectRunOptions::hazards).
template <int kFormat, bool kSkipHashes>
void ObservedLaunch(const FillWaveArgs& a, HazardObserver* hazards) {
  std::vector<uint32_t> shared(FillSharedBytes(a.max_team_chunks) / 4 + 4);
  const ObserverRef<kSkipHashes> obs{hazards};
  hazards->BeginLaunch();
  for (uint32_t b = 0; b < a.team_count; ++b) {
    hazards->BeginTeam(b);
    const Team team = MakeTeam(a, b, shared.data(), 0);
    TeamPrologue(a, b, team, 0, 1);
    for (uint32_t s = 0; s < team.steps; ++s) {
      hazards->BeginStep();
      TeamRunStep<kFormat>(a, team, s, 0, 1, false, obs);
    }
  }
}

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
    if (o.hazards != nullptr) o.hazards->Track(scratch.back().data(), labels * 32);
    return reinterpret_cast<uint64_t>(scratch.back().data());
  };
  if (o.hazards != nullptr) {
    for (size_t i = 0; i < pieces.size(); ++i) o.hazards->Track(pieces[i].data(), (slot_begin[i + 1] - slot_begin[i]) * 32);
  }
  DeviceProgram program = BuildDeviceProgram(m, m, o.levelled, o.program_layout);
  if (o.edit_program) o.edit_program(&program);
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
  // Teams as the planner would describe them (fill_plan.h TeamDescFor), in shapes it might not pick.
  for (uint64_t c : rc.PartialChunks()) {
    const uint32_t graph = own_graph && c == rc.chunk_end - 1 ? 1 : 0;
    teams.push_back(TeamDescFor({c, 1, true, graph}, rc, map, 0, area(programs[graph]->work_labels)));
  }
  std::vector<LayoutRun> runs;
  if (rc.whole_end > rc.whole_begin && o.in_place) {
    runs.push_back({rc.whole_begin, rc.whole_end, o.chunks_per_team});
  }
  for (uint64_t c = rc.whole_begin; c < rc.whole_end; c += o.chunks_per_team) {
    const uint32_t chunks = static_cast<uint32_t>(std::min<uint64_t>(o.chunks_per_team, rc.whole_end - c));
    if (!o.in_place) {
      teams.push_back(
          TeamDescFor({c, chunks, true, 0}, rc, map, 0, area(static_cast<uint64_t>(chunks) * program.work_labels)));
    } else {
      const uint64_t extra =
          program.work_labels > m ? area(static_cast<uint64_t>(chunks) * (program.work_labels - m)) : 0;
      teams.push_back(TeamDescFor({c, chunks, false, 0}, rc, map, m, extra));
    }
  }
  if (o.edit_teams) o.edit_teams(&teams);
  if (o.fault != nullptr) *o.fault = 0;
  a.fault = o.fault;
  std::vector<uint8_t> out;
  for (size_t t = 0; t < teams.size(); t += o.teams) {
    const size_t n = std::min<size_t>(o.teams, teams.size() - t);
    a.teams = teams.data() + t;
    a.team_count = static_cast<uint32_t>(n);
    a.max_team_chunks = 0;
    for (size_t i = 0; i < n; ++i) a.max_team_chunks = std::max(a.max_team_chunks, teams[t + i].chunks);
    if (o.hazards == nullptr) {
      if (!EmulateFill(launch, o.order).ok()) return out;
    } else if (o.hazards->addresses_only()) {
      f192 ? ObservedLaunch<kFormat192, true>(a, o.hazards) : ObservedLaunch<kFormatC1, true>(a, o.hazards);
    } else {
      f192 ? ObservedLaunch<kFormat192, false>(a, o.hazards) : ObservedLaunch<kFormatC1, false>(a, o.hazards);
    }
  }
  if (o.hazards != nullptr && o.hazards->addresses_only()) return out;
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
