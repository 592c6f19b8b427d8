#include "prover/backends/gpu/fill_plan.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "kernels/gpu/session_constants.h"
#include "kernels/gpu/team_executor.h"

namespace wipeproof {
namespace gpu {
namespace {

constexpr uint64_t kDeviceAlignment = 256;

uint64_t Aligned(uint64_t n) { return (n + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment; }

// The side scratch carved up in order, each area 256-byte aligned: what SideScratch::Take hands
// out at run time, computed here so the plan knows every address.
class SideLayout {
 public:
  SideLayout(uint64_t base, uint64_t bytes) : base_(base), bytes_(bytes) {}
  uint64_t Left() const { return bytes_ - std::min(bytes_, Aligned(used_)); }
  // REQUIRES: n <= Left().
  uint64_t Take(uint64_t n) {
    const uint64_t at = Aligned(used_);
    used_ = at + n;
    return base_ + at;
  }

 private:
  uint64_t base_, bytes_, used_ = 0;
};

// Teams per launch for a team size: the occupancy times the multiprocessors, capped by
// tuning.target_threads, times tuning.teams_per_slot (teams beyond the resident ones start as
// others end).
uint64_t ResidentTeams(const FillDevice& device, const FillTuning& tune, uint32_t threads) {
  auto it = device.teams_per_multiprocessor.find(threads);
  const int per_mp = it == device.teams_per_multiprocessor.end() ? 1 : std::max(it->second, 1);
  uint64_t n = static_cast<uint64_t>(per_mp) * std::max<uint64_t>(1, device.multiprocessors);
  if (tune.target_threads > 0) n = std::max<uint64_t>(1, std::min(n, tune.target_threads / threads));
  return n * std::max<uint32_t>(1, tune.teams_per_slot);
}

LaunchStats StatsOf(const PlannedWave& wave, const RegionChunks& rc, uint64_t cv0_nodes) {
  LaunchStats ls;
  ls.phase = wave.phase;
  ls.team_threads = wave.team_threads;
  ls.teams = static_cast<uint32_t>(wave.teams.size());
  ls.cv0_nodes = cv0_nodes;
  for (const PlannedTeam& pt : wave.teams) {
    ls.chunks += pt.chunks;
    if (ls.groups.empty() || ls.groups.back().chunks != pt.chunks || ls.groups.back().graph != pt.graph ||
        ls.groups.back().scratch != pt.scratch) {
      ls.groups.push_back({pt.chunks, 0, pt.graph, pt.scratch});
    }
    ++ls.groups.back().teams;
  }
  (void)rc;
  return ls;
}

// Where the 192 block-0 table goes: a prefix (or all) of it in the side scratch; else, when it does
// not fit there and the region is large enough, the whole table in the top of the plan's own slots,
// whose chunks are then labelled last ("deferred").
struct Cv0Placement {
  uint64_t side = 0, side_nodes = 0;  // the side scratch's table
  uint64_t main = 0, main_nodes = 0;  // the table the main phase reads
  uint64_t deferred_begin = 0;        // first deferred chunk (rc.whole_end: none)
};

Cv0Placement PlaceCv0(const FillBudget& b, const SlotMap& slots, SideLayout* side, FillPlan* plan) {
  Cv0Placement p;
  p.deferred_begin = b.rc.whole_end;
  if (b.spec.format != LabelFormat::k192) return p;
  p.side_nodes = std::min(b.cv0_full_bytes, side->Left() / 32 * 32) / 32;
  if (p.side_nodes > 0) {
    p.side = side->Take(p.side_nodes * 32);
    plan->cv0_builds.push_back({p.side, p.side_nodes});
  }
  plan->stats.cv0_table_nodes = p.side_nodes;
  p.main = p.side;
  p.main_nodes = p.side_nodes;
  const uint64_t nodes = b.program.nodes;
  if (!b.in_place || !b.tuning.cv0_in_region || p.side_nodes >= nodes) return p;
  const uint32_t m = b.spec.chunk_labels;
  const uint64_t table_bytes = nodes * 32;
  const uint64_t table_chunks = (table_bytes + m * 32ull - 1) / (m * 32ull) + 1;
  if (b.whole_chunks < 4 * table_chunks) return p;
  uint64_t low = 0;
  const std::vector<uint64_t> at =
      PlaceFromTop(slots, b.rc.SlotBegin(b.rc.whole_begin), b.rc.SlotBegin(b.rc.whole_end), table_bytes, 1, &low);
  if (at.empty()) return p;
  const uint64_t deferred_begin = std::max(b.rc.whole_begin, (low + b.spec.first) / m);
  if ((b.rc.whole_end - deferred_begin) * 4 > b.whole_chunks) return p;  // too many chunks deferred
  p.deferred_begin = deferred_begin;
  p.main = at[0];
  p.main_nodes = nodes;
  plan->cv0_builds.push_back({p.main, p.main_nodes});
  plan->stats.cv0_table_nodes = p.main_nodes;
  plan->stats.region_scratch_peak_bytes = table_bytes;
  plan->stats.deferred_chunks = b.rc.whole_end - deferred_begin;
  return p;
}

// The waves: partial chunks' scratch teams in the first, whole chunks evenly, deferred chunks last.
std::vector<PlannedWave> PlanWaves(const FillBudget& b, const FillDevice& device, uint64_t wave_chunk_cap,
                                   uint64_t deferred_begin, std::vector<LayoutRun>* runs) {
  const FillTuning& tune = b.tuning;
  WaveLimits limits;
  limits.resident_teams = [&](uint32_t threads) { return ResidentTeams(device, tune, threads); };
  limits.team_threads = tune.team_threads;
  limits.max_team_threads = tune.max_team_threads;
  limits.max_chunks_per_team = tune.max_chunks_per_team;
  limits.fixed_chunks_per_team =
      tune.threads_per_chunk > 0 ? std::max<uint32_t>(1, tune.team_threads / tune.threads_per_chunk) : 0;
  limits.max_wave_chunks = wave_chunk_cap;
  std::vector<PlannedWave> waves;
  PlanEvenWaves(b.rc.whole_begin, deferred_begin, "main", !b.in_place, limits, &waves, runs,
                static_cast<uint32_t>(b.partials.size()));
  if (!b.partials.empty()) {
    if (waves.empty()) {
      waves.emplace_back();
      waves.back().phase = "main";
      waves.back().team_threads = tune.team_threads;
    }
    for (const FillBudget::Partial& p : b.partials) waves.front().teams.push_back({p.chunk, 1, true, p.graph});
  }
  PlanEvenWaves(deferred_begin, b.rc.whole_end, "deferred", false, limits, &waves, runs);
  return waves;
}

}  // namespace

FillTuning ClampTuning(const FillTuning& tuning) {
  FillTuning tune = tuning;
  tune.team_threads = std::clamp<uint32_t>(tune.team_threads, 1, 256);
  tune.max_team_threads = std::clamp<uint32_t>(tune.max_team_threads, tune.team_threads, 256);
  tune.max_chunks_per_team = std::clamp<uint32_t>(tune.max_chunks_per_team, 1, kMaxTeamChunks);
  tune.teams_per_slot = std::clamp<uint32_t>(tune.teams_per_slot, 1, kMaxTeamsPerSlot);
  return tune;
}

std::vector<uint32_t> PlannedTeamSizes(const FillTuning& clamped) {
  std::vector<uint32_t> sizes;
  for (uint32_t g = clamped.team_threads; g <= clamped.max_team_threads; g *= 2) sizes.push_back(g);
  return sizes;
}

StatusOr<FillBudget> BudgetFill(const RegionSpec& spec, const FillTuning& tuning, bool natural_layout,
                                const FillDevice& device) {
  WP_RETURN_IF_ERROR(ValidateRegion(spec));
  if (spec.count > device.slots->slots()) {
    return InvalidArgumentError("plan has " + std::to_string(spec.count) + " labels but device " + device.id +
                                " holds " + std::to_string(device.slots->slots()));
  }
  FillBudget b;
  b.spec = spec;
  b.tuning = ClampTuning(tuning);
  // GPU-filled host memory keeps the natural layout (its owner reads it directly): scratch teams.
  b.in_place = b.tuning.in_place && !natural_layout;
  const bool f192 = spec.format == LabelFormat::k192;
  const uint32_t m = spec.chunk_labels;
  b.rc = DescribeRegion(f192, m, spec.first, spec.count);
  // Programs: graph m, and the last chunk's own graph when the region ends inside it (c1: graph m
  // truncated after its last rank; 192: graph m').
  b.program = BuildDeviceProgram(m, m);
  const RegionChunks::Graph last = b.rc.GraphOf(b.rc.chunk_end - 1);
  const bool own_graph = last.graph_labels != m || last.ranks_needed != m;
  if (own_graph) b.partial_program = BuildDeviceProgram(last.graph_labels, last.ranks_needed);
  WP_RETURN_IF_ERROR(CheckDeviceProgram(b.program));
  if (own_graph) WP_RETURN_IF_ERROR(CheckDeviceProgram(b.partial_program));
  const uint64_t work_bytes = static_cast<uint64_t>(b.program.work_labels) * 32;
  for (uint64_t c : b.rc.PartialChunks()) {
    const bool own = own_graph && c == b.rc.chunk_end - 1;
    b.partials.push_back({c, own ? 1u : 0u, own ? b.partial_program.work_labels * 32ull : work_bytes});
  }
  b.whole_chunks = b.rc.whole_end > b.rc.whole_begin ? b.rc.whole_end - b.rc.whole_begin : 0;
  for (uint32_t threads : PlannedTeamSizes(b.tuning)) {
    if (device.teams_per_multiprocessor.count(threads) == 0) {
      return FailedPreconditionError("no occupancy for fill teams of " + std::to_string(threads) + " threads on " +
                                     device.id);
    }
  }
  b.full_wave_teams = ResidentTeams(device, b.tuning, b.tuning.team_threads);

  // The side scratch: the only memory outside the plan's label slots (fill_passes.h).
  b.max_teams = b.full_wave_teams + b.partials.size();
  b.slot_table = device.slots->slot_begin();
  b.slot_table.insert(b.slot_table.end(), device.slots->bases().begin(), device.slots->bases().end());
  const uint64_t fixed = Aligned(b.slot_table.size() * 8) + Aligned(b.program.words.size() * 4) +
                         Aligned(b.program.step_begin.size() * 4) + Aligned(b.partial_program.words.size() * 4 + 4) +
                         Aligned(b.partial_program.step_begin.size() * 4 + 4) +
                         Aligned(b.max_teams * sizeof(TeamDesc)) + Aligned(sizeof(LaunchWords));
  uint64_t partial_bytes = 0;
  for (const FillBudget::Partial& p : b.partials) partial_bytes += Aligned(p.work_bytes);
  // Side bytes each whole chunk needs: none in place when m is a power of two.
  b.per_chunk_side_bytes = b.in_place ? static_cast<uint64_t>(b.program.work_labels - m) * 32 : work_bytes;
  const uint32_t c_max = b.tuning.threads_per_chunk > 0
                             ? std::max<uint32_t>(1, b.tuning.team_threads / b.tuning.threads_per_chunk)
                             : b.tuning.max_chunks_per_team;
  b.bulk_want_bytes = b.per_chunk_side_bytes > 0
                          ? b.per_chunk_side_bytes * std::min<uint64_t>(b.whole_chunks, b.full_wave_teams * c_max) +
                                kDeviceAlignment * b.full_wave_teams
                          : 0;
  b.cv0_full_bytes = f192 ? std::min(b.program.nodes * 32, b.tuning.cv0_side_max_bytes / 32 * 32) : 0;
  b.side_min_bytes =
      fixed + partial_bytes + (b.whole_chunks > 0 ? Aligned(b.per_chunk_side_bytes) + kDeviceAlignment : 0);
  b.side_want_bytes =
      std::max(b.side_min_bytes, std::min(b.tuning.side_scratch_bytes, fixed + partial_bytes + b.bulk_want_bytes +
                                                                            b.cv0_full_bytes + kDeviceAlignment));
  return b;
}

TeamDesc TeamDescFor(const PlannedTeam& team, const RegionChunks& rc, const SlotMap& slots, uint32_t inplace_slots,
                     uint64_t extra) {
  TeamDesc d;
  d.first_chunk = team.first_chunk;
  d.chunks = team.chunks;
  const ChunkDivider div = MakeChunkDivider(team.chunks);
  d.chunk_magic = div.magic;
  d.chunk_shift = div.shift;
  d.graph = team.graph;
  d.extra = extra;
  if (inplace_slots == 0) return d;
  // In place: the team block, and the one or two pieces it lies in (more: the slot table).
  d.inplace_slots = inplace_slots;
  d.block_slot = rc.SlotBegin(team.first_chunk);
  const uint64_t block_end = d.block_slot + static_cast<uint64_t>(team.chunks) * rc.m;
  const SlotMap::Place p0 = slots.Locate(d.block_slot);
  const uint64_t piece_end = slots.slot_begin()[p0.piece + 1];
  d.seg0 = slots.bases()[p0.piece] + p0.offset_bytes;
  d.split = static_cast<uint32_t>(2 * (std::min(block_end, piece_end) - d.block_slot));
  if (block_end > piece_end) {
    uint32_t next = p0.piece + 1;
    while (slots.slot_begin()[next + 1] == slots.slot_begin()[next]) ++next;  // skip empty pieces
    d.seg1 = slots.bases()[next];
    d.flags |= block_end > slots.slot_begin()[next + 1] ? kTeamSlotTable : kTeamSplit;
  }
  return d;
}

TeamSpans TeamSpansFrom(const LaunchWords& words) {
  TeamSpans t;
  const uint64_t* w = words.team_timer;
  const uint64_t first_start = ~w[kTeamTimerFirstStartNot];
  const uint64_t last_end = w[kTeamTimerLastEnd];
  const uint64_t teams = w[kTeamTimerEnded];
  if (teams == 0 || w[kTeamTimerStarted] != teams || last_end <= first_start) return t;
  const double launch = static_cast<double>(last_end - first_start);
  t.teams = teams;
  t.mean_share = static_cast<double>(w[kTeamTimerEndSum] - w[kTeamTimerStartSum]) / static_cast<double>(teams) / launch;
  t.first_end_share = static_cast<double>(~w[kTeamTimerFirstEndNot] - first_start) / launch;
  t.last_start_share = static_cast<double>(w[kTeamTimerLastStart] - first_start) / launch;
  return t;
}

StatusOr<FillPlan> PlanFill(FillBudget budget, const FillDevice& device, uint64_t side_base, uint64_t side_bytes) {
  FillPlan plan;
  plan.budget = std::move(budget);
  const FillBudget& b = plan.budget;
  const uint32_t m = b.spec.chunk_labels;
  const SlotMap& slots = *device.slots;
  SideLayout side(side_base, side_bytes);
  plan.stats.side_scratch_bytes = side_bytes;
  plan.stats.bytes_outside_label_slots_peak = side_bytes;
  plan.stats.partial_chunks = b.partials.size();

  // Uploads, in the side scratch's order.
  plan.slot_table_dev = side.Take(b.slot_table.size() * 8);
  const DeviceProgram* programs[2] = {&b.program, &b.partial_program};
  for (int g = 0; g < 2; ++g) {
    if (programs[g]->ops == 0) continue;
    plan.graphs[g].words_dev = side.Take(programs[g]->words.size() * 4);
    plan.graphs[g].steps_dev = side.Take(programs[g]->step_begin.size() * 4);
  }
  plan.team_table_dev = side.Take(b.max_teams * sizeof(TeamDesc));
  plan.words_dev = side.Take(sizeof(LaunchWords));
  std::vector<uint64_t> partial_area;
  for (const FillBudget::Partial& p : b.partials) partial_area.push_back(side.Take(p.work_bytes));
  // Work labels of whole chunks (extras, or scratch teams), then the 192 block-0 table.
  const uint64_t per_chunk = b.per_chunk_side_bytes;
  const uint64_t bulk_bytes = per_chunk > 0 ? std::min(b.bulk_want_bytes, side.Left()) : 0;
  const uint64_t bulk_dev = bulk_bytes > 0 ? side.Take(bulk_bytes) : 0;
  uint64_t wave_chunk_cap = ~0ull;
  if (per_chunk > 0) {
    wave_chunk_cap = bulk_bytes / Aligned(per_chunk);  // each team's part 256-byte aligned
    if (wave_chunk_cap == 0 && b.whole_chunks > 0) return InternalError("side scratch holds no chunk's work labels");
  }
  if (b.tuning.max_wave_chunks > 0) wave_chunk_cap = std::min(wave_chunk_cap, b.tuning.max_wave_chunks);
  if (device.kernel_time_limited) {  // the driver kills long kernels: short launches (fill_passes.h)
    const uint64_t cap =
        WaveChunksForSeconds(kTimeLimitedLaunchSeconds, device.raw_compressions_per_s * kTimeLimitedFillShare,
                             CompressionsPerChunk(b.spec.format == LabelFormat::k192, b.program.nodes));
    wave_chunk_cap = std::min(wave_chunk_cap, cap);
    plan.stats.time_limited_wave_chunks = cap;
  }
  const Cv0Placement cv0 = PlaceCv0(b, slots, &side, &plan);
  const std::vector<PlannedWave> waves = PlanWaves(b, device, wave_chunk_cap, cv0.deferred_begin, &plan.runs);

  // Each wave: its team descriptors and its launch.
  plan.session = BuildSessionConstants(b.spec.format, b.spec.seed, m, m);
  FillWaveArgs base;
  base.session = plan.session;
  for (int g = 0; g < 2; ++g) {
    if (plan.graphs[g].words_dev == 0) continue;
    base.graph[g].program = reinterpret_cast<const uint32_t*>(plan.graphs[g].words_dev);
    base.graph[g].step_begin = reinterpret_cast<const uint32_t*>(plan.graphs[g].steps_dev);
    base.graph[g].steps = programs[g]->steps;
    base.graph[g].work_labels = programs[g]->work_labels;
    const uint32_t labels = g == 0 ? m : b.rc.GraphOf(b.rc.chunk_end - 1).graph_labels;
    const SessionConstants c = BuildSessionConstants(b.spec.format, b.spec.seed, m, labels);
    std::memcpy(base.graph[g].descriptor, c.descriptor, sizeof c.descriptor);
  }
  base.region_first = b.spec.first;
  base.region_count = b.spec.count;
  base.teams = reinterpret_cast<const TeamDesc*>(plan.team_table_dev);
  base.slots.slot_begin = reinterpret_cast<const uint64_t*>(plan.slot_table_dev);
  base.slots.base = reinterpret_cast<const uint64_t*>(plan.slot_table_dev) + slots.pieces() + 1;
  base.slots.count = slots.pieces();
  base.clock_out = reinterpret_cast<LaunchWords*>(plan.words_dev)->clock;
  base.team_timer = reinterpret_cast<LaunchWords*>(plan.words_dev)->team_timer;
  base.fault = &reinterpret_cast<LaunchWords*>(plan.words_dev)->fault;
  for (const PlannedWave& wave : waves) {
    if (wave.teams.size() > b.max_teams) return InternalError("wave has more teams than the team table holds");
    PlannedLaunch launch;
    launch.wave = wave;
    const bool deferred = wave.phase == "deferred";
    uint64_t bulk_used = 0;
    size_t partial_index = 0;
    for (const PlannedTeam& pt : wave.teams) {
      const bool is_partial =
          pt.scratch && pt.chunks == 1 && (pt.first_chunk < b.rc.whole_begin || pt.first_chunk >= b.rc.whole_end);
      uint64_t extra = 0;
      if (is_partial) {
        extra = partial_area[partial_index++];
        launch.labels += b.rc.SlotEnd(pt.first_chunk) - b.rc.SlotBegin(pt.first_chunk);
      } else {
        launch.labels += static_cast<uint64_t>(pt.chunks) * m;
        if (per_chunk > 0) {
          extra = bulk_dev + bulk_used;
          bulk_used += Aligned(per_chunk * pt.chunks);
          if (bulk_used > bulk_bytes) return InternalError("wave's work labels exceed the side scratch");
        }
      }
      launch.teams.push_back(TeamDescFor(pt, b.rc, slots, pt.scratch ? 0 : m, extra));
    }
    FillWaveArgs& a = launch.launch.args;
    a = base;
    a.cv0 = reinterpret_cast<const uint32_t*>(deferred ? cv0.side : cv0.main);
    a.cv0_nodes = deferred ? cv0.side_nodes : cv0.main_nodes;
    a.team_count = static_cast<uint32_t>(launch.teams.size());
    a.max_team_chunks = wave.MaxTeamChunks();
    launch.launch.threads_per_team = wave.team_threads;
    launch.stats = StatsOf(wave, b.rc, a.cv0_nodes);
    plan.launches.push_back(std::move(launch));
  }
  if (!plan.launches.empty()) {
    plan.stats.main_shape = {waves.front().team_threads, waves.front().MaxTeamChunks()};
    plan.stats.main_chunks_in_flight = plan.launches.front().stats.chunks;
  }
  // One line for the programs, one per wave (logs, gpu-check).
  plan.stats.plan = "program: " + std::to_string(b.program.ops) + " ops in " + std::to_string(b.program.steps) +
                    " super-steps, " + std::to_string(b.program.nodes) + " nodes, " +
                    std::to_string(b.program.work_labels) + " work slots per chunk";
  for (size_t w = 0; w < plan.launches.size(); ++w) {
    const LaunchStats& ls = plan.launches[w].stats;
    plan.stats.plan += "\n" + ls.phase + " wave " + std::to_string(w) + ": " + std::to_string(ls.teams) +
                       " teams of " + std::to_string(ls.team_threads) + " threads, " + std::to_string(ls.chunks) +
                       " chunks (C " + std::to_string(ls.groups.front().chunks) + (ls.groups.size() > 1 ? "..." : "") +
                       "), chunks " + std::to_string(plan.launches[w].wave.teams.front().first_chunk) + "..";
  }
  plan.stats.nodes = b.whole_chunks * b.program.nodes;
  for (const FillBudget::Partial& p : b.partials) plan.stats.nodes += p.graph ? b.partial_program.nodes : b.program.nodes;
  return plan;
}

}  // namespace gpu
}  // namespace wipeproof
