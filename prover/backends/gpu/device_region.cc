#include "prover/backends/gpu/device_region.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "kernels/gpu/device_program.h"
#include "kernels/gpu/session_constants.h"
#include "kernels/graph_schedule.h"

namespace wipeproof {
namespace gpu {
namespace {

constexpr uint64_t kDeviceAlignment = 256;
// Minimum chunks per team for keeping team scratch in shared memory: fewer would leave most lanes
// idle in narrow layers (r = G / C threads per chunk), worse than global scratch.
constexpr uint32_t kMinSharedChunksPerTeam = 8;

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

class RuntimeAllocator final : public DeviceAllocator {
 public:
  RuntimeAllocator(GpuRuntime* runtime, int ordinal) : runtime_(runtime), ordinal_(ordinal) {}
  Status Allocate(uint64_t bytes, void** ptr) override { return runtime_->Allocate(ordinal_, bytes, ptr); }
  void Free(void* ptr) override { runtime_->Free(ordinal_, ptr); }

 private:
  GpuRuntime* runtime_;
  int ordinal_;
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
  uint64_t total = 0;
  WP_RETURN_IF_ERROR(runtime->MemoryInfo(ordinal, &r->free_before_, &total));
  uint64_t target = options.bytes;
  if (target == 0) {
    const uint64_t reserve = std::max(options.reserve_bytes, kMinReserveBytes);
    if (r->free_before_ <= reserve + 32) {
      return ResourceExhaustedError("device " + r->props_.id + " has " + std::to_string(r->free_before_) +
                                    " bytes free, not more than the reserve of " + std::to_string(reserve));
    }
    target = r->free_before_ - reserve;
  }
  WP_RETURN_IF_ERROR(runtime->AllocateMappedHost(ordinal, static_cast<uint64_t>(kLookupBatch) * 40, &r->lookup_host_,
                                                 &r->lookup_device_));
  RuntimeAllocator allocator(runtime, ordinal);
  auto pieces = AcquireInPieces(allocator, target, options.policy);
  if (!pieces.ok()) return pieces.status().WithContext("acquiring memory on " + r->props_.id);
  r->pieces_ = std::move(pieces).value();
  const uint64_t got = TotalBytes(r->pieces_);
  if (got < 32 || (options.bytes != 0 && got < options.bytes)) {
    return ResourceExhaustedError("device " + r->props_.id + ": took " + std::to_string(got) + " of " +
                                  std::to_string(target) + " bytes requested");
  }
  r->map_ = SlotMap(r->pieces_);
  WP_RETURN_IF_ERROR(runtime->MemoryInfo(ordinal, &r->free_after_, &total));
  return r;
}

StatusOr<std::unique_ptr<DeviceRegion>> DeviceRegion::AdoptHostMemory(GpuRuntime* runtime, int ordinal, void* host,
                                                                      uint64_t bytes) {
  if (host == nullptr || bytes < 32 || reinterpret_cast<uint64_t>(host) % 32 != 0) {
    return InvalidArgumentError("host range must be at least one label and 32-byte aligned");
  }
  std::unique_ptr<DeviceRegion> r(new DeviceRegion(runtime, ordinal));
  WP_RETURN_IF_ERROR(runtime->Properties(ordinal, &r->props_));
  WP_RETURN_IF_ERROR(runtime->AllocateMappedHost(ordinal, static_cast<uint64_t>(kLookupBatch) * 40, &r->lookup_host_,
                                                 &r->lookup_device_));
  void* device = nullptr;
  WP_RETURN_IF_ERROR(runtime->RegisterHost(ordinal, host, bytes, &device).WithContext("registering host memory"));
  r->adopted_host_ = host;
  r->pieces_.push_back({device, bytes});
  r->map_ = SlotMap(r->pieces_);
  return r;
}

DeviceRegion::~DeviceRegion() { Release(); }

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
  const GraphShape shape = ShapeForChunkLabels(m);
  const uint64_t chunk_bytes = static_cast<uint64_t>(shape.scratch_labels) * 32;
  const uint64_t mps = std::max(1, props_.multiprocessors);
  FillTuning tune = tuning;
  if (tune.target_threads == 0) tune.target_threads = mps * 1024;
  if (adopted_host_ != nullptr) tune.in_region_scratch = false;  // scratch over the bus would crawl
  if (tune.max_chunks_per_team == 0) {
    // A team's scratch is contiguous inside one piece: keep it to a quarter of the largest.
    uint64_t largest = 0;
    for (const auto& p : pieces_) largest = std::max(largest, p.bytes);
    tune.max_chunks_per_team = static_cast<uint32_t>(std::clamp<uint64_t>(largest / 4 / chunk_bytes, 1, 1024));
  }

  const DeviceProgram program = BuildDeviceProgram(m, m);
  DeviceProgram partial_program;
  GraphShape partial_shape;
  if (rc.partial_192) {
    partial_program = BuildDeviceProgram(rc.partial_graph_labels, rc.partial_graph_labels);
    partial_shape = ShapeForChunkLabels(rc.partial_graph_labels);
  }
  const uint64_t program_bytes = program.words.size() * 4, partial_bytes = partial_program.words.size() * 4;

  // Side scratch: programs, the team table, the 192 block-0 table, the final passes' teams.
  const uint64_t max_teams = mps * 64;
  std::vector<uint64_t> table(map_.slot_begin());  // slot_begin (pieces + 1), then the bases
  table.insert(table.end(), map_.bases().begin(), map_.bases().end());
  const uint64_t fixed = AlignUp(table.size() * 8, kDeviceAlignment) + AlignUp(program_bytes, kDeviceAlignment) +
                         AlignUp(partial_bytes + 8, kDeviceAlignment) + AlignUp(max_teams * 8, kDeviceAlignment) +
                         2 * kDeviceAlignment;
  SideScratch side(runtime_, ordinal_);
  WP_RETURN_IF_ERROR(side.Allocate(tune.side_scratch_bytes, fixed + chunk_bytes));
  st->side_scratch_bytes = side.bytes();
  scratch_now_ = side.bytes();
  const uint64_t table_dev = side.Take(table.size() * 8);
  WP_RETURN_IF_ERROR(
      runtime_->CopyToDevice(ordinal_, reinterpret_cast<void*>(table_dev), table.data(), table.size() * 8));
  SlotTableView table_view;
  table_view.slot_begin = reinterpret_cast<const uint64_t*>(table_dev);
  table_view.base = reinterpret_cast<const uint64_t*>(table_dev) + map_.pieces() + 1;
  table_view.count = map_.pieces();
  const uint64_t program_dev = side.Take(program_bytes);
  WP_RETURN_IF_ERROR(
      runtime_->CopyToDevice(ordinal_, reinterpret_cast<void*>(program_dev), program.words.data(), program_bytes));
  uint64_t partial_dev = 0;
  if (partial_bytes > 0) {
    partial_dev = side.Take(partial_bytes);
    WP_RETURN_IF_ERROR(runtime_->CopyToDevice(ordinal_, reinterpret_cast<void*>(partial_dev),
                                              partial_program.words.data(), partial_bytes));
  }
  const uint64_t team_table_dev = side.Take(max_teams * 8);

  const SessionConstants session = BuildSessionConstants(spec.format, spec.seed, m, m);
  auto build_cv0 = [&](uint64_t address, uint64_t nodes) -> Status {
    Cv0BuildArgs args;
    args.table = reinterpret_cast<uint32_t*>(address);
    args.nodes = nodes;
    std::memcpy(args.int_key, session.int_key, sizeof args.int_key);
    std::memcpy(args.src_key, session.src_key, sizeof args.src_key);
    args.source_nodes[0] = program.source_nodes[0];
    args.source_nodes[1] = program.source_nodes[1];
    return runtime_->RunBuildCv0(ordinal_, args);
  };
  uint64_t cv0_side = 0, cv0_side_nodes = 0;
  if (f192) {
    const uint64_t room = side.Left() > chunk_bytes ? (side.Left() - chunk_bytes) / 4 : 0;
    cv0_side_nodes = std::min({program.nodes, tune.cv0_side_max_bytes / 32, room / 32});
    if (cv0_side_nodes > 0) {
      cv0_side = side.Take(cv0_side_nodes * 32);
      WP_RETURN_IF_ERROR(build_cv0(cv0_side, cv0_side_nodes));
      st->cv0_table_nodes = cv0_side_nodes;
    }
  }
  const uint64_t side_team_bytes = side.Left();
  const uint64_t side_team_base = side.Take(side_team_bytes);
  const uint64_t side_chunks = side_team_bytes / chunk_bytes;

  // Resident teams bound how many chunks one launch can run at once.
  auto fit_shape = [&](uint64_t max_chunks, uint32_t scratch_labels, bool in_shared, TeamShape* shape_out,
                       uint64_t* teams_out) -> Status {
    TeamShape s = ChooseTeamShape(max_chunks, tune.target_threads, tune);
    for (int iter = 0;; ++iter) {
      int per_mp = 0;
      WP_RETURN_IF_ERROR(runtime_->FillTeamsPerMultiprocessor(
          ordinal_, session.format, s.threads, FillSharedBytes(s.chunks, scratch_labels, in_shared), &per_mp));
      const uint64_t resident = static_cast<uint64_t>(std::max(per_mp, 1)) * mps;
      const uint64_t chunks = std::min(max_chunks, resident * s.chunks);
      if (chunks >= max_chunks || iter == 1) {
        *shape_out = s;
        *teams_out = std::min({std::max<uint64_t>(1, chunks / s.chunks), max_teams, resident});
        return Status::Ok();
      }
      s = ChooseTeamShape(chunks, tune.target_threads, tune);
    }
  };

  uint64_t labels_done = 0;
  auto run = [&](uint64_t c0, uint64_t c1, const SessionConstants& sess, uint64_t program_at, uint32_t ops,
                 uint32_t scratch_labels, TeamShape shape_run, const std::vector<uint64_t>& teams, bool in_shared,
                 uint64_t teams_in_shared, uint64_t cv0_at, uint64_t cv0_nodes) -> Status {
    if (!in_shared) {
      WP_RETURN_IF_ERROR(
          runtime_->CopyToDevice(ordinal_, reinterpret_cast<void*>(team_table_dev), teams.data(), teams.size() * 8));
    }
    FillLaunch launch;
    FillWaveArgs& a = launch.args;
    a.session = sess;
    a.program = reinterpret_cast<const uint32_t*>(program_at);
    a.op_count = ops;
    a.scratch_labels = scratch_labels;
    a.cv0 = reinterpret_cast<const uint32_t*>(cv0_at);
    a.cv0_nodes = cv0_nodes;
    a.region_first = spec.first;
    a.region_count = spec.count;
    a.chunks_per_team = shape_run.chunks;
    a.scratch_in_shared = in_shared ? 1 : 0;
    a.team_scratch = reinterpret_cast<const uint64_t*>(team_table_dev);
    a.slots = table_view;
    launch.threads_per_team = shape_run.threads;
    uint64_t wave = (in_shared ? teams_in_shared : teams.size()) * shape_run.chunks;
    if (tune.max_wave_chunks > 0) wave = std::min(wave, tune.max_wave_chunks);
    for (uint64_t c = c0; c < c1; c += wave) {
      if (control.cancel != nullptr && control.cancel->load()) return FailedPreconditionError("fill cancelled");
      a.chunk_begin = c;
      a.chunk_end = std::min(c1, c + wave);
      launch.teams = static_cast<uint32_t>((a.chunk_end - c + shape_run.chunks - 1) / shape_run.chunks);
      WP_RETURN_IF_ERROR(runtime_->RunFill(ordinal_, launch).WithContext("fill launch on " + props_.id));
      ++st->launches;
      labels_done += rc.SlotEnd(a.chunk_end - 1) - rc.SlotBegin(c);
      if (control.progress) control.progress(labels_done, spec.count);
    }
    return Status::Ok();
  };
  auto note = [&](const std::string& line) { st->plan += (st->plan.empty() ? "" : "\n") + line; };
  note("program: " + std::to_string(program.ops) + " ops in " + std::to_string(program.steps) + " super-steps, " +
       std::to_string(program.nodes) + " nodes per chunk");
  auto describe = [&](const char* where, uint64_t c0, uint64_t c1, TeamShape s, uint64_t teams) {
    return std::string(where) + ": chunks " + std::to_string(c0) + ".." + std::to_string(c1) + ", teams of " +
           std::to_string(s.threads) + " threads x " + std::to_string(s.chunks) + " chunks, " + std::to_string(teams) +
           " teams (" + std::to_string(teams * s.chunks) + " chunks in flight)";
  };
  auto first_pass = [&](TeamShape s, uint64_t teams) {
    if (st->passes++ == 0) {
      st->main_shape = s;
      st->main_chunks_in_flight = teams * s.chunks;
    }
  };

  uint64_t next = rc.chunk_begin;
  // Tiny m: whole teams of scratch fit in shared memory; nothing is placed anywhere.
  if (tune.shared_scratch && next < rc.main_end) {
    const uint64_t fit = std::min(tune.max_shared_scratch_bytes, props_.shared_bytes_per_block) / chunk_bytes;
    if (fit >= kMinSharedChunksPerTeam) {
      TeamShape s = ChooseTeamShape(fit, tune.target_threads, tune);
      s.chunks = static_cast<uint32_t>(std::min<uint64_t>(s.chunks, fit));
      int per_mp = 0;
      WP_RETURN_IF_ERROR(runtime_->FillTeamsPerMultiprocessor(
          ordinal_, session.format, s.threads, FillSharedBytes(s.chunks, shape.scratch_labels, true), &per_mp));
      if (per_mp > 0) {
        const uint64_t teams = static_cast<uint64_t>(per_mp) * mps;
        first_pass(s, teams);
        note(describe("shared-memory pass", next, rc.main_end, s, teams));
        WP_RETURN_IF_ERROR(run(next, rc.main_end, session, program_dev, program.ops, shape.scratch_labels, s, {}, true,
                               teams, cv0_side, cv0_side_nodes));
        next = rc.main_end;
      }
    }
  }
  while (next < rc.main_end) {
    bool ran = false;
    if (tune.in_region_scratch) {
      // At most half of what is still unlabeled, so the next pass has room too.
      const uint64_t u = rc.SlotBegin(next), total = map_.slots();
      const uint64_t preferred =
          tune.target_threads / std::max<uint32_t>(1, tune.preferred_threads_per_chunk) * chunk_bytes;
      const uint64_t budget = std::min({tune.max_region_scratch_bytes, preferred, (total - u) * 32 / 2});
      if (budget / chunk_bytes > side_chunks) {
        const uint64_t limit = total - budget / 32;
        uint64_t top = total, cv0_at = cv0_side, cv0_nodes = cv0_side_nodes;
        bool cv0_in_region = false;
        if (f192 && program.nodes > cv0_side_nodes && program.nodes * 32 <= budget / 4) {
          uint64_t low = total;
          auto at = PlaceFromTop(map_, limit, total, program.nodes * 32, 1, &low);
          if (!at.empty()) {
            cv0_at = at[0];
            cv0_nodes = program.nodes;
            cv0_in_region = true;
            top = low;
          }
        }
        TeamShape s;
        uint64_t teams = 0;
        WP_RETURN_IF_ERROR(
            fit_shape(top > limit ? (top - limit) * 32 / chunk_bytes : 1, shape.scratch_labels, false, &s, &teams));
        uint64_t low = top;
        std::vector<uint64_t> placed = PlaceFromTop(map_, limit, top, s.chunks * chunk_bytes, teams, &low);
        const uint64_t lowest = std::min(low, top);
        // Chunks whose slots all lie below the scratch (all of them when it sits past the plan).
        const uint64_t k_end = lowest >= spec.count ? rc.main_end : std::min(rc.main_end, (lowest + spec.first) / m);
        if (placed.size() * s.chunks > side_chunks && k_end > next) {
          if (cv0_in_region) {
            WP_RETURN_IF_ERROR(build_cv0(cv0_at, cv0_nodes));
            st->cv0_table_nodes = std::max(st->cv0_table_nodes, cv0_nodes);
          }
          first_pass(s, placed.size());
          st->region_scratch_peak_bytes = std::max(st->region_scratch_peak_bytes, (total - lowest) * 32);
          note(describe("region-tail pass", next, k_end, s, placed.size()) + ", scratch from slot " +
               std::to_string(lowest));
          WP_RETURN_IF_ERROR(run(next, k_end, session, program_dev, program.ops, shape.scratch_labels, s, placed, false,
                                 0, cv0_at, cv0_nodes));
          next = k_end;
          ran = true;
        }
      }
    }
    if (!ran) {
      // The final pass: everything left, in the side scratch.
      TeamShape s;
      uint64_t teams = 0;
      WP_RETURN_IF_ERROR(fit_shape(side_chunks, shape.scratch_labels, false, &s, &teams));
      teams = std::min<uint64_t>(teams, side_chunks / s.chunks);
      std::vector<uint64_t> placed;
      for (uint64_t i = 0; i < teams; ++i)
        placed.push_back(side_team_base + i * AlignUp(s.chunks * chunk_bytes, kDeviceAlignment));
      while (!placed.empty() && placed.back() + s.chunks * chunk_bytes > side_team_base + side_team_bytes)
        placed.pop_back();
      if (placed.empty()) return InternalError("side scratch holds no team");
      first_pass(s, placed.size());
      note(describe("side-scratch pass", next, rc.main_end, s, placed.size()));
      WP_RETURN_IF_ERROR(run(next, rc.main_end, session, program_dev, program.ops, shape.scratch_labels, s, placed,
                             false, 0, cv0_side, cv0_side_nodes));
      next = rc.main_end;
    }
  }
  st->nodes = (rc.main_end - rc.chunk_begin) * program.nodes;
  if (rc.partial_192) {
    // The 192 trailing partial chunk: its own graph (m' outputs), one team, no block-0 table.
    const SessionConstants partial = BuildSessionConstants(spec.format, spec.seed, m, rc.partial_graph_labels);
    const uint64_t bytes = static_cast<uint64_t>(partial_shape.scratch_labels) * 32;
    if (bytes > side_team_bytes) return InternalError("side scratch too small for the partial chunk");
    TeamShape s{std::min<uint32_t>(std::max<uint32_t>(tune.max_team_threads, 1), 256), 1};
    ++st->passes;
    note(describe("partial-chunk pass", rc.main_end, rc.main_end + 1, s, 1));
    WP_RETURN_IF_ERROR(run(rc.main_end, rc.main_end + 1, partial, partial_dev, partial_program.ops,
                           partial_shape.scratch_labels, s, {side_team_base}, false, 0, 0, 0));
    st->nodes += partial_program.nodes;
  }
  st->labels = labels_done;
  if (labels_done != spec.count) {
    return InternalError("fill wrote " + std::to_string(labels_done) + " of " + std::to_string(spec.count) + " labels");
  }
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
  auto* host_labels = reinterpret_cast<uint32_t*>(host_addresses + kLookupBatch);
  auto* device_addresses = static_cast<const uint64_t*>(lookup_device_);
  auto* device_labels = reinterpret_cast<uint32_t*>(static_cast<uint64_t*>(lookup_device_) + kLookupBatch);
  for (size_t off = 0; off < n; off += kLookupBatch) {
    const uint32_t batch = static_cast<uint32_t>(std::min<size_t>(kLookupBatch, n - off));
    for (uint32_t i = 0; i < batch; ++i) {
      const SlotMap::Place place = map_.Locate(global_indices[off + i] - filled_first_);
      host_addresses[i] = map_.bases()[place.piece] + place.offset_bytes;
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
