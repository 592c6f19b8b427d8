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

// The side scratch: one device allocation (fill_plan.h lays it out); freed on scope exit.
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
  uint64_t base() const { return reinterpret_cast<uint64_t>(base_); }

 private:
  GpuRuntime* runtime_;
  int ordinal_;
  void* base_ = nullptr;
  uint64_t bytes_ = 0;
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
  LookupArgs shape;
  shape.threads_per_label = options.lookup_threads_per_label;
  WP_RETURN_IF_ERROR(CheckLookupShape(shape));
  r->lookup_threads_per_label_ = options.lookup_threads_per_label;
  r->lookup_places_on_device_ = options.lookup_places_on_device;
  WP_RETURN_IF_ERROR(runtime->AllocateMappedHost(ordinal, static_cast<uint64_t>(kLookupBatch) * kLookupBytesPerLabel,
                                                 &r->lookup_host_, &r->lookup_device_));
  WP_RETURN_IF_ERROR(runtime->CreateLookupQueue(ordinal, &r->lookup_queue_));
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
  WP_RETURN_IF_ERROR(runtime->CreateLookupQueue(ordinal, &r->lookup_queue_));
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
  {
    // A started lookup's kernel writes into the pinned buffer freed below: wait for it first.
    std::lock_guard<std::mutex> lock(lookup_mu_);
    if (started_out_ != nullptr) {
      (void)runtime_->WaitLookup(ordinal_, lookup_queue_);
      abandoned_lookup_ = true;  // its FinishLookup must not report labels it never copied
    }
    started_out_ = nullptr;
  }
  if (adopted_host_ != nullptr) {
    runtime_->UnregisterHost(ordinal_, adopted_host_);  // the memory is its owner's
    adopted_host_ = nullptr;
    pieces_.clear();
  }
  FreePlaces();
  RuntimeAllocator allocator(runtime_, ordinal_);
  ReleasePieces(allocator, &pieces_);
  if (lookup_queue_ != nullptr) runtime_->DestroyLookupQueue(ordinal_, lookup_queue_);
  lookup_queue_ = nullptr;
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
  {
    // A started lookup's kernel reads the placement tables freed below and the labels about to be
    // overwritten: finish it first.
    std::lock_guard<std::mutex> lock(lookup_mu_);
    if (started_out_ != nullptr) return FailedPreconditionError("a lookup is in flight on " + props_.id);
  }
  filled_ = false;
  FreePlaces();
  const auto start = std::chrono::steady_clock::now();
  Status result = PlanAndRun(spec, tuning, control, st);
  scratch_now_ = 0;  // the side scratch is gone
  if (result.ok()) result = UploadPlaces().WithContext("lookup tables on " + props_.id);
  st->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (result.ok()) {
    filled_ = true;
    filled_first_ = spec.first;
    filled_count_ = spec.count;
  }
  return result;
}

// The device as the planner sees it: its occupancy for every team size a plan may use.
StatusOr<FillDevice> DeviceRegion::PlanningDevice(const RegionSpec& spec, const FillTuning& tuning) const {
  FillDevice device;
  device.id = props_.id;
  device.multiprocessors = static_cast<uint64_t>(std::max(1, props_.multiprocessors));
  device.kernel_time_limited = props_.kernel_time_limited;
  device.raw_compressions_per_s = raw_rate_;
  device.slots = &map_;
  const FillTuning tune = ClampTuning(tuning);
  for (uint32_t threads : PlannedTeamSizes(tune)) {
    int per_mp = 0;
    WP_RETURN_IF_ERROR(runtime_->FillTeamsPerMultiprocessor(ordinal_, spec.format == LabelFormat::kC1 ? 0 : 1,
                                                            threads, FillSharedBytes(tune.max_chunks_per_team),
                                                            &per_mp));
    device.teams_per_multiprocessor[threads] = per_mp;
  }
  return device;
}

Status DeviceRegion::PlanAndRun(const RegionSpec& spec, const FillTuning& tuning, const FillControl& control,
                                FillStats* st) {
  if (released_) return FailedPreconditionError("device memory was released");
  WP_ASSIGN_OR_RETURN(const FillDevice device, PlanningDevice(spec, tuning));
  WP_ASSIGN_OR_RETURN(FillBudget budget, BudgetFill(spec, tuning, adopted_host_ != nullptr, device));
  // The side scratch: the only memory outside the plan's label slots (fill_passes.h).
  SideScratch side(runtime_, ordinal_);
  WP_RETURN_IF_ERROR(side.Allocate(budget.side_want_bytes, budget.side_min_bytes));
  scratch_now_ = side.bytes();
  WP_ASSIGN_OR_RETURN(const FillPlan plan, PlanFill(std::move(budget), device, side.base(), side.bytes()));
  *st = plan.stats;
  WP_RETURN_IF_ERROR(Upload(plan));
  for (const Cv0Build& build : plan.cv0_builds) {
    Cv0BuildArgs args;
    args.table = reinterpret_cast<uint32_t*>(build.address);
    args.nodes = build.nodes;
    std::memcpy(args.int_key, plan.session.int_key, sizeof args.int_key);
    std::memcpy(args.src_key, plan.session.src_key, sizeof args.src_key);
    WP_RETURN_IF_ERROR(runtime_->RunBuildCv0(ordinal_, args));
  }
  uint64_t labels_done = 0;
  std::string last_phase;
  for (size_t w = 0; w < plan.launches.size(); ++w) {
    if (control.cancel != nullptr && control.cancel->load()) return FailedPreconditionError("fill cancelled");
    const PlannedLaunch& launch = plan.launches[w];
    if (launch.stats.phase != last_phase) ++st->passes, last_phase = launch.stats.phase;
    LaunchStats ls = launch.stats;
    WP_RETURN_IF_ERROR(RunLaunch(plan, w, &ls));
    ++st->launches;
    labels_done += launch.labels;
    ls.labels_done = labels_done;
    st->launch_log.push_back(ls);
    if (control.progress) control.progress(labels_done, spec.count);
    if (control.launch_done) control.launch_done(ls);
  }
  st->labels = labels_done;
  if (labels_done != spec.count) {
    return InternalError("fill wrote " + std::to_string(labels_done) + " of " + std::to_string(spec.count) + " labels");
  }
  LabelLayout layout(spec.first, spec.count, spec.chunk_labels);
  layout.AddRuns(plan.runs);
  layout_ = std::move(layout);
  return Status::Ok();
}

StatusOr<FillPlan> DeviceRegion::Plan(const RegionSpec& spec, const FillTuning& tuning) const {
  if (released_) return FailedPreconditionError("device memory was released");
  WP_ASSIGN_OR_RETURN(const FillDevice device, PlanningDevice(spec, tuning));
  WP_ASSIGN_OR_RETURN(FillBudget budget, BudgetFill(spec, tuning, adopted_host_ != nullptr, device));
  const uint64_t side_bytes = budget.side_want_bytes;
  WP_ASSIGN_OR_RETURN(FillPlan plan, PlanFill(std::move(budget), device, 0, side_bytes));
  std::string last_phase;
  for (const PlannedLaunch& launch : plan.launches) {
    if (launch.stats.phase != last_phase) ++plan.stats.passes, last_phase = launch.stats.phase;
    plan.stats.launch_log.push_back(launch.stats);
    plan.stats.labels += launch.labels;
    plan.stats.launch_log.back().labels_done = plan.stats.labels;
  }
  plan.stats.launches = static_cast<uint32_t>(plan.launches.size());
  return plan;
}

// The slot table and the programs into the side scratch. The kernel trusts the step bounds it
// reads (TeamRunStep bounds its search by them): they are read back, so an upload that did not
// land whole fails here rather than on the device.
Status DeviceRegion::Upload(const FillPlan& plan) {
  const FillBudget& b = plan.budget;
  WP_RETURN_IF_ERROR(runtime_->CopyToDevice(ordinal_, reinterpret_cast<void*>(plan.slot_table_dev),
                                            b.slot_table.data(), b.slot_table.size() * 8));
  const DeviceProgram* programs[2] = {&b.program, &b.partial_program};
  for (int g = 0; g < 2; ++g) {
    const DeviceProgram& p = *programs[g];
    if (plan.graphs[g].words_dev == 0) continue;
    WP_RETURN_IF_ERROR(runtime_->CopyToDevice(ordinal_, reinterpret_cast<void*>(plan.graphs[g].words_dev),
                                              p.words.data(), p.words.size() * 4));
    WP_RETURN_IF_ERROR(runtime_->CopyToDevice(ordinal_, reinterpret_cast<void*>(plan.graphs[g].steps_dev),
                                              p.step_begin.data(), p.step_begin.size() * 4));
    std::vector<uint32_t> uploaded(p.step_begin.size());
    WP_RETURN_IF_ERROR(runtime_->CopyToHost(ordinal_, uploaded.data(),
                                            reinterpret_cast<const void*>(plan.graphs[g].steps_dev),
                                            uploaded.size() * 4));
    if (uploaded != p.step_begin) {
      return InternalError("the step bounds uploaded to " + props_.id + " differ from the program's");
    }
  }
  return Status::Ok();
}

// Launch `w` of `plan`: its team table, the launch, its clock and fault words.
Status DeviceRegion::RunLaunch(const FillPlan& plan, size_t w, LaunchStats* ls) {
  const PlannedLaunch& launch = plan.launches[w];
  WP_RETURN_IF_ERROR(runtime_->CopyToDevice(ordinal_, reinterpret_cast<void*>(plan.team_table_dev),
                                            launch.teams.data(), launch.teams.size() * sizeof(TeamDesc)));
  const LaunchWords zero;
  WP_RETURN_IF_ERROR(runtime_->CopyToDevice(ordinal_, reinterpret_cast<void*>(plan.words_dev), &zero, sizeof zero));
  const auto t0 = std::chrono::steady_clock::now();
  WP_RETURN_IF_ERROR(runtime_->RunFill(ordinal_, launch.launch).WithContext("fill launch on " + props_.id));
  ls->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  LaunchWords words;
  WP_RETURN_IF_ERROR(runtime_->CopyToHost(ordinal_, &words, reinterpret_cast<void*>(plan.words_dev), sizeof words));
  if (words.fault != 0) {
    return InternalError("fill launch " + std::to_string(w) + " on " + props_.id + " raised fault bits " +
                         std::to_string(words.fault) +
                         " (kernel_args.h kFault*): its program did not fit its step bounds; the labels are wrong");
  }
  ls->sm_cycles = words.clock[1] > words.clock[0] ? words.clock[1] - words.clock[0] : 0;
  ls->team_spans = TeamSpansFrom(words);
  return Status::Ok();
}

LabelPlaces DeviceRegion::HostPlaces() const {
  LabelPlaces p;
  layout_.SetPlaces(&p);
  map_.SetPlaces(&p);
  return p;
}

DeviceRegion::LookupMode DeviceRegion::lookup_mode() const {
  return {places_dev_ != nullptr, lookup_threads_per_label_};
}

// The tables packed in one allocation, each part 16-byte aligned: runs, slot_begin, bases, buckets.
Status DeviceRegion::UploadPlaces() {
  FreePlaces();
  // (Host memory a GPU filled is released after its fill and read by the host: gpu_host_fill.cc.)
  if (!lookup_places_on_device_ || adopted_host_ != nullptr) return Status::Ok();
  const LabelPlaces host = HostPlaces();
  const uint64_t pieces = map_.pieces();
  const uint64_t sizes[4] = {host.run_count * sizeof(PlaceRun), (pieces + 1) * 8, pieces * 8,
                             map_.bucket_piece().size() * 4};
  const void* parts[4] = {host.runs, host.slot_begin, host.bases, host.bucket_piece};
  uint64_t offsets[4], total = 0;
  for (int i = 0; i < 4; ++i) {
    offsets[i] = total;
    total += (sizes[i] + 15) / 16 * 16;
  }
  std::vector<uint8_t> blob(total, 0);
  for (int i = 0; i < 4; ++i) {
    if (sizes[i] > 0) std::memcpy(blob.data() + offsets[i], parts[i], sizes[i]);
  }
  void* dev = nullptr;
  total = std::max<uint64_t>(total, 16);
  // The tables are an optimisation: when they cannot be had, the host places the halves, and only
  // a lost device (every later call would fail too) fails the fill.
  Status st = runtime_->Allocate(ordinal_, total, &dev);
  if (st.ok()) {
    st = runtime_->CopyToDevice(ordinal_, dev, blob.data(), total);
    if (!st.ok()) runtime_->Free(ordinal_, dev);
  }
  if (!st.ok()) {
    return runtime_->Health();  // (lookup_tables_bytes() 0 and lookup_mode() say so)
  }
  places_dev_ = dev;
  places_bytes_ = total;
  const auto base = reinterpret_cast<uint64_t>(dev);
  device_places_ = host;
  device_places_.runs = reinterpret_cast<const PlaceRun*>(base + offsets[0]);
  device_places_.slot_begin = reinterpret_cast<const uint64_t*>(base + offsets[1]);
  device_places_.bases = reinterpret_cast<const uint64_t*>(base + offsets[2]);
  device_places_.bucket_piece = reinterpret_cast<const uint32_t*>(base + offsets[3]);
  return Status::Ok();
}

void DeviceRegion::FreePlaces() {
  if (places_dev_ != nullptr) runtime_->Free(ordinal_, places_dev_);
  places_dev_ = nullptr;
  places_bytes_ = 0;
  device_places_ = LabelPlaces();
}

Status DeviceRegion::StageLookupLocked(const uint64_t* global_indices, size_t n, LookupMode mode) const {
  if (released_) return FailedPreconditionError("device memory was released");
  if (!filled_) return FailedPreconditionError("no completed fill on " + props_.id);
  // Each index is read once from the caller's memory and checked in the copy the kernel or the
  // placement reads, so a caller that changes its buffer meanwhile cannot slip an unchecked one in.
  auto* staged = static_cast<uint64_t*>(lookup_host_);
  const bool indices = mode.places_on_device;  // the kernel places them (kernel_args.h LookupArgs::indices)
  const LabelPlaces places = HostPlaces();
  for (size_t i = 0; i < n; ++i) {
    const uint64_t g = global_indices[i];
    if (g < filled_first_ || g - filled_first_ >= filled_count_) {
      return InvalidArgumentError("label index " + std::to_string(g) + " is outside the filled range [" +
                                  std::to_string(filled_first_) + ", " + std::to_string(filled_first_ + filled_count_) +
                                  ")");
    }
    if (indices) {
      staged[i] = g;
    } else {
      PlaceLabel(places, g, staged + 2 * i);
    }
  }
  return Status::Ok();
}

LookupArgs DeviceRegion::LookupArgsFor(size_t n, LookupMode mode) const {
  LookupArgs args;
  if (mode.places_on_device) {
    args.indices = static_cast<const uint64_t*>(lookup_device_);
    args.places = device_places_;
  } else {
    args.addresses = static_cast<const uint64_t*>(lookup_device_);
  }
  args.out = reinterpret_cast<uint32_t*>(static_cast<uint64_t*>(lookup_device_) + 2 * kLookupBatch);
  args.n = static_cast<uint32_t>(n);
  args.threads_per_label = mode.threads_per_label;
  return args;
}

Status DeviceRegion::LookupLocked(const uint64_t* global_indices, size_t n, uint8_t* out) const {
  const auto* host_labels = reinterpret_cast<const uint8_t*>(static_cast<uint64_t*>(lookup_host_) + 2 * kLookupBatch);
  for (size_t off = 0; off < n || (n == 0 && off == 0); off += kLookupBatch) {
    const size_t batch = std::min<size_t>(kLookupBatch, n - off);
    WP_RETURN_IF_ERROR(StageLookupLocked(global_indices + off, batch, lookup_mode()));
    if (batch == 0) break;
    WP_RETURN_IF_ERROR(runtime_->RunLookup(ordinal_, LookupArgsFor(batch, lookup_mode()), lookup_queue_)
                           .WithContext("lookup on " + props_.id));
    std::memcpy(out + off * 32, host_labels, batch * 32ull);
  }
  return Status::Ok();
}

Status DeviceRegion::Lookup(const uint64_t* global_indices, size_t n, uint8_t* out) const {
  std::lock_guard<std::mutex> lock(lookup_mu_);
  if (started_out_ != nullptr) return FailedPreconditionError("a lookup is in flight on " + props_.id);
  return LookupLocked(global_indices, n, out);
}

Status DeviceRegion::LookupInParts(const uint64_t* global_indices, size_t n, LookupMode mode, uint8_t* out,
                                   LookupParts* parts) const {
  std::lock_guard<std::mutex> lock(lookup_mu_);
  if (started_out_ != nullptr) return FailedPreconditionError("a lookup is in flight on " + props_.id);
  if (n == 0 || n > kLookupBatch) return InvalidArgumentError("a lookup in parts takes 1 to kLookupBatch labels");
  if (mode.places_on_device && places_dev_ == nullptr) {
    return FailedPreconditionError("the placement tables are not on " + props_.id);
  }
  using Clock = std::chrono::steady_clock;
  auto us = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
  };
  const auto t0 = Clock::now();
  WP_RETURN_IF_ERROR(StageLookupLocked(global_indices, n, mode));
  const auto t1 = Clock::now();
  const LookupArgs args = LookupArgsFor(n, mode);
  WP_RETURN_IF_ERROR(runtime_->RunLookup(ordinal_, args, lookup_queue_).WithContext("lookup on " + props_.id));
  const auto t2 = Clock::now();
  std::memcpy(out, static_cast<uint64_t*>(lookup_host_) + 2 * kLookupBatch, n * 32ull);
  const auto t3 = Clock::now();
  *parts = {us(t0, t1), us(t1, t2), us(t2, t3)};
  return Status::Ok();
}

Status DeviceRegion::StartLookup(const uint64_t* global_indices, size_t n, uint8_t* out) const {
  std::lock_guard<std::mutex> lock(lookup_mu_);
  if (started_out_ != nullptr) return FailedPreconditionError("a lookup is in flight on " + props_.id);
  if (n == 0 || n > kLookupBatch) return LookupLocked(global_indices, n, out);
  WP_RETURN_IF_ERROR(StageLookupLocked(global_indices, n, lookup_mode()));
  WP_RETURN_IF_ERROR(runtime_->LaunchLookup(ordinal_, LookupArgsFor(n, lookup_mode()), lookup_queue_)
                         .WithContext("lookup on " + props_.id));
  started_out_ = out;
  started_n_ = n;
  return Status::Ok();
}

Status DeviceRegion::FinishLookup() const {
  std::lock_guard<std::mutex> lock(lookup_mu_);
  if (abandoned_lookup_) {
    abandoned_lookup_ = false;
    return FailedPreconditionError("device memory on " + props_.id + " was released during a lookup");
  }
  if (started_out_ == nullptr) return Status::Ok();
  uint8_t* out = started_out_;
  started_out_ = nullptr;
  WP_RETURN_IF_ERROR(runtime_->WaitLookup(ordinal_, lookup_queue_).WithContext("lookup on " + props_.id));
  const auto* host_labels = reinterpret_cast<const uint8_t*>(static_cast<uint64_t*>(lookup_host_) + 2 * kLookupBatch);
  std::memcpy(out, host_labels, started_n_ * 32ull);
  return Status::Ok();
}

}  // namespace gpu
}  // namespace wipeproof
