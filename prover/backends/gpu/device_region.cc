#include "prover/backends/gpu/device_region.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "kernels/gpu/device_program.h"
#include "kernels/gpu/session_constants.h"
#include "kernels/gpu/team_executor.h"
#include "kernels/graph_schedule.h"

namespace wipeproof {
namespace gpu {
namespace {

constexpr uint64_t kDeviceAlignment = 256;

// The words a fill launch reports back through (FillWaveArgs clock_out and fault), zeroed before it.
struct LaunchWords {
  uint64_t clock[2] = {0, 0};
  uint32_t fault = 0;
  uint32_t padding = 0;
};

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Takes device memory and refuses what cannot hold labels in physical bytes: anything the runtime
// does not call plain device memory (managed memory migrates; host memory is not the device's),
// and compressible memory where the runtime can tell (gpu_runtime.h MemoryKind).
class RuntimeAllocator final : public DeviceAllocator {
 public:
  RuntimeAllocator(GpuRuntime* runtime, int ordinal, MemoryAccount* account = nullptr)
      : runtime_(runtime), ordinal_(ordinal), account_(account) {}
  Status Allocate(uint64_t bytes, void** ptr) override {
    WP_RETURN_IF_ERROR(runtime_->Allocate(ordinal_, bytes, ptr));
    MemoryKind kind;
    Status st = runtime_->QueryMemory(ordinal_, *ptr, &kind);
    if (st.ok() && (!kind.device || kind.managed || kind.compressible)) {
      st = FailedPreconditionError(std::string("refusing ") +
                                   (kind.managed        ? "managed"
                                    : kind.compressible ? "compressible"
                                                        : "non-device") +
                                   " memory for labels (" + kind.detail + ")");
    }
    if (!st.ok()) {
      runtime_->Free(ordinal_, *ptr);
      *ptr = nullptr;
      return st.WithContext("checking an allocation of " + std::to_string(bytes) + " bytes");
    }
    if (account_ != nullptr) {
      if (account_->memory_kind.empty()) account_->memory_kind = kind.detail;
      account_->compression_checked =
          kind.compression_checked && (account_->pieces == 0 || account_->compression_checked);
      ++account_->pieces;
    }
    return Status::Ok();
  }
  void Free(void* ptr) override { runtime_->Free(ordinal_, ptr); }

 private:
  GpuRuntime* runtime_;
  int ordinal_;
  MemoryAccount* account_;
};

// The side scratch: one device allocation carved up by a bump allocator; freed on scope exit.
class SideScratch {
 public:
  SideScratch(GpuRuntime* runtime, int ordinal) : runtime_(runtime), ordinal_(ordinal) {}
  ~SideScratch() {
    if (base_ != nullptr) runtime_->Free(ordinal_, base_);
  }
  // Takes between `minimum` and `want` bytes, halving on RESOURCE_EXHAUSTED.
  Status Allocate(uint64_t want, uint64_t minimum) {
    uint64_t size = std::max(want, minimum);
    for (;;) {
      Status st = runtime_->Allocate(ordinal_, size, &base_);
      if (st.ok()) {
        bytes_ = size;
        return Status::Ok();
      }
      base_ = nullptr;
      if (st.code() != StatusCode::kResourceExhausted || size == minimum) {
        return st.WithContext("side scratch of " + std::to_string(size) + " bytes");
      }
      size = std::max(minimum, size / 2);
    }
  }
  uint64_t bytes() const { return bytes_; }
  uint64_t Left() const { return bytes_ - AlignUp(used_, kDeviceAlignment); }
  // REQUIRES: n <= Left().
  uint64_t Take(uint64_t n) {
    const uint64_t at = AlignUp(used_, kDeviceAlignment);
    used_ = at + n;
    return reinterpret_cast<uint64_t>(base_) + at;
  }

 private:
  GpuRuntime* runtime_;
  int ordinal_;
  void* base_ = nullptr;
  uint64_t bytes_ = 0, used_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<DeviceRegion>> DeviceRegion::Acquire(GpuRuntime* runtime, int ordinal,
                                                              const DeviceRegionOptions& options) {
  std::unique_ptr<DeviceRegion> r(new DeviceRegion(runtime, ordinal));  // releases on every early return
  WP_RETURN_IF_ERROR(runtime->Properties(ordinal, &r->props_));
  MemoryAccount& a = r->account_;
  WP_RETURN_IF_ERROR(runtime->MemoryInfo(ordinal, &a.free_before_bytes, &a.total_bytes));
  WP_RETURN_IF_ERROR(r->MeasureRateIfTimeLimited());
  a.context_and_others_bytes = a.total_bytes > a.free_before_bytes ? a.total_bytes - a.free_before_bytes : 0;
  uint64_t target = options.bytes;
  if (target == 0) {
    const uint64_t reserve = std::max(options.reserve_bytes, kMinReserveBytes);
    if (a.free_before_bytes <= reserve + 32) {
      return ResourceExhaustedError("device " + r->props_.id + " has " + std::to_string(a.free_before_bytes) +
                                    " bytes free, not more than the reserve of " + std::to_string(reserve));
    }
    target = a.free_before_bytes - reserve;
  }
  WP_RETURN_IF_ERROR(runtime->AllocateMappedHost(ordinal, static_cast<uint64_t>(kLookupBatch) * kLookupBytesPerLabel,
                                                 &r->lookup_host_, &r->lookup_device_));
  RuntimeAllocator allocator(runtime, ordinal, &a);
  auto pieces = AcquireInPieces(allocator, target, options.policy);
  if (!pieces.ok()) return pieces.status().WithContext("acquiring memory on " + r->props_.id);
  r->pieces_ = std::move(pieces).value();
  const uint64_t got = TotalBytes(r->pieces_);
  if (got < 32 || (options.bytes != 0 && got < options.bytes)) {
    return ResourceExhaustedError("device " + r->props_.id + ": took " + std::to_string(got) + " of " +
                                  std::to_string(target) + " bytes requested");
  }
  r->map_ = SlotMap(r->pieces_);
  uint64_t total = 0;
  WP_RETURN_IF_ERROR(runtime->MemoryInfo(ordinal, &a.free_after_bytes, &total));
  a.acquired_bytes = got;
  a.pieces = r->pieces_.size();
  a.smallest_piece_bytes = ~0ull;
  for (const auto& p : r->pieces_) {
    a.largest_piece_bytes = std::max(a.largest_piece_bytes, p.bytes);
    a.smallest_piece_bytes = std::min(a.smallest_piece_bytes, p.bytes);
  }
  a.acquisition_overhead_bytes =
      static_cast<int64_t>(a.free_before_bytes) - static_cast<int64_t>(a.free_after_bytes) - static_cast<int64_t>(got);
  return r;
}

StatusOr<std::unique_ptr<DeviceRegion>> DeviceRegion::AdoptHostMemory(GpuRuntime* runtime, int ordinal, void* host,
                                                                      uint64_t bytes) {
  if (host == nullptr || bytes < 32 || reinterpret_cast<uint64_t>(host) % 32 != 0) {
    return InvalidArgumentError("host range must be at least one label and 32-byte aligned");
  }
  std::unique_ptr<DeviceRegion> r(new DeviceRegion(runtime, ordinal));
  WP_RETURN_IF_ERROR(runtime->Properties(ordinal, &r->props_));
  WP_RETURN_IF_ERROR(r->MeasureRateIfTimeLimited());
  WP_RETURN_IF_ERROR(runtime->AllocateMappedHost(ordinal, static_cast<uint64_t>(kLookupBatch) * kLookupBytesPerLabel,
                                                 &r->lookup_host_, &r->lookup_device_));
  void* device = nullptr;
  WP_RETURN_IF_ERROR(runtime->RegisterHost(ordinal, host, bytes, &device).WithContext("registering host memory"));
  r->adopted_host_ = host;
  r->pieces_.push_back({device, bytes});
  r->map_ = SlotMap(r->pieces_);
  return r;
}

DeviceRegion::~DeviceRegion() { Release(); }

Status DeviceRegion::MeasureRateIfTimeLimited() {
  if (!props_.kernel_time_limited) return Status::Ok();
  // 50 ms of the fill's own node hash: enough to size one-second launches (fill_passes.h).
  return runtime_->MeasureCompressionRate(ordinal_, 0.05, &raw_rate_)
      .WithContext(props_.id + " kills long kernels; measuring its rate to keep launches short");
}

void DeviceRegion::Release() {
  if (released_) return;
  if (adopted_host_ != nullptr) {
    runtime_->UnregisterHost(ordinal_, adopted_host_);  // the memory is its owner's
    adopted_host_ = nullptr;
    pieces_.clear();
  }
  RuntimeAllocator allocator(runtime_, ordinal_);
  ReleasePieces(allocator, &pieces_);
  if (lookup_host_ != nullptr) runtime_->FreeMappedHost(ordinal_, lookup_host_);
  lookup_host_ = lookup_device_ = nullptr;
  map_ = SlotMap();
  scratch_now_ = 0;
  released_ = true;
  filled_ = false;
}

Status DeviceRegion::Fill(const RegionSpec& spec, const FillTuning& tuning, const FillControl& control,
                          FillStats* stats) {
  FillStats local;
  FillStats* st = stats != nullptr ? stats : &local;
  *st = FillStats();
  filled_ = false;
  const auto start = std::chrono::steady_clock::now();
  Status result = FillLocked(spec, tuning, control, st);
  scratch_now_ = 0;  // the side scratch is gone
  st->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (result.ok()) {
    filled_ = true;
    filled_first_ = spec.first;
    filled_count_ = spec.count;
  }
  return result;
}

Status DeviceRegion::FillLocked(const RegionSpec& spec, const FillTuning& tuning, const FillControl& control,
                                FillStats* st) {
  if (released_) return FailedPreconditionError("device memory was released");
  WP_RETURN_IF_ERROR(ValidateRegion(spec));
  if (spec.count > map_.slots()) {
    return InvalidArgumentError("plan has " + std::to_string(spec.count) + " labels but device " + props_.id +
                                " holds " + std::to_string(map_.slots()));
  }
  const bool f192 = spec.format == LabelFormat::k192;
  const uint32_t m = spec.chunk_labels;
  const RegionChunks rc = DescribeRegion(f192, m, spec.first, spec.count);
  const uint64_t mps = std::max(1, props_.multiprocessors);
  FillTuning tune = tuning;
  tune.team_threads = std::clamp<uint32_t>(tune.team_threads, 1, 256);
  tune.max_team_threads = std::clamp<uint32_t>(tune.max_team_threads, tune.team_threads, 256);
  tune.max_chunks_per_team = std::clamp<uint32_t>(tune.max_chunks_per_team, 1, kMaxTeamChunks);
  // GPU-filled host memory keeps the natural layout (its owner reads it directly): scratch teams.
  const bool in_place = tune.in_place && adopted_host_ == nullptr;

  // Programs: graph m, and the last chunk's own graph when the region ends inside it (c1: graph m
  // truncated after its last rank; 192: graph m').
  const DeviceProgram program = BuildDeviceProgram(m, m);
  const RegionChunks::Graph last = rc.GraphOf(rc.chunk_end - 1);
  const bool own_graph = last.graph_labels != m || last.ranks_needed != m;
  DeviceProgram partial_program;
  if (own_graph) partial_program = BuildDeviceProgram(last.graph_labels, last.ranks_needed);
  WP_RETURN_IF_ERROR(CheckDeviceProgram(program));
  if (own_graph) WP_RETURN_IF_ERROR(CheckDeviceProgram(partial_program));
  const uint64_t work_bytes = static_cast<uint64_t>(program.work_labels) * 32;
  const uint64_t extra_bytes = in_place ? static_cast<uint64_t>(program.work_labels - m) * 32 : 0;
  // Chunks the region holds only part of: scratch teams of one chunk each, natural layout.
  struct Partial {
    uint64_t chunk;
    uint32_t graph;
    uint64_t work_bytes;
  };
  std::vector<Partial> partials;
  for (uint64_t c : rc.PartialChunks()) {
    const bool own = own_graph && c == rc.chunk_end - 1;
    partials.push_back({c, own ? 1u : 0u, own ? partial_program.work_labels * 32ull : work_bytes});
  }
  const uint64_t whole = rc.whole_end > rc.whole_begin ? rc.whole_end - rc.whole_begin : 0;

  // Resident teams per launch for a team size (the occupancy calculator), cached.
  std::vector<std::pair<uint32_t, uint64_t>> resident_cache;
  Status occupancy_error;
  auto resident = [&](uint32_t threads) -> uint64_t {
    for (const auto& [t, n] : resident_cache)
      if (t == threads) return n;
    int per_mp = 0;
    Status os = runtime_->FillTeamsPerMultiprocessor(ordinal_, spec.format == LabelFormat::kC1 ? 0 : 1, threads,
                                                     FillSharedBytes(tune.max_chunks_per_team), &per_mp);
    if (!os.ok() && occupancy_error.ok()) occupancy_error = os;
    uint64_t n = static_cast<uint64_t>(std::max(per_mp, 1)) * mps;
    if (tune.target_threads > 0) n = std::max<uint64_t>(1, std::min(n, tune.target_threads / threads));
    resident_cache.push_back({threads, n});
    return n;
  };
  const uint64_t full_wave_teams = resident(tune.team_threads);
  WP_RETURN_IF_ERROR(occupancy_error);

  // The side scratch: the only memory outside the plan's label slots (fill_passes.h).
  const uint64_t max_teams = full_wave_teams + partials.size();
  std::vector<uint64_t> table(map_.slot_begin());  // slot_begin (pieces + 1), then the bases
  table.insert(table.end(), map_.bases().begin(), map_.bases().end());
  auto aligned = [](uint64_t n) { return AlignUp(n, kDeviceAlignment); };
  const uint64_t fixed = aligned(table.size() * 8) + aligned(program.words.size() * 4) +
                         aligned(program.step_begin.size() * 4) + aligned(partial_program.words.size() * 4 + 4) +
                         aligned(partial_program.step_begin.size() * 4 + 4) + aligned(max_teams * sizeof(TeamDesc)) +
                         aligned(sizeof(LaunchWords));
  uint64_t partial_bytes = 0;
  for (const Partial& p : partials) partial_bytes += aligned(p.work_bytes);
  // Side bytes each whole chunk needs: none in place when m is a power of two.
  const uint64_t per_chunk = in_place ? extra_bytes : work_bytes;
  const uint32_t c_max = tune.threads_per_chunk > 0 ? std::max<uint32_t>(1, tune.team_threads / tune.threads_per_chunk)
                                                    : tune.max_chunks_per_team;
  const uint64_t bulk_want = per_chunk > 0 ? per_chunk * std::min<uint64_t>(whole, full_wave_teams * c_max) +
                                                 kDeviceAlignment * full_wave_teams
                                           : 0;
  const uint64_t cv0_full_bytes = f192 ? std::min(program.nodes * 32, tune.cv0_side_max_bytes / 32 * 32) : 0;
  const uint64_t side_min = fixed + partial_bytes + (whole > 0 ? aligned(per_chunk) + kDeviceAlignment : 0);
  const uint64_t side_want = std::max(
      side_min,
      std::min(tune.side_scratch_bytes, fixed + partial_bytes + bulk_want + cv0_full_bytes + kDeviceAlignment));
  SideScratch side(runtime_, ordinal_);
  WP_RETURN_IF_ERROR(side.Allocate(side_want, side_min));
  st->side_scratch_bytes = side.bytes();
  st->bytes_outside_label_slots_peak = side.bytes();
  scratch_now_ = side.bytes();
  auto upload = [&](const void* data, uint64_t bytes) -> StatusOr<uint64_t> {
    const uint64_t at = side.Take(bytes);
    if (bytes > 0) WP_RETURN_IF_ERROR(runtime_->CopyToDevice(ordinal_, reinterpret_cast<void*>(at), data, bytes));
    return at;
  };
  WP_ASSIGN_OR_RETURN(const uint64_t table_dev, upload(table.data(), table.size() * 8));
  SlotTableView table_view;
  table_view.slot_begin = reinterpret_cast<const uint64_t*>(table_dev);
  table_view.base = reinterpret_cast<const uint64_t*>(table_dev) + map_.pieces() + 1;
  table_view.count = map_.pieces();
  FillGraph graphs[2];
  const DeviceProgram* programs[2] = {&program, &partial_program};
  for (int g = 0; g < 2; ++g) {
    const DeviceProgram& p = *programs[g];
    if (p.ops == 0) continue;
    WP_ASSIGN_OR_RETURN(const uint64_t words, upload(p.words.data(), p.words.size() * 4));
    WP_ASSIGN_OR_RETURN(const uint64_t steps, upload(p.step_begin.data(), p.step_begin.size() * 4));
    // The kernel trusts the step bounds it reads (TeamRunStep bounds its search by them): read
    // them back, so an upload that did not land whole fails here rather than on the device.
    std::vector<uint32_t> uploaded(p.step_begin.size());
    WP_RETURN_IF_ERROR(runtime_->CopyToHost(ordinal_, uploaded.data(), reinterpret_cast<const void*>(steps),
                                            uploaded.size() * 4));
    if (uploaded != p.step_begin) {
      return InternalError("the step bounds uploaded to " + props_.id + " differ from the program's");
    }
    graphs[g].program = reinterpret_cast<const uint32_t*>(words);
    graphs[g].step_begin = reinterpret_cast<const uint32_t*>(steps);
    graphs[g].steps = p.steps;
    graphs[g].work_labels = p.work_labels;
    const SessionConstants c = BuildSessionConstants(spec.format, spec.seed, m, g == 0 ? m : last.graph_labels);
    std::memcpy(graphs[g].descriptor, c.descriptor, sizeof c.descriptor);
  }
  const uint64_t team_table_dev = side.Take(max_teams * sizeof(TeamDesc));
  const uint64_t words_dev = side.Take(sizeof(LaunchWords));
  std::vector<uint64_t> partial_area;
  for (const Partial& p : partials) partial_area.push_back(side.Take(p.work_bytes));
  // Work labels of whole chunks (extras, or scratch teams), then the 192 block-0 table.
  const uint64_t bulk_bytes = per_chunk > 0 ? std::min(bulk_want, side.Left()) : 0;
  const uint64_t bulk_dev = bulk_bytes > 0 ? side.Take(bulk_bytes) : 0;
  uint64_t wave_chunk_cap = ~0ull;
  if (per_chunk > 0) {
    wave_chunk_cap = 0;  // what the bulk area holds with each team's part 256-byte aligned
    for (uint64_t used = 0; used + aligned(per_chunk) <= bulk_bytes; used += aligned(per_chunk)) ++wave_chunk_cap;
    if (wave_chunk_cap == 0 && whole > 0) return InternalError("side scratch holds no chunk's work labels");
  }
  if (tune.max_wave_chunks > 0) wave_chunk_cap = std::min(wave_chunk_cap, tune.max_wave_chunks);
  if (props_.kernel_time_limited) {  // the driver kills long kernels: short launches (fill_passes.h)
    const uint64_t cap = WaveChunksForSeconds(kTimeLimitedLaunchSeconds, raw_rate_ * kTimeLimitedFillShare,
                                              CompressionsPerChunk(f192, program.nodes));
    wave_chunk_cap = std::min(wave_chunk_cap, cap);
    st->time_limited_wave_chunks = cap;
  }

  const SessionConstants session = BuildSessionConstants(spec.format, spec.seed, m, m);
  auto build_cv0 = [&](uint64_t address, uint64_t nodes) -> Status {
    Cv0BuildArgs args;
    args.table = reinterpret_cast<uint32_t*>(address);
    args.nodes = nodes;
    std::memcpy(args.int_key, session.int_key, sizeof args.int_key);
    std::memcpy(args.src_key, session.src_key, sizeof args.src_key);
    return runtime_->RunBuildCv0(ordinal_, args);
  };
  uint64_t cv0_side = 0, cv0_side_nodes = 0;
  if (f192) {
    cv0_side_nodes = std::min(cv0_full_bytes, side.Left() / 32 * 32) / 32;
    if (cv0_side_nodes > 0) {
      cv0_side = side.Take(cv0_side_nodes * 32);
      WP_RETURN_IF_ERROR(build_cv0(cv0_side, cv0_side_nodes));
    }
    st->cv0_table_nodes = cv0_side_nodes;
  }
  // 192: the whole block-0 table in the top of the plan's own slots, over chunks labelled last.
  uint64_t cv0_main = cv0_side, cv0_main_nodes = cv0_side_nodes, deferred_begin = rc.whole_end;
  if (f192 && in_place && tune.cv0_in_region && cv0_side_nodes < program.nodes) {
    const uint64_t table_bytes = program.nodes * 32;
    const uint64_t table_chunks = (table_bytes + m * 32ull - 1) / (m * 32ull) + 1;
    if (whole >= 4 * table_chunks) {
      uint64_t low = 0;
      const std::vector<uint64_t> at =
          PlaceFromTop(map_, rc.SlotBegin(rc.whole_begin), rc.SlotBegin(rc.whole_end), table_bytes, 1, &low);
      if (!at.empty()) {
        deferred_begin = std::max(rc.whole_begin, (low + spec.first) / m);
        if ((rc.whole_end - deferred_begin) * 4 <= whole) {
          cv0_main = at[0];
          cv0_main_nodes = program.nodes;
          WP_RETURN_IF_ERROR(build_cv0(cv0_main, cv0_main_nodes));
          st->cv0_table_nodes = cv0_main_nodes;
          st->region_scratch_peak_bytes = table_bytes;
          st->deferred_chunks = rc.whole_end - deferred_begin;
        } else {
          deferred_begin = rc.whole_end;
        }
      }
    }
  }

  // The waves.
  WaveLimits limits;
  limits.resident_teams = resident;
  limits.team_threads = tune.team_threads;
  limits.max_team_threads = tune.max_team_threads;
  limits.max_chunks_per_team = tune.max_chunks_per_team;
  limits.fixed_chunks_per_team = tune.threads_per_chunk > 0 ? c_max : 0;
  limits.max_wave_chunks = wave_chunk_cap;
  std::vector<PlannedWave> waves;
  std::vector<LayoutRun> runs;
  PlanEvenWaves(rc.whole_begin, deferred_begin, "main", !in_place, limits, &waves, &runs,
                static_cast<uint32_t>(partials.size()));
  if (!partials.empty()) {
    if (waves.empty()) {
      waves.emplace_back();
      waves.back().phase = "main";
      waves.back().team_threads = tune.team_threads;
    }
    for (const Partial& p : partials) waves.front().teams.push_back({p.chunk, 1, true, p.graph});
  }
  PlanEvenWaves(deferred_begin, rc.whole_end, "deferred", false, limits, &waves, &runs);
  WP_RETURN_IF_ERROR(occupancy_error);
  st->partial_chunks = partials.size();

  // Each wave: its team table, the launch, its figures.
  auto note = [&](const std::string& line) { st->plan += (st->plan.empty() ? "" : "\n") + line; };
  note("program: " + std::to_string(program.ops) + " ops in " + std::to_string(program.steps) + " super-steps, " +
       std::to_string(program.nodes) + " nodes, " + std::to_string(program.work_labels) + " work slots per chunk");
  uint64_t labels_done = 0;
  std::string last_phase;
  std::vector<TeamDesc> descs;
  for (size_t w = 0; w < waves.size(); ++w) {
    const PlannedWave& wave = waves[w];
    if (control.cancel != nullptr && control.cancel->load()) return FailedPreconditionError("fill cancelled");
    if (wave.teams.size() > max_teams) return InternalError("wave has more teams than the team table holds");
    if (wave.phase != last_phase) ++st->passes, last_phase = wave.phase;
    descs.assign(wave.teams.size(), TeamDesc());
    LaunchStats ls;
    ls.phase = wave.phase;
    ls.team_threads = wave.team_threads;
    ls.teams = static_cast<uint32_t>(wave.teams.size());
    uint64_t bulk_used = 0, labels = 0;
    size_t partial_index = 0;
    for (size_t t = 0; t < wave.teams.size(); ++t) {
      const PlannedTeam& pt = wave.teams[t];
      TeamDesc& d = descs[t];
      d.first_chunk = pt.first_chunk;
      d.chunks = pt.chunks;
      const ChunkDivider div = MakeChunkDivider(pt.chunks);
      d.chunk_magic = div.magic;
      d.chunk_shift = div.shift;
      d.graph = pt.graph;
      ls.chunks += pt.chunks;
      if (ls.groups.empty() || ls.groups.back().chunks != pt.chunks || ls.groups.back().graph != pt.graph ||
          ls.groups.back().scratch != pt.scratch) {
        ls.groups.push_back({pt.chunks, 0, pt.graph, pt.scratch});
      }
      ++ls.groups.back().teams;
      const bool is_partial =
          pt.scratch && pt.chunks == 1 && (pt.first_chunk < rc.whole_begin || pt.first_chunk >= rc.whole_end);
      if (is_partial) {
        d.extra = partial_area[partial_index++];
        labels += rc.SlotEnd(pt.first_chunk) - rc.SlotBegin(pt.first_chunk);
        continue;
      }
      labels += static_cast<uint64_t>(pt.chunks) * m;
      if (per_chunk > 0) {
        d.extra = bulk_dev + bulk_used;
        bulk_used += aligned(per_chunk * pt.chunks);
        if (bulk_used > bulk_bytes) return InternalError("wave's work labels exceed the side scratch");
      }
      if (pt.scratch) continue;
      // In place: the team block, and the one or two pieces it lies in.
      d.inplace_slots = m;
      d.block_slot = rc.SlotBegin(pt.first_chunk);
      const uint64_t block_end = d.block_slot + static_cast<uint64_t>(pt.chunks) * m;
      const SlotMap::Place p0 = map_.Locate(d.block_slot);
      const uint64_t piece_end = map_.slot_begin()[p0.piece + 1];
      d.seg0 = map_.bases()[p0.piece] + p0.offset_bytes;
      d.split = static_cast<uint32_t>(2 * (std::min(block_end, piece_end) - d.block_slot));
      if (block_end > piece_end) {
        uint32_t next = p0.piece + 1;
        while (map_.slot_begin()[next + 1] == map_.slot_begin()[next]) ++next;  // skip empty pieces
        d.seg1 = map_.bases()[next];
        d.flags |= block_end > map_.slot_begin()[next + 1] ? kTeamSlotTable : kTeamSplit;
      }
    }
    WP_RETURN_IF_ERROR(runtime_->CopyToDevice(ordinal_, reinterpret_cast<void*>(team_table_dev), descs.data(),
                                              descs.size() * sizeof(TeamDesc)));
    const LaunchWords zero;
    WP_RETURN_IF_ERROR(runtime_->CopyToDevice(ordinal_, reinterpret_cast<void*>(words_dev), &zero, sizeof zero));
    FillLaunch launch;
    FillWaveArgs& a = launch.args;
    a.session = session;
    a.graph[0] = graphs[0];
    a.graph[1] = graphs[1];
    const bool deferred = wave.phase == "deferred";
    a.cv0 = reinterpret_cast<const uint32_t*>(deferred ? cv0_side : cv0_main);
    a.cv0_nodes = deferred ? cv0_side_nodes : cv0_main_nodes;
    a.region_first = spec.first;
    a.region_count = spec.count;
    a.teams = reinterpret_cast<const TeamDesc*>(team_table_dev);
    a.team_count = static_cast<uint32_t>(descs.size());
    a.max_team_chunks = wave.MaxTeamChunks();
    a.slots = table_view;
    a.clock_out = reinterpret_cast<LaunchWords*>(words_dev)->clock;
    a.fault = &reinterpret_cast<LaunchWords*>(words_dev)->fault;
    launch.threads_per_team = wave.team_threads;
    if (w == 0) {
      st->main_shape = {wave.team_threads, wave.MaxTeamChunks()};
      st->main_chunks_in_flight = ls.chunks;
    }
    note(wave.phase + " wave " + std::to_string(w) + ": " + std::to_string(ls.teams) + " teams of " +
         std::to_string(wave.team_threads) + " threads, " + std::to_string(ls.chunks) + " chunks (C " +
         std::to_string(ls.groups.front().chunks) + (ls.groups.size() > 1 ? "..." : "") + "), chunks " +
         std::to_string(wave.teams.front().first_chunk) + "..");
    const auto t0 = std::chrono::steady_clock::now();
    WP_RETURN_IF_ERROR(runtime_->RunFill(ordinal_, launch).WithContext("fill launch on " + props_.id));
    ls.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    LaunchWords words;
    WP_RETURN_IF_ERROR(runtime_->CopyToHost(ordinal_, &words, reinterpret_cast<void*>(words_dev), sizeof words));
    if (words.fault != 0) {
      return InternalError("fill launch " + std::to_string(w) + " on " + props_.id + " raised fault bits " +
                           std::to_string(words.fault) +
                           " (kernel_args.h kFault*): its program did not fit its step bounds; the labels are wrong");
    }
    ls.sm_cycles = words.clock[1] > words.clock[0] ? words.clock[1] - words.clock[0] : 0;
    ls.cv0_nodes = a.cv0_nodes;
    ++st->launches;
    labels_done += labels;
    ls.labels_done = labels_done;
    st->launch_log.push_back(ls);
    if (control.progress) control.progress(labels_done, spec.count);
    if (control.launch_done) control.launch_done(ls);
  }
  st->nodes = whole * program.nodes;
  for (const Partial& p : partials) st->nodes += p.graph ? partial_program.nodes : program.nodes;
  st->labels = labels_done;
  if (labels_done != spec.count) {
    return InternalError("fill wrote " + std::to_string(labels_done) + " of " + std::to_string(spec.count) + " labels");
  }
  LabelLayout layout(spec.first, spec.count, m);
  layout.AddRuns(runs);
  layout_ = std::move(layout);
  return Status::Ok();
}

Status DeviceRegion::Lookup(const uint64_t* global_indices, size_t n, uint8_t* out) const {
  std::lock_guard<std::mutex> lock(lookup_mu_);
  if (released_) return FailedPreconditionError("device memory was released");
  if (!filled_) return FailedPreconditionError("no completed fill on " + props_.id);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t g = global_indices[i];
    if (g < filled_first_ || g - filled_first_ >= filled_count_) {
      return InvalidArgumentError("label index " + std::to_string(g) + " is outside the filled range [" +
                                  std::to_string(filled_first_) + ", " + std::to_string(filled_first_ + filled_count_) +
                                  ")");
    }
  }
  auto* host_addresses = static_cast<uint64_t*>(lookup_host_);
  auto* host_labels = reinterpret_cast<uint32_t*>(host_addresses + 2 * kLookupBatch);
  auto* device_addresses = static_cast<const uint64_t*>(lookup_device_);
  auto* device_labels = reinterpret_cast<uint32_t*>(static_cast<uint64_t*>(lookup_device_) + 2 * kLookupBatch);
  for (size_t off = 0; off < n; off += kLookupBatch) {
    const uint32_t batch = static_cast<uint32_t>(std::min<size_t>(kLookupBatch, n - off));
    for (uint32_t i = 0; i < batch; ++i) {
      LabelLayout::Half halves[2];
      layout_.Locate(global_indices[off + i], halves);
      for (int h = 0; h < 2; ++h) {
        const SlotMap::Place place = map_.Locate(halves[h].slot);
        host_addresses[2 * i + h] = map_.bases()[place.piece] + place.offset_bytes + halves[h].byte_offset;
      }
    }
    LookupArgs args;
    args.addresses = device_addresses;
    args.out = device_labels;
    args.n = batch;
    WP_RETURN_IF_ERROR(runtime_->RunLookup(ordinal_, args).WithContext("lookup on " + props_.id));
    std::memcpy(out + off * 32, host_labels, batch * 32ull);
  }
  return Status::Ok();
}

}  // namespace gpu
}  // namespace wipeproof
