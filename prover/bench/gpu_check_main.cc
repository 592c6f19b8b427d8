// wipeproof-gpu-check: the GPU machine's self-contained check. Needs only what the minimal build
// has (CMake, a GPU compiler, the label engine): parity of the GPU kernels with the CPU engine,
// then benchmarks, each step printing one JSON object (and writing it to --json=PATH, also after
// every fill launch, so a step killed mid-fill still leaves its figures).
//
//   wipeproof-gpu-check [--runtime=auto|cuda|hip|emulated|dry-run] [--device=N] [--json=PATH] STEP [options]
//   STEP: info | parity | fill | lookup | compress | model
//   --runtime=dry-run [--gpu=h200|h100|mi300x]: the fill planner on a device of that shape (default
//            h200), nothing computed; `fill` then prints the plan and the device model's prediction.
//   fill:    --gib=G (labels to write, GiB; 0 = all free memory but the reserve) --m=M --format=c1|192
//            --extra-gib=E (also take E GiB beyond the plan; the fill never uses it)
//            --time-limit=S (cancel the fill after S seconds and report the partial rate)
//            --samples=N (labels checked against the CPU verifier after the fill)
//            --launch-seconds=S (launches of about S seconds: wave chunks from the raw rate)
//            On a GPU the model's prediction for the same plan is printed beside the measurement
//            when the device resembles a named shape (or --gpu names one).
//   lookup:  --gib=G --m=M --iterations=N --lookup-threads-per-label=1|8 --lookup-places=host|device
//            (end-to-end latency, every mode in parts, the kernel alone in each buffer placement)
//   parity:  --max-m=M, --min-m=M (skip larger or smaller m; the emulated runtime is slow)
//   compress: --seconds=S --warps-per-subpartition=1,2,4,8 (CompressChain at each occupancy; 0: full)
//   model:   --gpu=h200|h100|mi300x|all: issue 12's cases planned and modelled (dry run, no device);
//            --issue-efficiency --instructions-per-item --step-latency-cycles override assumptions
//   tuning (fill, lookup, parity): --team-threads --max-chunks-per-team --threads-per-chunk
//            --target-threads --teams-per-slot --side-scratch-mib --wave-chunks --reserve-mib --max-piece-mib
//            --scratch-teams
//
// Flags are parsed here, not with gflags as the two main binaries do: this tool must build on a bare
// GPU machine from the label engine alone (scripts/gpu-check.sh's plain nvcc fallback links no
// library). An unknown flag or step, a second step, a number that is not one (or negative), or an m that is not
// a power of two within the label spec is a usage error, reported in the JSON before anything runs.
//
// Exit status: 0 when the step ran and passed (or there is no device: "status": "no_device"),
// 1 when a check failed, 2 on bad usage, 3 on a device or runtime error.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/numbers.h"
#include "kernels/chunk_verifier.h"
#include "kernels/gpu/emulated_runtime.h"
#include "kernels/gpu/gpu_runtime.h"
#include "kernels/graph_schedule.h"
#include "kernels/region_labeler.h"
#include "prover/backends/gpu/device_region.h"
#include "prover/bench/gpu_check_json.h"
#include "prover/bench/gpu_check_model.h"

namespace wipeproof {
namespace gpu {
namespace {

using Clock = std::chrono::steady_clock;

// The share of the raw compression rate a fill is assumed to reach when --launch-seconds sizes its
// launches: below the device model's ~0.85, so a launch planned for S seconds takes 0.7 S at the
// model's share and 1.5 S at 0.4.
constexpr double kLaunchFillShare = 0.6;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// ---------------------------------------------------------------------------------------------
// Flags: --key=value.

struct Flags {
  std::map<std::string, std::string> values;
  std::vector<std::string> positional;

  bool Has(const std::string& k) const { return values.count(k) > 0; }
  std::string Get(const std::string& k, const std::string& def) const {
    auto it = values.find(k);
    return it == values.end() ? def : it->second;
  }
  double Num(const std::string& k, double def) const {
    auto it = values.find(k);
    return it == values.end() ? def : std::strtod(it->second.c_str(), nullptr);
  }
};

// The usage (the header comment above, for people).
constexpr char kUsage[] =
    "usage: wipeproof-gpu-check [--runtime=auto|cuda|hip|emulated|dry-run] [--device=N] [--json=PATH] STEP [options]\n"
    "  STEP: info | parity | fill | lookup | compress | model (default info); one JSON object on stdout\n"
    "  --runtime=dry-run [--gpu=h200|h100|mi300x]: the fill planner on a device of that shape, nothing computed\n"
    "            (fill and info only; a dry-run fill also times the host's share of a lookup: \"host_lookup\")\n"
    "  fill:     --gib=G (GiB of labels, default 16; 0: all memory) --m=M (labels a chunk, default 16384)\n"
    "            --format=c1|192 (default c1) --extra-gib=E (held beyond the plan, default 0)\n"
    "            --time-limit=S (seconds, then cancelled between launches; default none)\n"
    "            --samples=N (labels checked against the CPU, default 24)\n"
    "            --launch-seconds=S (launches of about S seconds; default: the planner's)\n"
    "  lookup:   --gib=G (default 4) --m=M (default 16384) --iterations=N (rounds per q, default 1000)\n"
    "            --lookup-threads-per-label=1|8 (the lookup kernel's shape), --lookup-places=host|device (who\n"
    "            places each label's halves; default device); its \"parts\" rows time every mode\n"
    "  parity:   --max-m=M (default 131072) --min-m=M (default 1)\n"
    "  compress: --seconds=S (per run, default 1) --warps-per-subpartition=LIST (0: full occupancy)\n"
    "  model:    --gpu=h200|h100|mi300x|all --issue-efficiency=E --instructions-per-item=N --step-latency-cycles=N\n"
    "  tuning (fill, lookup, parity): --team-threads --max-chunks-per-team --threads-per-chunk --target-threads\n"
    "            --teams-per-slot (launch N x the teams that fit; default 1)\n"
    "            --side-scratch-mib --wave-chunks --reserve-mib --max-piece-mib --scratch-teams\n"
    "Exit status: 0 passed (or no device), 1 a check failed, 2 bad usage, 3 a device, runtime or file error.\n";

// The flags of every step (the usage above). A text flag takes one of its words (none listed: any
// text); a switch takes no value; every other flag is a number in its range, checked here so a typo
// is a usage error rather than a silent 0 or a runtime error later.
const std::map<std::string, std::set<std::string>>& TextFlags() {
  static const std::map<std::string, std::set<std::string>> kText = {
      {"runtime", {"auto", "cuda", "hip", "emulated", "dry-run"}},
      {"json", {}},
      {"format", {"c1", "192"}},
      {"gpu", {"h200", "h100", "mi300x", "all"}},
      {"warps-per-subpartition", {}},
      {"lookup-threads-per-label", {"1", "8"}},
      {"lookup-places", {"host", "device"}},
  };
  return kText;
}
struct NumberRange {
  double min, max;
  bool integer;
};
const std::map<std::string, NumberRange>& NumberFlags() {
  constexpr double kMaxCount = 1e12;  // labels, chunks, threads, iterations: far beyond any device
  static const std::map<std::string, NumberRange> kNumbers = {
      {"device", {0, 1023, true}},
      {"gib", {0, 1 << 20, false}},
      {"extra-gib", {0, 1 << 20, false}},
      {"m", {kMinChunkLabels, kMaxChunkLabels, true}},
      {"min-m", {kMinChunkLabels, kMaxChunkLabels, true}},
      {"max-m", {kMinChunkLabels, kMaxChunkLabels, true}},
      {"iterations", {1, kMaxCount, true}},
      {"samples", {0, kMaxCount, true}},
      {"seconds", {0.001, 3600, false}},
      {"time-limit", {0.001, 86400, false}},
      {"launch-seconds", {0.001, 3600, false}},
      {"issue-efficiency", {0.01, 1, false}},
      {"instructions-per-item", {1, 1e6, false}},
      {"step-latency-cycles", {0, 1e9, false}},
      {"team-threads", {1, 1024, true}},
      {"max-chunks-per-team", {1, 1 << 20, true}},
      {"threads-per-chunk", {0, 1024, true}},
      {"target-threads", {0, kMaxCount, true}},
      {"teams-per-slot", {1, 64, true}},
      {"side-scratch-mib", {0, 1 << 20, true}},
      {"wave-chunks", {0, kMaxCount, true}},
      {"reserve-mib", {0, 1 << 20, true}},
      {"max-piece-mib", {0, 1 << 20, true}},
  };
  return kNumbers;
}
const std::set<std::string>& Steps() {
  static const std::set<std::string> kSteps = {"info", "parity", "fill", "lookup", "compress", "model"};
  return kSteps;
}

// Parses argv into flags and the step. Returns "" or the usage error: an unknown flag or step, a
// flag or step given twice, a switch with a value, a missing value, a word not among a text flag's,
// a number that is not one, out of its range, or not whole where it must be (--m must also be a
// power of two within the label spec).
std::string ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      if (!f->positional.empty()) return "one step only, got '" + f->positional[0] + "' and '" + a + "'";
      if (Steps().count(a) == 0) return "unknown step '" + a + "' (info, parity, fill, lookup, compress, model)";
      f->positional.push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (f->values.count(name) > 0) return "--" + name + " is given twice";
    if (name == "scratch-teams") {
      if (eq != std::string::npos) return "--scratch-teams takes no value";
      f->values[name] = "1";
      continue;
    }
    const auto text = TextFlags().find(name);
    const auto number = NumberFlags().find(name);
    if (text == TextFlags().end() && number == NumberFlags().end()) return "unknown flag --" + name;
    if (value.empty()) return "--" + name + " needs a value (--" + name + "=...)";
    if (text != TextFlags().end() && !text->second.empty() && text->second.count(value) == 0) {
      std::string words;
      for (const std::string& w : text->second) words += (words.empty() ? "" : ", ") + w;
      return "--" + name + " takes one of " + words + ", got '" + value + "'";
    }
    if (name == "warps-per-subpartition" && value.find_first_not_of("0123456789,") != std::string::npos) {
      return "--warps-per-subpartition wants a comma list of whole numbers, got '" + value + "'";
    }
    if (number != NumberFlags().end()) {
      const NumberRange& r = number->second;
      char* end = nullptr;
      const double x = std::strtod(value.c_str(), &end);
      const bool digits_only = value.find_first_not_of("0123456789") == std::string::npos;
      if (end == value.c_str() || *end != '\0' || !std::isfinite(x) || !(x >= r.min && x <= r.max) ||
          (r.integer && !digits_only)) {
        char range[96];
        std::snprintf(range, sizeof range, "%s in [%.10g, %.10g]", r.integer ? "a whole number" : "a number", r.min,
                      r.max);
        return "--" + name + " wants " + range + ", got '" + value + "'";
      }
      // --min-m and --max-m bound the m of parity's cases (1000 is fine); --m is one chunk size.
      if (name == "m" && !IsPowerOfTwo(static_cast<uint64_t>(x))) {
        return "--" + name + " must be a power of two in [" + std::to_string(kMinChunkLabels) + ", " +
               std::to_string(kMaxChunkLabels) + "], got '" + value + "'";
      }
    }
    f->values[name] = value;
  }
  return "";
}

FillTuning TuningFrom(const Flags& f) {
  FillTuning t;
  if (f.Has("team-threads")) t.team_threads = static_cast<uint32_t>(f.Num("team-threads", 64));
  if (f.Has("max-chunks-per-team")) t.max_chunks_per_team = static_cast<uint32_t>(f.Num("max-chunks-per-team", 16));
  t.threads_per_chunk = static_cast<uint32_t>(f.Num("threads-per-chunk", 0));
  t.target_threads = static_cast<uint64_t>(f.Num("target-threads", 0));
  t.teams_per_slot = static_cast<uint32_t>(f.Num("teams-per-slot", 1));
  if (f.Has("side-scratch-mib")) t.side_scratch_bytes = static_cast<uint64_t>(f.Num("side-scratch-mib", 256)) << 20;
  t.max_wave_chunks = static_cast<uint64_t>(f.Num("wave-chunks", 0));
  t.in_place = !f.Has("scratch-teams");
  return t;
}

Json TuningJson(const FillTuning& t) {
  Json j;
  j.Int("team_threads", t.team_threads)
      .Int("max_chunks_per_team", t.max_chunks_per_team)
      .Int("threads_per_chunk", t.threads_per_chunk)
      .Int("target_threads", t.target_threads)
      .Int("teams_per_slot", t.teams_per_slot)
      .Int("side_scratch_bytes", t.side_scratch_bytes)
      .Int("max_wave_chunks", t.max_wave_chunks)
      .Bool("in_place", t.in_place);
  return j;
}

DeviceRegionOptions RegionOptionsFrom(const Flags& f, uint64_t bytes) {
  DeviceRegionOptions o;
  o.bytes = bytes;
  if (f.Has("reserve-mib")) o.reserve_bytes = static_cast<uint64_t>(f.Num("reserve-mib", 0)) << 20;
  if (f.Has("max-piece-mib")) o.policy.max_piece_bytes = static_cast<uint64_t>(f.Num("max-piece-mib", 2048)) << 20;
  if (f.Has("lookup-places")) o.lookup_places_on_device = f.Get("lookup-places", "") == "device";
  if (f.Has("lookup-threads-per-label"))
    o.lookup_threads_per_label = f.Get("lookup-threads-per-label", "") == "8" ? 8 : 1;
  return o;
}

Json PropsJson(const GpuDeviceProps& p) {
  Json j;
  j.Int("ordinal", p.ordinal)
      .Str("name", p.name)
      .Str("id", p.id)
      .Str("pci_bus_id", p.pci_bus_id)
      .Str("arch", p.arch)
      .Int("total_bytes", p.total_bytes)
      .Int("free_bytes", p.free_bytes)
      .Int("multiprocessors", p.multiprocessors)
      .Int("warp_size", p.warp_size)
      .Int("max_threads_per_multiprocessor", p.max_threads_per_multiprocessor)
      .Int("shared_bytes_per_block", p.shared_bytes_per_block)
      .Int("l2_bytes", p.l2_bytes)
      .Bool("kernel_time_limited", p.kernel_time_limited);
  return j;
}

RegionSpec MakeSpec(LabelFormat format, uint32_t m, uint64_t first, uint64_t count, uint64_t seed_salt) {
  RegionSpec spec;
  spec.format = format;
  std::mt19937_64 rng(0x5EED0000 + seed_salt);
  for (int i = 0; i < kSeedBytes; ++i) spec.seed[i] = static_cast<uint8_t>(rng());
  spec.chunk_labels = m;
  spec.first = first;
  spec.count = count;
  return spec;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s + ",") {
    if (ch == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  return out;
}

bool ParseFormat(const std::string& s, LabelFormat* f) {
  if (s == "c1" || s == "posedb-blake3-c1") return *f = LabelFormat::kC1, true;
  if (s == "192" || s == "posedb-blake3-192") return *f = LabelFormat::k192, true;
  return false;
}

// Checks `samples` random labels (plus the first and last) of a filled region against the CPU
// verifier; the challenger's own check, in small.
Json SampledParity(const DeviceRegion& region, const RegionSpec& spec, int samples, bool* ok) {
  std::mt19937_64 rng(99);
  std::vector<uint64_t> indices = {spec.first, spec.first + spec.count - 1};
  for (int i = 0; i < samples; ++i) indices.push_back(spec.first + rng() % spec.count);
  std::vector<uint8_t> got(indices.size() * 32);
  Status st = region.Lookup(indices.data(), indices.size(), got.data());
  Json j;
  j.Int("checked", indices.size());
  if (!st.ok()) {
    *ok = false;
    return j.Str("error", st.ToString());
  }
  // One recompute per distinct chunk, on all cores.
  std::vector<int> bad(indices.size(), 0);
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < indices.size();) {
        const uint64_t g = indices[i], m = spec.chunk_labels;
        auto chunk = RecomputeChunk(spec.format, spec.seed, spec.chunk_labels, g / m, spec.first + spec.count);
        bad[i] = !chunk.ok() || std::memcmp(chunk->labels.data() + (g % m) * 32, got.data() + i * 32, 32) != 0;
      }
    });
  }
  for (auto& t : pool) t.join();
  uint64_t mismatches = 0;
  std::string first_bad;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (bad[i]) {
      if (mismatches++ == 0) first_bad = std::to_string(indices[i]);
    }
  }
  *ok = mismatches == 0;
  j.Int("mismatches", mismatches);
  if (mismatches) j.Str("first_mismatch_index", first_bad);
  return j;
}

// ---------------------------------------------------------------------------------------------
// Steps.

struct Context {
  GpuRuntime* runtime = nullptr;
  std::string runtime_name;  // as asked: "cuda", "hip", "emulated", "dry-run"
  int device = 0;
  GpuDeviceProps props;
  Flags flags;
  // Writes a partial result to --json (status "partial"), so a step killed by its timeout still
  // leaves what it had finished.
  std::function<void(const Json&)> checkpoint;
};

int StepInfo(Context& c, Json* out) {
  int count = 0;
  Status st = c.runtime->DeviceCount(&count);
  out->Int("devices", count);
  std::vector<Json> devices;
  for (int i = 0; i < count; ++i) {
    GpuDeviceProps p;
    if (c.runtime->Properties(i, &p).ok()) devices.push_back(PropsJson(p));
  }
  out->Arr("all_devices", devices);
  return 0;
}

// CompressChain (the fill's own node hash as a dependent chain per thread) at chosen occupancies:
// blocks of one warp per sub-partition, w blocks per multiprocessor. Each run's SM clock comes
// from the kernel's clock64 over the event-timed launch, and the full-occupancy run gives the
// instructions per compression the model assumes (SMs x 64 integer lanes x clock / rate).
int StepCompress(Context& c, Json* out) {
  const double seconds = c.flags.Num("seconds", 1.0);
  const uint32_t warp = c.props.warp_size > 0 ? static_cast<uint32_t>(c.props.warp_size) : 32;
  std::vector<uint32_t> warps;
  for (const std::string& w : Split(c.flags.Get("warps-per-subpartition", "0"))) {
    warps.push_back(static_cast<uint32_t>(std::strtoul(w.c_str(), nullptr, 10)));
  }
  std::vector<Json> runs;
  int rc = 0;
  for (uint32_t w : warps) {
    ChainRun run;
    run.seconds = seconds;
    run.threads_per_block = w == 0 ? 256 : 4 * warp;  // one warp per sub-partition (4 per SM/CU)
    run.blocks_per_multiprocessor = w;
    ChainResult r;
    Json j;
    j.Int("warps_per_subpartition", w);
    Status st = c.runtime->MeasureCompressionChain(c.device, run, &r);
    if (!st.ok()) {
      j.Str("error", st.ToString());
      rc = 3;
    } else {
      const double lanes = static_cast<double>(c.props.multiprocessors) * 64;
      j.Int("threads_per_block", run.threads_per_block)
          .Int("blocks_per_multiprocessor", r.blocks_per_multiprocessor)
          .Int("threads", r.threads)
          .Num("seconds", r.seconds)
          .Num("compressions_per_s", r.compressions_per_s)
          .Num("sm_clock_hz", r.sm_clock_hz)
          .Num("instructions_per_compression_if_int_bound",
               r.compressions_per_s > 0 && r.sm_clock_hz > 0 ? lanes * r.sm_clock_hz / r.compressions_per_s : NAN);
      if (w == 0) out->Num("compressions_per_s", r.compressions_per_s);
      std::fprintf(stderr, "compress w=%u: %.3g compressions/s at %.0f MHz\n", w, r.compressions_per_s,
                   r.sm_clock_hz / 1e6);
      GpuShape shape;
      if (w == 0 && ShapeForDevice(c.props, &shape)) {
        std::fprintf(stderr,
                     "MODEL-VS-MEASURED CompressChain, full occupancy, on %s: measured %.3g compressions/s at %.0f "
                     "MHz (%.0f instructions per compression if integer-bound); modelled roofline %.3g at %.0f MHz "
                     "(%.0f assumed)%s\n",
                     shape.name.c_str(), r.compressions_per_s, r.sm_clock_hz / 1e6,
                     r.compressions_per_s > 0 ? lanes * r.sm_clock_hz / r.compressions_per_s : 0.0,
                     RooflineCompressionsPerSecond(shape), shape.clock_hz / 1e6, shape.instructions_per_compression,
                     r.sm_clock_hz > 0 ? "" : " [no device clock: an emulated run]");
      }
    }
    runs.push_back(j);
    Json partial = *out;
    c.checkpoint(partial.Arr("runs", runs));
  }
  out->Arr("runs", runs);
  return rc;
}

// Byte equality with the CPU engine over every label of each case, read back through Lookup.
int StepParity(Context& c, Json* out) {
  const uint64_t max_m = static_cast<uint64_t>(c.flags.Num("max-m", 1 << 17));
  const uint64_t min_m = static_cast<uint64_t>(c.flags.Num("min-m", 1));
  const FillTuning base = TuningFrom(c.flags);
  struct Case {
    std::string name;
    LabelFormat format;
    uint32_t m;
    uint64_t first, count;
    uint64_t extra_bytes;   // acquired beyond the plan
    uint64_t piece_bytes;   // small pieces: ranges cross allocation boundaries
    uint64_t side_scratch;  // 0: default
    uint64_t wave_chunks = 0;
    bool in_place = true;
  };
  std::vector<Case> cases;
  for (LabelFormat f : {LabelFormat::kC1, LabelFormat::k192}) {
    const std::string fn = f == LabelFormat::kC1 ? "c1" : "192";
    for (uint32_t m : {1u, 3u, 1000u, 4096u, 1u << 14, 1u << 17}) {
      if (m > max_m || m < min_m) continue;
      // c1: partial chunks at both ends; 192: whole chunks then a trailing partial one.
      const uint64_t first = f == LabelFormat::kC1 ? 3ull * m + m / 2 : 3ull * m;
      const uint64_t chunks = m >= (1u << 17) ? 1 : m >= (1u << 14) ? 3 : m >= 1000 ? 9 : 40;
      const uint64_t count = chunks * m + (m > 2 ? m / 3 + 1 : 1);
      const uint64_t piece = std::max<uint64_t>(64 * 1024, count * 32 / 5 / 4096 * 4096);
      cases.push_back({fn + " m=" + std::to_string(m), f, m, first, count, 0, piece, 0, 0, true});
    }
    // Several waves of teams of C and C + 1, small pieces; and scratch teams for every chunk.
    if (max_m >= 4096 && min_m <= 1000) {
      cases.push_back({fn + " m=4096 waves", f, 4096, 4096, 4096ull * 200 + 77, 0, 4 << 20, 0, 37, true});
      cases.push_back({fn + " m=1000 scratch teams", f, 1000, 1000, 1000ull * 90 + 5, 0, 1 << 20, 0, 0, false});
    }
    // 192: a side scratch too small for the block-0 table: the table in the region, chunks deferred.
    if (f == LabelFormat::k192 && max_m >= 4096 && min_m <= 4096) {
      cases.push_back({fn + " m=4096 deferred chunks", f, 4096, 4096, 4096ull * 120, 0, 4 << 20, 2 << 20, 0, true});
    }
  }
  std::vector<Json> results;
  bool all_ok = true;
  int rc = 0;
  for (const Case& k : cases) {
    const auto t0 = Clock::now();
    Json r;
    r.Str("case", k.name).Int("m", k.m).Int("first", k.first).Int("count", k.count);
    const RegionSpec spec = MakeSpec(k.format, k.m, k.first, k.count, k.m);
    DeviceRegionOptions options = RegionOptionsFrom(c.flags, k.count * 32 + k.extra_bytes);
    options.policy.max_piece_bytes = k.piece_bytes;
    options.policy.min_piece_bytes = 4096;
    options.policy.granularity_bytes = 4096;
    auto region = DeviceRegion::Acquire(c.runtime, c.device, options);
    if (!region.ok()) {
      r.Bool("ok", false).Str("error", region.status().ToString());
      results.push_back(r);
      all_ok = false;
      rc = 3;
      continue;
    }
    r.Int("pieces", (*region)->pieces().size());
    FillTuning t = base;
    if (k.side_scratch) t.side_scratch_bytes = k.side_scratch;
    if (k.wave_chunks) t.max_wave_chunks = k.wave_chunks;
    if (!k.in_place) t.in_place = false;
    FillStats stats;
    Status st = (*region)->Fill(spec, t, {}, &stats);
    if (!st.ok()) {
      r.Bool("ok", false).Str("error", st.ToString());
      results.push_back(r);
      all_ok = false;
      rc = 3;
      continue;
    }
    r.Num("fill_seconds", stats.seconds)
        .Int("launches", stats.launches)
        .Int("deferred_chunks", stats.deferred_chunks)
        .Int("bytes_outside_label_slots_peak", stats.bytes_outside_label_slots_peak)
        .Str("plan", stats.plan);
    std::vector<uint8_t> want(k.count * 32), got(k.count * 32);
    RegionLabelOptions cpu;
    Status ref = LabelRegion(spec, want.data(), cpu);
    std::vector<uint64_t> idx(k.count);
    for (uint64_t i = 0; i < k.count; ++i) idx[i] = k.first + i;
    Status look = (*region)->Lookup(idx.data(), idx.size(), got.data());
    uint64_t mismatches = 0, first_bad = 0;
    for (uint64_t i = 0; ref.ok() && look.ok() && i < k.count; ++i) {
      if (std::memcmp(want.data() + i * 32, got.data() + i * 32, 32) != 0 && mismatches++ == 0) first_bad = k.first + i;
    }
    const bool ok = ref.ok() && look.ok() && mismatches == 0;
    r.Bool("ok", ok).Int("mismatches", mismatches).Num("seconds", Since(t0));
    if (mismatches) r.Int("first_mismatch_index", first_bad);
    if (!look.ok()) r.Str("error", look.ToString());
    all_ok = all_ok && ok;
    results.push_back(r);
    std::fprintf(stderr, "parity %-32s %s (%.2f s)\n", k.name.c_str(), ok ? "ok" : "FAIL", Since(t0));
    Json partial = *out;
    c.checkpoint(partial.Arr("cases", results).Bool("all_ok_so_far", all_ok));
  }
  out->Arr("cases", results).Bool("all_ok", all_ok);
  return rc ? rc : (all_ok ? 0 : 1);
}

std::string FormatSeconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

std::string FormatRatio(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", r);
  return buf;
}

std::string FormatGib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / kGiB);
  return buf;
}

// Block 0's clock64 span over the launch's wall time. Not the SM clock: teams of a launch finish far
// apart (docs/benchmarks.md "The first H200 run"), block 0 among the first; clocks.csv has the clock.
double Block0CyclesPerSecond(const LaunchStats& l) {
  return l.sm_cycles > 0 && l.seconds > 0 ? l.sm_cycles / l.seconds : 0;
}

std::string Block0Span(const LaunchStats& l) {
  if (Block0CyclesPerSecond(l) <= 0) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, " (block 0's span: %.0f M cycles a second)", Block0CyclesPerSecond(l) / 1e6);
  return buf;
}

// " (teams ran 0.60 of the launch on average; the first ended at 0.23, the last started at 0.00)",
// or "" without a team timer.
std::string TeamSpansText(const LaunchStats& l) {
  if (l.team_spans.teams == 0) return "";
  char buf[128];
  std::snprintf(buf, sizeof buf,
                " (teams ran %.2f of the launch on average; the first ended at %.2f, the last started at %.2f)",
                l.team_spans.mean_share, l.team_spans.first_end_share, l.team_spans.last_start_share);
  return buf;
}

Json AccountJson(const MemoryAccount& a, uint64_t plan_bytes) {
  Json j;
  j.Int("total_bytes", a.total_bytes)
      .Int("free_before_acquire_bytes", a.free_before_bytes)
      .Int("context_and_others_bytes", a.context_and_others_bytes)
      .Int("acquired_bytes", a.acquired_bytes)
      .Int("pieces", a.pieces)
      .Int("largest_piece_bytes", a.largest_piece_bytes)
      .Int("smallest_piece_bytes", a.smallest_piece_bytes)
      .Int("free_after_acquire_bytes", a.free_after_bytes)
      .Set("acquisition_overhead_bytes", std::to_string(a.acquisition_overhead_bytes))
      .Int("plan_bytes", plan_bytes)
      .Int("acquired_outside_plan_bytes", a.acquired_bytes > plan_bytes ? a.acquired_bytes - plan_bytes : 0)
      .Int("outside_plan_bytes", a.total_bytes > plan_bytes ? a.total_bytes - plan_bytes : 0)
      .Num("plan_share_of_total", a.total_bytes ? static_cast<double>(plan_bytes) / a.total_bytes : 0)
      .Bool("all_pieces_device_memory", a.all_pieces_device_memory)
      .Bool("compression_checked", a.compression_checked)
      .Str("memory_kind", a.memory_kind);
  return j;
}

Json LaunchJson(size_t index, const LaunchStats& l) {
  Json j;
  j.Int("launch", index)
      .Str("phase", l.phase)
      .Int("team_threads", l.team_threads)
      .Int("teams", l.teams)
      .Int("chunks", l.chunks)
      .Int("labels_done", l.labels_done)
      .Num("measured_s", l.seconds)
      .Int("sm_cycles", l.sm_cycles)
      .Num("block0_cycles_per_s", Block0CyclesPerSecond(l) > 0 ? Block0CyclesPerSecond(l) : NAN);
  if (l.team_spans.teams > 0) {  // fill_plan.h TeamSpans: shares of the launch's span
    j.Int("teams_timed", l.team_spans.teams)
        .Num("team_span_mean_share", l.team_spans.mean_share)
        .Num("first_team_end_share", l.team_spans.first_end_share)
        .Num("last_team_start_share", l.team_spans.last_start_share);
  }
  return j;
}

// Microseconds of `n` calls of region.Lookup, each of q labels drawn from [first, first + count),
// after 10 calls that warm the path up; sorted. Empty, with *error set, when a call fails.
std::vector<double> TimeLookups(const DeviceRegion& region, uint64_t first, uint64_t count, uint32_t q, int n,
                                std::mt19937_64& rng, Status* error) {
  std::vector<uint64_t> idx(q);
  std::vector<uint8_t> labels(q * 32ull);
  std::vector<double> us;
  for (int i = 0; i < n + 10; ++i) {
    for (auto& g : idx) g = first + rng() % count;
    const auto t0 = Clock::now();
    const Status ls = region.Lookup(idx.data(), q, labels.data());
    const double t = Since(t0) * 1e6;
    if (!ls.ok()) {
      *error = ls;
      return {};
    }
    if (i >= 10) us.push_back(t);
  }
  std::sort(us.begin(), us.end());
  return us;
}

// The p-quantile of sorted, non-empty `us`.
double Quantile(const std::vector<double>& us, double p) {
  return us[std::min(us.size() - 1, static_cast<size_t>(p * us.size()))];
}

// The host's share of a lookup, timed on a dry-run device filled by the real planner (its layout:
// runs of whole chunks in their teams' blocks, the pieces acquisition took), in both placements:
// the index checks and either the two halves' places (label_places.h, on the host) or a copy of the
// indices (the kernel places them), then the copy out. No kernel runs, so this is what the agent's
// thread spends per device and label besides the device's own latency (docs/benchmarks.md "Lookup
// staging").
std::vector<Json> HostLookupCost(const DeviceRegion& region, const RegionSpec& spec) {
  std::vector<Json> rows;
  std::mt19937_64 rng(7);
  for (const bool on_device : {false, true}) {
    if (on_device && !region.lookup_mode().places_on_device) continue;
    for (uint32_t q : {256u, 4096u}) {
      std::vector<uint64_t> idx(q);
      std::vector<uint8_t> labels(q * 32ull);
      std::vector<double> us;
      const int n = q >= 4096 ? 500 : 2000;
      for (int i = 0; i < n + 10; ++i) {
        for (auto& g : idx) g = spec.first + rng() % spec.count;
        DeviceRegion::LookupParts p;
        const Status st = region.LookupInParts(idx.data(), q, {on_device, 1}, labels.data(), &p);
        if (!st.ok()) return {Json().Str("error", st.ToString())};
        if (i >= 10) us.push_back(p.stage_us + p.copy_out_us);
      }
      std::sort(us.begin(), us.end());
      const double p50 = Quantile(us, 0.5);
      const char* placed = on_device ? "device" : "host";
      rows.push_back(Json()
                         .Int("q", q)
                         .Str("halves_placed_by", placed)
                         .Int("rounds", us.size())
                         .Num("p50_us", p50)
                         .Num("p99_us", Quantile(us, 0.99))
                         .Num("p50_ns_per_label", p50 * 1e3 / q));
      std::fprintf(stderr, "host share of a lookup, q=%u, halves placed by the %s: p50 %.2f us (%.1f ns a label)\n", q,
                   placed, p50, p50 * 1e3 / q);
    }
  }
  return rows;
}

int StepFill(Context& c, Json* out) {
  LabelFormat format;
  if (!ParseFormat(c.flags.Get("format", "c1"), &format)) {
    out->Str("error", "--format must be c1 or 192");
    return 2;
  }
  const bool dry = c.runtime_name == "dry-run";
  const uint32_t m = static_cast<uint32_t>(c.flags.Num("m", 1 << 14));
  const double gib = c.flags.Num("gib", 16);
  // --extra-gib: memory held beyond the plan; the fill must leave it alone (reported as such).
  const double extra_gib = gib > 0 ? c.flags.Num("extra-gib", 0) : 0;
  const uint64_t bytes = static_cast<uint64_t>((gib + extra_gib) * kGiB);
  FillTuning tuning = TuningFrom(c.flags);
  out->Str("format", LabelFormatName(format)).Int("m", m).Num("requested_gib", gib).Num("extra_gib", extra_gib);

  double raw_rate = 0;
  Status raw = dry ? Status::Ok() : c.runtime->MeasureCompressionRate(c.device, 0.5, &raw_rate);
  out->Num("raw_compressions_per_s", raw.ok() && !dry ? raw_rate : NAN);
  // --launch-seconds=S: launches of about S seconds, from the raw rate at kLaunchFillShare of it
  // (fill_passes.h WaveChunksForSeconds), so a step's time cap always sees launches finish.
  const double launch_seconds = c.flags.Num("launch-seconds", 0);
  if (launch_seconds > 0 && raw.ok() && raw_rate > 0) {
    const GraphShape graph = ShapeForChunkLabels(m);
    const uint64_t cap =
        WaveChunksForSeconds(launch_seconds, raw_rate * kLaunchFillShare,
                             CompressionsPerChunk(format == LabelFormat::k192, 2 * StandaloneNodeCount(graph.level)));
    tuning.max_wave_chunks = tuning.max_wave_chunks > 0 ? std::min(tuning.max_wave_chunks, cap) : cap;
    out->Num("launch_seconds", launch_seconds).Num("launch_fill_share_assumed", kLaunchFillShare);
  }
  out->Obj("tuning", TuningJson(tuning));
  c.checkpoint(*out);

  const auto t_acquire = Clock::now();
  auto region = DeviceRegion::Acquire(c.runtime, c.device, RegionOptionsFrom(c.flags, bytes));
  if (!region.ok()) {
    out->Str("error", region.status().ToString());
    return 3;
  }
  const double acquire_s = Since(t_acquire);
  const uint64_t capacity =
      gib > 0 ? std::min<uint64_t>((*region)->label_capacity(), static_cast<uint64_t>(gib * kGiB) / 32)
              : (*region)->label_capacity();
  // 192 plans cover whole chunks only (label-spec.md §2); c1 takes every slot.
  const uint64_t count = format == LabelFormat::k192 ? capacity / m * m : capacity;
  // Chunk-aligned start far from 0, as a session's second device would have.
  const RegionSpec spec = MakeSpec(format, m, static_cast<uint64_t>(m) * 1000003, count, 1);
  out->Num("acquire_seconds", acquire_s)
      .Int("bytes_held", (*region)->bytes_held())
      .Int("labels", count)
      .Obj("memory", AccountJson((*region)->memory_account(), count * 32));
  c.checkpoint(*out);

  std::atomic<bool> cancel{false};
  const double limit = c.flags.Num("time-limit", 0);
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::thread watchdog([&] {
    if (limit <= 0) return;
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, std::chrono::duration<double>(limit), [&] { return finished; })) cancel = true;
  });
  uint64_t done = 0;
  std::vector<Json> launches;
  FillControl control;
  control.cancel = &cancel;
  control.progress = [&](uint64_t d, uint64_t) { done = d; };
  control.launch_done = [&](const LaunchStats& l) {
    launches.push_back(LaunchJson(launches.size(), l));
    if (dry) return;
    Json partial = *out;
    c.checkpoint(partial.Arr("launches", launches).Int("labels_written_so_far", l.labels_done));
    std::fprintf(stderr, "fill launch %zu: %s, %u teams x %u threads, %.3f s%s%s\n", launches.size() - 1,
                 l.phase.c_str(), l.teams, l.team_threads, l.seconds, Block0Span(l).c_str(), TeamSpansText(l).c_str());
  };
  FillStats stats;
  Status st = (*region)->Fill(spec, tuning, control, &stats);
  {
    std::lock_guard<std::mutex> lock(mu);
    finished = true;
  }
  cv.notify_all();
  watchdog.join();
  const double s = stats.seconds;
  const bool cancelled = cancel.load() && !st.ok();
  const uint64_t labels = st.ok() ? count : done;
  const GraphShape shape = ShapeForChunkLabels(m);
  const double nodes_per_label = static_cast<double>(2 * StandaloneNodeCount(shape.level)) / m;
  const double nodes = st.ok() ? static_cast<double>(stats.nodes) : labels * nodes_per_label;
  // c1: one compression per node; 192: two, plus block 0 where the table did not cover it.
  double compressions = nodes;
  if (format == LabelFormat::k192) {
    const double covered =
        std::min(1.0, static_cast<double>(stats.cv0_table_nodes) / (2 * StandaloneNodeCount(shape.level)));
    compressions = nodes * (3.0 - covered);
  }
  out->Bool("completed", st.ok())
      .Bool("cancelled_by_time_limit", cancelled)
      .Int("labels_written", labels)
      .Int("side_scratch_bytes", stats.side_scratch_bytes)
      .Int("bytes_outside_label_slots_peak", stats.bytes_outside_label_slots_peak)
      .Int("region_scratch_peak_bytes", stats.region_scratch_peak_bytes)
      .Int("cv0_table_nodes", stats.cv0_table_nodes)
      .Int("deferred_chunks", stats.deferred_chunks)
      .Int("partial_chunks", stats.partial_chunks)
      .Int("passes", stats.passes)
      .Int("launches", stats.launches)
      .Int("team_threads", stats.main_shape.threads)
      .Int("team_chunks", stats.main_shape.chunks)
      .Int("chunks_in_flight", stats.main_chunks_in_flight)
      .Str("plan", stats.plan);
  if (!dry) {
    out->Num("fill_seconds", s)
        .Num("bytes_per_s", labels * 32.0 / s)
        .Num("gib_per_s", labels * 32.0 / s / kGiB)
        .Num("mib_per_s", labels * 32.0 / s / (1 << 20))
        .Num("labels_per_s", labels / s)
        .Num("node_hashes_per_s", nodes / s)
        .Num("compressions_per_s", compressions / s)
        .Num("ratio_to_raw_compression_rate", raw_rate > 0 ? compressions / s / raw_rate : NAN)
        .Num("projected_seconds_for_139_gib_at_this_rate", labels > 0 ? s * (139.0 * kGiB / 32) / labels : NAN);
  }
  // The model of this very plan, where the device has a named shape: modelled beside measured.
  GpuShape gpu_shape;
  const bool have_shape =
      c.flags.Has("gpu") ? GpuShapeByName(c.flags.Get("gpu", ""), &gpu_shape) : ShapeForDevice(c.props, &gpu_shape);
  if (st.ok() && have_shape) {
    const FillModel model = ModelPlan(gpu_shape, spec, stats);
    for (size_t i = 0; i < launches.size() && i < model.launches.size(); ++i) {
      launches[i].Num("modelled_s", model.launches[i].predicted_s).Num("modelled_lane_use", model.launches[i].lane_use);
      if (!dry && model.launches[i].predicted_s > 0) {
        launches[i].Num("measured_over_modelled", stats.launch_log[i].seconds / model.launches[i].predicted_s);
      }
    }
    out->Obj("model", ModelJson(model));
    if (!dry) out->Num("measured_over_modelled", s / model.total_s);
    // One line per comparison for the script's side-by-side table.
    const std::string what = std::string("fill ") + (format == LabelFormat::kC1 ? "c1" : "192") +
                             " m=" + std::to_string(m) + " " + FormatGib(count * 32.0) + " on " + gpu_shape.name;
    for (size_t i = 0; i < model.launches.size() && i < stats.launch_log.size(); ++i) {
      const LaunchStats& l = stats.launch_log[i];
      const LaunchModel& lm = model.launches[i];
      std::fprintf(stderr,
                   "MODEL-VS-MEASURED %s launch %zu (%s, %u teams of %u): measured %s, modelled %.2f s%s, "
                   "modelled lane use %.3f\n",
                   what.c_str(), i, l.phase.c_str(), l.teams, l.team_threads,
                   dry ? "-" : (FormatSeconds(l.seconds) + Block0Span(l)).c_str(), lm.predicted_s,
                   dry || lm.predicted_s <= 0 ? "" : (", x" + FormatRatio(l.seconds / lm.predicted_s)).c_str(),
                   lm.lane_use);
    }
    std::fprintf(stderr, "MODEL-VS-MEASURED %s total: measured %s, modelled %.2f s%s (tail %.1f%%)\n", what.c_str(),
                 dry ? "-" : FormatSeconds(s).c_str(), model.total_s,
                 dry ? "" : (", x" + FormatRatio(s / model.total_s)).c_str(), model.tail_share * 100);
  }
  out->Arr("launches", launches);
  if (!st.ok()) {
    out->Str("error", st.ToString());
    return cancelled ? 0 : 3;
  }
  if (dry) {  // nothing was computed; what the host does for a lookup on this layout can be timed
    if (st.ok()) out->Arr("host_lookup", HostLookupCost(**region, spec));
    return 0;
  }
  bool ok = true;
  out->Obj("sampled_parity", SampledParity(**region, spec, static_cast<int>(c.flags.Num("samples", 24)), &ok));
  (*region)->Release();
  return ok ? 0 : 1;
}

// Buffers of one lookup shape experiment: the addresses and the labels each in mapped pinned host
// memory (what DeviceRegion uses) or in device memory, and a device table the addresses point into.
struct ShapeBuffers {
  GpuRuntime* runtime = nullptr;
  int device = 0;
  void* table = nullptr;  // device memory the labels are read from
  uint64_t table_bytes = 0;
  void* host[2] = {nullptr, nullptr};      // mapped pinned: addresses, labels (host pointer)
  void* host_dev[2] = {nullptr, nullptr};  // the same, as the device sees them
  void* dev[2] = {nullptr, nullptr};       // device memory: addresses, labels
  ~ShapeBuffers() {
    for (int i = 0; i < 2; ++i) {
      if (host[i] != nullptr) runtime->FreeMappedHost(device, host[i]);
      if (dev[i] != nullptr) runtime->Free(device, dev[i]);
    }
    if (table != nullptr) runtime->Free(device, table);
  }
};

// Where a lookup's time goes on the device side, and which kernel shape is faster: the lookup
// kernel launched and waited for (GpuRuntime::RunLookup, no host staging) with 1 or 8 threads a
// label, its addresses and labels each in mapped pinned host memory (what DeviceRegion does) or in
// device memory (copied in and out untimed), q = 256 and 4096 labels at random 32-byte places in a
// device table. Also the host's own share: writing the 2q addresses into the mapped buffer and
// copying the q labels out of it. Each shape's bytes are compared with the one-thread shape's
// (same_bytes). docs/benchmarks.md "Lookup shapes".
Json LookupShapes(Context& c, int iterations, std::mt19937_64& rng, bool* ok) {
  constexpr uint32_t kMaxQ = 4096;
  ShapeBuffers b;
  b.runtime = c.runtime;
  b.device = c.device;
  uint64_t free_bytes = 0, total_bytes = 0;
  Status st = c.runtime->MemoryInfo(c.device, &free_bytes, &total_bytes);
  b.table_bytes =
      std::max<uint64_t>(uint64_t{1} << 20, std::min<uint64_t>(uint64_t{256} << 20, free_bytes / 4)) / 4096 * 4096;
  const uint64_t bytes[2] = {2ull * kMaxQ * 8, kMaxQ * 32ull};
  if (st.ok()) st = c.runtime->Allocate(c.device, b.table_bytes, &b.table);
  for (int i = 0; i < 2 && st.ok(); ++i) {
    st = c.runtime->AllocateMappedHost(c.device, bytes[i], &b.host[i], &b.host_dev[i]);
    if (st.ok()) st = c.runtime->Allocate(c.device, bytes[i], &b.dev[i]);
  }
  void* queue = nullptr;
  if (st.ok()) st = c.runtime->CreateLookupQueue(c.device, &queue);
  if (!st.ok()) return Json().Str("error", st.ToString());
  std::vector<Json> rows;
  std::vector<uint64_t> addresses(2 * kMaxQ);
  std::vector<uint8_t> labels(kMaxQ * 32ull), reference(kMaxQ * 32ull);
  const uint64_t table = reinterpret_cast<uint64_t>(b.table);
  const uint64_t halves = b.table_bytes / 16;
  auto draw = [&](uint32_t q) {
    for (uint32_t i = 0; i < 2 * q; ++i) addresses[i] = table + (rng() % halves) * 16;
  };
  for (uint32_t q : {256u, 4096u}) {
    // The host's share: staging the addresses into mapped memory, copying the labels out of it.
    std::vector<double> stage_us, copy_us;
    for (int i = 0; i < iterations; ++i) {
      draw(q);
      auto t0 = Clock::now();
      std::memcpy(b.host[0], addresses.data(), 2ull * q * 8);
      stage_us.push_back(Since(t0) * 1e6);
      LookupArgs args;
      args.addresses = static_cast<const uint64_t*>(b.host_dev[0]);
      args.out = static_cast<uint32_t*>(b.host_dev[1]);
      args.n = q;
      st = c.runtime->RunLookup(c.device, args, queue);
      if (!st.ok()) break;
      t0 = Clock::now();
      std::memcpy(labels.data(), b.host[1], q * 32ull);
      copy_us.push_back(Since(t0) * 1e6);
    }
    if (!st.ok()) break;
    std::sort(stage_us.begin(), stage_us.end());
    std::sort(copy_us.begin(), copy_us.end());
    rows.push_back(Json()
                       .Str("part", "host: addresses into mapped memory, labels out of it")
                       .Int("q", q)
                       .Num("stage_p50_us", Quantile(stage_us, 0.5))
                       .Num("copy_out_p50_us", Quantile(copy_us, 0.5)));
    for (const bool addresses_on_device : {false, true}) {
      for (const bool labels_on_device : {false, true}) {
        for (const uint32_t threads : {1u, 8u}) {
          LookupArgs args;
          args.addresses = static_cast<const uint64_t*>(addresses_on_device ? b.dev[0] : b.host_dev[0]);
          args.out = static_cast<uint32_t*>(labels_on_device ? b.dev[1] : b.host_dev[1]);
          args.n = q;
          args.threads_per_label = threads;
          std::vector<double> us;
          bool same = true;
          for (int i = 0; i < iterations + 10 && st.ok(); ++i) {
            draw(q);
            std::memcpy(b.host[0], addresses.data(), 2ull * q * 8);
            if (addresses_on_device) st = c.runtime->CopyToDevice(c.device, b.dev[0], addresses.data(), 2ull * q * 8);
            if (!st.ok()) break;
            const auto t0 = Clock::now();
            st = c.runtime->RunLookup(c.device, args, queue);
            const double t = Since(t0) * 1e6;
            if (i >= 10) us.push_back(t);
            if (st.ok() && i == 0) {  // the bytes, against one thread a label, host buffers
              if (labels_on_device) {
                st = c.runtime->CopyToHost(c.device, labels.data(), b.dev[1], q * 32ull);
              } else {
                std::memcpy(labels.data(), b.host[1], q * 32ull);
              }
              LookupArgs ref;
              ref.addresses = static_cast<const uint64_t*>(b.host_dev[0]);
              ref.out = static_cast<uint32_t*>(b.host_dev[1]);
              ref.n = q;
              if (st.ok()) st = c.runtime->RunLookup(c.device, ref, queue);
              std::memcpy(reference.data(), b.host[1], q * 32ull);
              same = std::memcmp(labels.data(), reference.data(), q * 32ull) == 0;
            }
          }
          if (!st.ok()) break;
          std::sort(us.begin(), us.end());
          if (!same) *ok = false;
          rows.push_back(Json()
                             .Str("part", "device: launch and wait")
                             .Int("q", q)
                             .Int("threads_per_label", threads)
                             .Str("addresses_in", addresses_on_device ? "device" : "mapped-host")
                             .Str("labels_in", labels_on_device ? "device" : "mapped-host")
                             .Int("rounds", us.size())
                             .Num("p50_us", Quantile(us, 0.5))
                             .Num("p99_us", Quantile(us, 0.99))
                             .Bool("same_bytes", same));
          std::fprintf(stderr,
                       "lookup shape q=%u, %u thread(s) a label, addresses in %s, labels in %s: p50 %.1f us%s\n", q,
                       threads, addresses_on_device ? "device" : "mapped host",
                       labels_on_device ? "device" : "mapped host", Quantile(us, 0.5), same ? "" : " WRONG BYTES");
        }
      }
    }
  }
  c.runtime->DestroyLookupQueue(c.device, queue);
  Json j;
  j.Arr("rows", rows).Int("table_bytes", b.table_bytes);
  if (!st.ok()) j.Str("error", st.ToString());
  return j;
}

// Where a lookup's time goes on this region, in each mode (the host or the kernel placing the
// halves; one or eight threads a label): DeviceRegion::LookupInParts (the host's staging, the
// device's launch and wait, the copy out), the modes alternating call by call so that all see the
// same machine. The labels of every mode are compared with the first's (same_bytes).
std::vector<Json> LookupPartsRows(const DeviceRegion& region, uint64_t count, int n, std::mt19937_64& rng, bool* ok) {
  using Mode = DeviceRegion::LookupMode;
  std::vector<Mode> modes = {{false, 1}, {false, 8}};
  if (region.lookup_mode().places_on_device) modes.insert(modes.end(), {{true, 1}, {true, 8}});
  std::vector<Json> rows;
  for (uint32_t q : {256u, 4096u}) {
    std::vector<uint64_t> idx(q);
    std::vector<std::vector<uint8_t>> labels(modes.size(), std::vector<uint8_t>(q * 32ull));
    std::vector<std::array<std::vector<double>, 4>> parts(modes.size());  // stage, device, copy out, total
    bool same = true;
    for (int i = 0; i < n + 10; ++i) {
      for (auto& g : idx) g = rng() % count;
      for (size_t s = 0; s < modes.size(); ++s) {
        DeviceRegion::LookupParts p;
        const Status st = region.LookupInParts(idx.data(), q, modes[s], labels[s].data(), &p);
        if (!st.ok()) return {Json().Str("error", st.ToString())};
        same = same && labels[s] == labels[0];
        if (i < 10) continue;
        parts[s][0].push_back(p.stage_us);
        parts[s][1].push_back(p.device_us);
        parts[s][2].push_back(p.copy_out_us);
        parts[s][3].push_back(p.stage_us + p.device_us + p.copy_out_us);
      }
    }
    if (!same) *ok = false;
    for (size_t s = 0; s < modes.size(); ++s) {
      for (auto& v : parts[s]) std::sort(v.begin(), v.end());
      const char* placed = modes[s].places_on_device ? "device" : "host";
      rows.push_back(Json()
                         .Int("q", q)
                         .Str("halves_placed_by", placed)
                         .Int("threads_per_label", modes[s].threads_per_label)
                         .Int("rounds", parts[s][0].size())
                         .Num("stage_p50_us", Quantile(parts[s][0], 0.5))
                         .Num("device_p50_us", Quantile(parts[s][1], 0.5))
                         .Num("copy_out_p50_us", Quantile(parts[s][2], 0.5))
                         .Num("total_p50_us", Quantile(parts[s][3], 0.5))
                         .Num("total_p99_us", Quantile(parts[s][3], 0.99))
                         .Bool("same_bytes", same));
      std::fprintf(stderr,
                   "lookup parts q=%u, halves placed by the %s, %u thread(s) a label: stage %.1f + device %.1f + "
                   "copy out %.1f us (p50s)%s\n",
                   q, placed, modes[s].threads_per_label, Quantile(parts[s][0], 0.5), Quantile(parts[s][1], 0.5),
                   Quantile(parts[s][2], 0.5), same ? "" : " WRONG BYTES");
    }
  }
  return rows;
}

int StepLookup(Context& c, Json* out) {
  const uint32_t m = static_cast<uint32_t>(c.flags.Num("m", 1 << 14));
  const uint64_t bytes = static_cast<uint64_t>(c.flags.Num("gib", 4) * kGiB);
  const int iterations = static_cast<int>(c.flags.Num("iterations", 1000));
  auto region = DeviceRegion::Acquire(c.runtime, c.device, RegionOptionsFrom(c.flags, bytes));
  if (!region.ok()) {
    out->Str("error", region.status().ToString());
    return 3;
  }
  const uint64_t count = (*region)->label_capacity() / m * m;
  const RegionSpec spec = MakeSpec(LabelFormat::kC1, m, 0, count, 2);
  FillStats stats;
  Status st = (*region)->Fill(spec, TuningFrom(c.flags), {}, &stats);
  out->Int("m", m).Int("labels", count).Num("fill_seconds", stats.seconds);
  if (!st.ok()) {
    out->Str("error", st.ToString());
    return 3;
  }
  bool ok = true;
  out->Obj("correctness", SampledParity(**region, spec, 64, &ok));
  std::mt19937_64 rng(5);
  std::vector<Json> rounds;
  for (uint32_t q : {1u, 64u, 256u, 4096u}) {
    Status error;
    const int n = q >= 4096 ? std::max(1, iterations / 4) : iterations;
    const std::vector<double> us = TimeLookups(**region, 0, count, q, n, rng, &error);
    if (!error.ok()) {
      out->Str("error", error.ToString());
      return 3;
    }
    auto pct = [&](double p) { return Quantile(us, p); };
    Json r;
    r.Int("q", q)
        .Int("rounds", us.size())
        .Num("p50_us", pct(0.5))
        .Num("p90_us", pct(0.9))
        .Num("p99_us", pct(0.99))
        .Num("p999_us", pct(0.999))
        .Num("max_us", us.back());
    rounds.push_back(r);
    std::fprintf(stderr, "lookup q=%u p50 %.1f us p99 %.1f us\n", q, pct(0.5), pct(0.99));
  }
  out->Arr("latency", rounds)
      .Str("measured", "host clock around DeviceRegion::Lookup (copy in, kernel, sync, copy out)");
  out->Arr("parts", LookupPartsRows(**region, count, std::max(20, iterations / 2), rng, &ok));
  out->Obj("kernel_shapes", LookupShapes(c, std::max(20, iterations / 4), rng, &ok));
  c.checkpoint(*out);

  // A round over several devices starts every device's lookup, then waits for each (the agent's
  // round path, AnswerRound). Here up to 8 regions of this one device, each with its own lookup
  // queue (stream): q = 256 labels on 1 and on 8 regions, started together, then waited for.
  constexpr int kRegions = 8;
  constexpr uint32_t kQ = 256;
  const uint64_t small_count = std::max<uint64_t>(m, (uint64_t{64} << 20) / 32 / m * m);  // 64 MiB each
  std::vector<std::unique_ptr<DeviceRegion>> extra;
  std::vector<RegionSpec> extra_specs;
  for (int k = 1; k < kRegions; ++k) {
    auto r = DeviceRegion::Acquire(c.runtime, c.device, RegionOptionsFrom(c.flags, small_count * 32));
    if (!r.ok()) {
      out->Str("together_error", r.status().ToString());
      return ok ? 0 : 1;
    }
    const RegionSpec s = MakeSpec(LabelFormat::kC1, m, count + (k - 1) * small_count, small_count, 2);
    Status filled = (*r)->Fill(s, TuningFrom(c.flags), {}, nullptr);
    if (!filled.ok()) {
      out->Str("together_error", filled.ToString());
      return ok ? 0 : 1;
    }
    extra.push_back(std::move(r).value());
    extra_specs.push_back(s);
  }
  std::vector<Json> together;
  for (int regions : {1, kRegions}) {
    std::vector<std::vector<uint64_t>> idx(regions, std::vector<uint64_t>(kQ));
    std::vector<std::vector<uint8_t>> labels(regions, std::vector<uint8_t>(kQ * 32ull));
    std::vector<double> us;
    for (int i = 0; i < iterations + 10; ++i) {
      for (int k = 0; k < regions; ++k) {
        const RegionSpec& s = k == 0 ? spec : extra_specs[k - 1];
        for (auto& g : idx[k]) g = s.first + rng() % s.count;
      }
      const auto t0 = Clock::now();
      Status ls;
      for (int k = 0; k < regions && ls.ok(); ++k) {
        ls = (k == 0 ? **region : *extra[k - 1]).StartLookup(idx[k].data(), kQ, labels[k].data());
      }
      for (int k = 0; k < regions; ++k) {
        Status fs = (k == 0 ? **region : *extra[k - 1]).FinishLookup();
        if (ls.ok()) ls = fs;
      }
      const double t = Since(t0) * 1e6;
      if (!ls.ok()) {
        out->Str("together_error", ls.ToString());
        return 3;
      }
      if (i >= 10) us.push_back(t);
    }
    std::sort(us.begin(), us.end());
    auto pct = [&](double p) { return Quantile(us, p); };
    Json r;
    r.Int("regions", regions).Int("q_per_region", kQ).Int("rounds", us.size()).Num("p50_us", pct(0.5))
        .Num("p99_us", pct(0.99)).Num("p999_us", pct(0.999)).Num("max_us", us.back());
    together.push_back(r);
    std::fprintf(stderr, "lookup together: %d region(s) x q=%u p50 %.1f us p99 %.1f us\n", regions, kQ, pct(0.5),
                 pct(0.99));
  }
  out->Arr("together", together)
      .Str("together_measured",
           "host clock from the first StartLookup to the last FinishLookup, each region on its own lookup stream");
  out->Obj("together_modelled", LookupModelJson(kQ));
  return ok ? 0 : 1;
}

std::unique_ptr<GpuRuntime> MakeRuntime(const std::string& name, const Flags& flags, std::string* why) {
  if (name == "emulated") {
    EmulatedGpuConfig config;
    config.total_bytes = 1ull << 30;
    config.multiprocessors = 2;
    return std::make_unique<EmulatedRuntime>(config);
  }
  if (name == "dry-run") {
    // The planner on a device of a named shape (--gpu, default h200); nothing is computed.
    GpuShape shape;
    if (!GpuShapeByName(flags.Get("gpu", "h200"), &shape)) {
      *why = "unknown --gpu '" + flags.Get("gpu", "") + "' (h200, h100, mi300x)";
      return nullptr;
    }
    return std::make_unique<EmulatedRuntime>(DryRunConfigFor(shape));
  }
#if defined(WIPEPROOF_HAVE_CUDA)
  if (name == "cuda") return MakeCudaRuntime();
#endif
#if defined(WIPEPROOF_HAVE_HIP)
  if (name == "hip") return MakeHipRuntime();
#endif
  *why = "runtime '" + name + "' is not built in";
  return nullptr;
}

int Main(int argc, char** argv) {
  const auto t0 = Clock::now();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h" || a == "help") {
      std::printf("%s", kUsage);
      return 0;
    }
  }
  Flags flags;
  const std::string usage_error = ParseFlags(argc, argv, &flags);
  const std::string step = flags.positional.empty() ? "info" : flags.positional[0];
  Json out;
  out.Str("tool", "wipeproof-gpu-check").Int("schema", 1).Str("step", step);
  // The result on stdout and, unless the command line was refused, in --json (a file that cannot be
  // written is exit 3, said on stderr).
  auto finish = [&](int rc, const std::string& status) {
    out.Str("status", status).Int("exit_code", rc).Num("seconds", Since(t0));
    const std::string text = out.Dump();
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
    if (flags.Has("json") && status != "usage") {
      std::ofstream f(flags.Get("json", ""));
      f << text << "\n";
      f.flush();
      if (!f) {
        std::fprintf(stderr, "wipeproof-gpu-check: cannot write --json=%s\n", flags.Get("json", "").c_str());
        return rc == 0 ? 3 : rc;
      }
    }
    return rc;
  };
  if (!usage_error.empty()) {
    out.Str("error", usage_error);
    return finish(2, "usage");
  }
  // The dry run plans; it computes no label, so parity, lookup and compress would report nonsense.
  if (flags.Get("runtime", "auto") == "dry-run" && step != "fill" && step != "info") {
    out.Str("error", "--runtime=dry-run plans a fill and computes nothing: use it with fill (or info)");
    return finish(2, "usage");
  }
  if (step == "model") {  // the device model alone: no runtime, no device
    ModelAssumptions a;   // --issue-efficiency etc.: the model's sensitivity to its assumptions
    a.issue_efficiency = flags.Num("issue-efficiency", a.issue_efficiency);
    a.instructions_per_item = flags.Num("instructions-per-item", a.instructions_per_item);
    a.step_latency_cycles = flags.Num("step-latency-cycles", a.step_latency_cycles);
    const int rc = StepModel(flags.Get("gpu", "all"), a, &out);
    return finish(rc, rc == 0 ? "ok" : "usage");
  }
  // auto: the first built runtime that sees a device.
  std::vector<std::string> names;
  const std::string wanted = flags.Get("runtime", "auto");
  if (wanted == "auto") {
#if defined(WIPEPROOF_HAVE_CUDA)
    names.push_back("cuda");
#endif
#if defined(WIPEPROOF_HAVE_HIP)
    names.push_back("hip");
#endif
  } else {
    names.push_back(wanted);
  }
  std::unique_ptr<GpuRuntime> runtime;
  std::string runtime_name;
  std::vector<Json> tried;
  for (const auto& n : names) {
    std::string why;
    auto rt = MakeRuntime(n, flags, &why);
    if (!rt && n == "dry-run") {  // a dry run of no known shape (--gpu=all: that is the model step's)
      out.Str("error", why + " (a dry-run fill takes one shape; `model --gpu=all` models them all)");
      return finish(2, "usage");
    }
    int count = 0;
    if (rt) {
      Status st = rt->DeviceCount(&count);
      why = st.ok() ? (count > 0 ? "" : "no device") : st.ToString();
    }
    Json t;
    t.Str("runtime", n).Int("devices", count);
    if (!why.empty()) t.Str("why", why);
    tried.push_back(t);
    if (rt && count > 0) {
      runtime = std::move(rt);
      runtime_name = n;
      break;
    }
  }
  if (names.empty()) {
    Json t;
    t.Str("runtime", "none").Str("why", "built without CUDA and HIP (use --runtime=emulated for the CPU)");
    tried.push_back(t);
  }
  out.Arr("runtimes_tried", tried);
  if (!runtime) return finish(0, "no_device");
  Context c;
  c.runtime = runtime.get();
  c.runtime_name = runtime_name;
  c.device = static_cast<int>(flags.Num("device", 0));
  c.flags = flags;
  c.checkpoint = [&flags](const Json& partial) {
    if (!flags.Has("json")) return;
    Json j = partial;
    std::ofstream f(flags.Get("json", ""));
    f << j.Str("status", "partial").Dump() << "\n";
  };
  out.Str("runtime", runtime_name == "dry-run" ? "dry-run" : runtime->name());  // (a dry run is an emulation)
  Status st = runtime->Properties(c.device, &c.props);
  if (!st.ok()) {
    out.Str("error", st.ToString());
    return finish(3, "error");
  }
  out.Obj("device", PropsJson(c.props));
  int rc = 2;
  if (step == "info") {
    rc = StepInfo(c, &out);
  } else if (step == "compress") {
    rc = StepCompress(c, &out);
  } else if (step == "parity") {
    rc = StepParity(c, &out);
  } else if (step == "fill") {
    rc = StepFill(c, &out);
  } else if (step == "lookup") {
    rc = StepLookup(c, &out);
  } else {
    out.Str("error", "unknown step '" + step + "' (info, parity, fill, lookup, compress, model)");
  }
  return finish(rc, rc == 0 ? "ok" : rc == 1 ? "fail" : rc == 2 ? "usage" : "error");
}

}  // namespace
}  // namespace gpu
}  // namespace wipeproof

int main(int argc, char** argv) { return wipeproof::gpu::Main(argc, argv); }
