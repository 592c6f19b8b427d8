// A GPU fill planned before it runs: the device programs, the side scratch's size and layout, the
// 192 block-0 tables, and every launch with its teams and their device addresses, as pure
// functions of the region, the tuning, the device (its occupancy and its slot map) and the side
// scratch granted. DeviceRegion::Fill (device_region.h) runs a plan: uploads, table builds,
// launches. The tests and the device model read plans without running them. The policy the
// planner applies (in place, waves, the block-0 table, side scratch) is fill_passes.h's.
//
// Two steps, because the side scratch's size is the runtime's answer: BudgetFill says how much
// side scratch the fill wants and needs at least; PlanFill lays the fill out in what was granted
// (a smaller side scratch holds fewer work labels per wave: more launches).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "kernels/gpu/device_program.h"
#include "kernels/gpu/gpu_runtime.h"
#include "kernels/gpu/kernel_args.h"
#include "kernels/region_labeler.h"
#include "prover/backends/gpu/fill_passes.h"
#include "prover/backends/gpu/memory_acquisition.h"

namespace wipeproof {
namespace gpu {

// The words a fill launch reports back through (FillWaveArgs clock_out, team_timer and fault),
// zeroed before it.
struct LaunchWords {
  uint64_t clock[2] = {0, 0};
  uint64_t team_timer[kTeamTimerWords] = {};
  uint32_t fault = 0;
  uint32_t padding = 0;
};

// How far apart the teams of a launch ran, from its team timer words (a device-wide timer, so
// only ratios), as shares of the launch's span (earliest team start to latest team end). With
// teams_per_slot 1 all teams of a launch start at once (last_start_share ~0), so a mean share well
// below 1 is the launch's tail: slots that sat idle while the last teams finished. With more teams
// than fit, teams start as others end, and the mean share is smaller by design.
struct TeamSpans {
  uint64_t teams = 0;           // teams that recorded both ends (0: the runtime has no team timer)
  double mean_share = 0;        // the teams' mean span
  double first_end_share = 0;   // when the first team ended
  double last_start_share = 0;  // when the last team started
};
TeamSpans TeamSpansFrom(const LaunchWords& words);

// One launch of a fill, as it ran.
struct LaunchStats {
  struct TeamGroup {
    uint32_t chunks = 0;  // C of each team of the group
    uint32_t teams = 0;
    uint32_t graph = 0;    // 0: graph m; 1: the 192 trailing partial chunk's graph
    bool scratch = false;  // work labels in the side scratch
  };
  std::string phase;  // "main", "deferred"
  uint32_t team_threads = 0;
  uint32_t teams = 0;
  uint64_t chunks = 0;
  std::vector<TeamGroup> groups;  // teams by shape, in launch order
  uint64_t cv0_nodes = 0;         // 192: block-0 values the launch had cached
  uint64_t labels_done = 0;       // after this launch
  double seconds = 0;             // host wall clock around the launch
  uint64_t sm_cycles = 0;         // block 0's SM clock cycles (0: the runtime has no clock)
  TeamSpans team_spans;
};

struct FillStats {
  double seconds = 0;
  uint64_t labels = 0;
  uint64_t nodes = 0;   // node hashes (1 compression each in c1; 2 + a cached or computed one in 192)
  uint32_t passes = 0;  // phases: main, deferred
  uint32_t launches = 0;
  uint64_t side_scratch_bytes = 0;  // outside the proof, freed on return
  // Device memory the fill used beyond the plan's label slots at any moment: the side scratch
  // (the plan's slots beyond the count, or memory held past the plan, are never used).
  uint64_t bytes_outside_label_slots_peak = 0;
  uint64_t region_scratch_peak_bytes = 0;  // inside planned label slots labelled later (192 block-0 table)
  uint64_t cv0_table_nodes = 0;            // 192: block-0 values cached (largest table used)
  uint64_t deferred_chunks = 0;            // 192: chunks under the block-0 table, labelled last
  uint64_t partial_chunks = 0;             // chunks the region holds part of (scratch teams)
  uint64_t time_limited_wave_chunks = 0;   // > 0: the device kills long kernels; chunks per launch at most
  TeamShape main_shape;                    // the first wave's team shape (C: its largest)
  uint64_t main_chunks_in_flight = 0;      // the first wave's chunks
  std::vector<LaunchStats> launch_log;
  std::string plan;  // one line per wave, for logs and gpu-check
};

// The device, as a plan sees it.
struct FillDevice {
  std::string id;  // names the device in errors
  uint64_t multiprocessors = 1;
  // Resident fill teams per multiprocessor by team size (threads), for every size a plan may use
  // (PlannedTeamSizes): the occupancy calculator's answers.
  std::map<uint32_t, int> teams_per_multiprocessor;
  bool kernel_time_limited = false;   // the driver kills long kernels: short launches (fill_passes.h)
  double raw_compressions_per_s = 0;  // measured where kernel_time_limited
  const SlotMap* slots = nullptr;     // the pieces the labels go in
};

// FillTuning::teams_per_slot at most (a launch's team table grows with it).
constexpr uint32_t kMaxTeamsPerSlot = 64;
// The tuning with its ranges applied (team threads 1..256, C 1..kMaxTeamChunks, teams per slot
// 1..kMaxTeamsPerSlot).
FillTuning ClampTuning(const FillTuning& tuning);
// Team sizes whose occupancy a plan may ask: team_threads doubled up to max_team_threads.
std::vector<uint32_t> PlannedTeamSizes(const FillTuning& clamped);

// Step 1: what the fill runs, and the side scratch it wants (side_want_bytes, capped by
// tuning.side_scratch_bytes) and needs at least (side_min_bytes).
struct FillBudget {
  RegionSpec spec;
  FillTuning tuning;     // clamped
  bool in_place = true;  // whole chunks in their own slots (else scratch teams, natural layout)
  RegionChunks rc;
  DeviceProgram program;          // graph m
  DeviceProgram partial_program;  // the last chunk's own graph (c1 truncated; 192 m'); empty if none
  struct Partial {                // a chunk the region holds part of: a scratch team of its own
    uint64_t chunk = 0;
    uint32_t graph = 0;
    uint64_t work_bytes = 0;
  };
  std::vector<Partial> partials;
  uint64_t whole_chunks = 0;
  uint64_t per_chunk_side_bytes = 0;  // work labels of a whole chunk outside its slots
  uint64_t bulk_want_bytes = 0;       // whole chunks' side work labels for a full wave
  uint64_t cv0_full_bytes = 0;        // 192: the whole block-0 table, as far as it may sit in the side scratch
  uint64_t full_wave_teams = 0;
  uint64_t max_teams = 0;             // team table entries
  std::vector<uint64_t> slot_table;   // SlotTableView as uploaded: slot_begin (pieces + 1), then the bases
  uint64_t side_min_bytes = 0, side_want_bytes = 0;
};
// Errors: INVALID_ARGUMENT (a bad spec, more labels than the slots), INTERNAL (a program that fails
// CheckDeviceProgram: a bug), FAILED_PRECONDITION (no occupancy for a team size).
StatusOr<FillBudget> BudgetFill(const RegionSpec& spec, const FillTuning& tuning, bool natural_layout,
                                const FillDevice& device);

// One launch of a plan: its wave, its teams' descriptors (device addresses), its arguments.
struct PlannedLaunch {
  PlannedWave wave;
  std::vector<TeamDesc> teams;
  FillLaunch launch;   // args.teams points at FillPlan::team_table_dev
  LaunchStats stats;   // what it will be: phase, shape, groups, chunks, cv0 nodes
  uint64_t labels = 0;  // labels it writes
};

// A 192 block-0 table to build before the launches that read it.
struct Cv0Build {
  uint64_t address = 0;
  uint64_t nodes = 0;
};

// Step 2: the fill laid out in a side scratch of `side_bytes` at device address `side_base`.
struct FillPlan {
  FillBudget budget;
  uint64_t slot_table_dev = 0;
  struct GraphArea {
    uint64_t words_dev = 0, steps_dev = 0;  // 0: no such graph
  } graphs[2];
  uint64_t team_table_dev = 0;
  uint64_t words_dev = 0;      // LaunchWords
  SessionConstants session;    // the labels' keys (session_constants.h)
  std::vector<Cv0Build> cv0_builds;
  std::vector<PlannedLaunch> launches;
  std::vector<LayoutRun> runs;  // in-place team blocks, for the label layout
  FillStats stats;              // the figures known before running (device_region.h)
};
// Errors: INTERNAL when the side scratch holds no chunk's work labels or a wave outgrows the team
// table or the side scratch (not expected once side_bytes >= side_min_bytes).
StatusOr<FillPlan> PlanFill(FillBudget budget, const FillDevice& device, uint64_t side_base, uint64_t side_bytes);

// The descriptor of `team`: in place (`inplace_slots` = m: its team block in the region, at most
// split over two pieces, else through the slot table) or, with inplace_slots 0, a scratch team;
// `extra` is the device address of its work labels outside the region (0: none).
TeamDesc TeamDescFor(const PlannedTeam& team, const RegionChunks& rc, const SlotMap& slots, uint32_t inplace_slots,
                     uint64_t extra);

}  // namespace gpu
}  // namespace wipeproof
