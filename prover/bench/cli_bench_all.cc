// `bench --what=all`: the node profile calibration reads (docs/calibration.md "The node profile").
// On every device of every backend this node has (host memory, CUDA, HIP):
//   - the known answer through the device's own fill and lookup (as every benchmark);
//   - the fill rate at each m of --fill_chunk_labels: acquire --fill_gib (host default 0.125 GiB,
//     GPUs 16 GiB), fill it with whole chunks of a fresh seed (the --what=fill path), spot-check
//     one chunk against RecomputeChunk, release;
//   - lookup latency: --lookup_samples lookups of --lookup_labels random labels each (q of a round)
//     from the memory of the last fill, percentiles in microseconds (agent-side, no network);
//   - one chunk alone at the largest m: the device's own latency to label one chunk, and that time
//     per sequential node step (1.5 m c_node steps): what this node would take to recompute one
//     discarded chunk with its fill code (an upper bound on its best sequential compression time).
// On the host also: a latency-bound chain of BLAKE3 compressions on one core (each one's input is
// the previous one's output), the node's own sequential compression time (the fastest repetition,
// by thread CPU time and by wall time; the profile's figure is the smaller), after checking the
// compression against the BLAKE3 empty-input test vector; and RecomputeChunk on one core at each m
// (the --what=verify figure, wall and thread CPU time).
// "class_warnings" lists each built-in adversary class whose t_min is above the fastest sequential
// compression measured here (host chain, or a GPU's one-chunk step): informational, on stderr too.
// The profile (JSON, stdout) names the machine, devices, software version and date; with
// --node_key it carries the key id and --out receives it signed (proto/node_profile.h).
#include <sodium.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "common/file_write.h"
#include "common/hex.h"
#include "common/numbers.h"
#include "kernels/blake3_compress.h"
#include "kernels/chunk_verifier.h"
#include "kernels/graph_schedule.h"
#include "proto/key_files.h"
#include "proto/node_profile.h"
#include "prover/bench/cli_bench.h"
#include "prover/bench/known_answer.h"
#include "prover/cli/cli.h"
#include "prover/cli/cli_flags.h"

DEFINE_string(fill_chunk_labels, "4096,16384,65536",
              "bench --what=all: comma-separated m values (powers of two) to measure fill rates at");
DEFINE_double(fill_gib, 0,
              "bench --what=all: GiB filled per m on each device; 0 = 0.125 on the host, 16 on GPUs (capped at "
              "what the device has free)");
DEFINE_uint32(lookup_labels, 256, "bench --what=all and rounds: labels per timed lookup (a round's q); default 256");
DEFINE_uint32(lookup_samples, 2000, "bench --what=all: timed lookups per device; default 2000");
DECLARE_string(node_key);
DECLARE_string(out);

namespace wipeproof {
namespace {

constexpr char kName[] = "bench";
constexpr uint64_t kChainCompressions = uint64_t{1} << 21;  // per repetition (~0.1 s)
constexpr int kChainRepetitions = 5;
constexpr uint64_t kRecomputeChunks = 5;  // RecomputeChunk samples per m (the median is reported)
// The challenger's built-in adversary classes (challenger/parameters/adversary_classes.h,
// docs/adversary-classes.json): t_min in picoseconds.
constexpr std::pair<const char*, double> kBuiltInClassTMinPs[] = {{"commodity-cpu", 40000}, {"fpga-asic", 5000}};
// BLAKE3 of the empty input (BLAKE3 specification test vectors; reference_impl.rs): the root
// compression of one empty block, so it checks Blake3Compress as the chain uses it.
constexpr char kBlake3EmptyHex[] = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262";

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

StatusOr<std::vector<uint32_t>> ParseChunkLabelsList(const std::string& text) {
  std::vector<uint32_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || !ChunkLabelsInRange(v) || !IsPowerOfTwo(v)) {
      return InvalidArgumentError("--fill_chunk_labels: '" + item + "' is not a power of two in [1, 1048576]");
    }
    out.push_back(static_cast<uint32_t>(v));
  }
  if (out.empty()) return InvalidArgumentError("--fill_chunk_labels: empty");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string IsoDate(int64_t unix_us) {
  const std::time_t t = static_cast<std::time_t>(unix_us / 1'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "";
}

nlohmann::ordered_json MachineJson() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  utsname u{};
  uname(&u);
  return {{"hostname", host},
          {"cpu_model", CpuModel()},
          {"hardware_threads", EffectiveThreads(0)},
          {"kernel", std::string(u.sysname) + " " + u.release},
          {"arch", u.machine}};
}

// Checks Blake3Compress against the empty-input vector, then times a dependent chain on this core.
// Returns picoseconds per compression (the fastest of the repetitions).
StatusOr<nlohmann::ordered_json> SequentialCompression() {
  uint32_t cv[8], block[16] = {}, out[16];
  for (int i = 0; i < 8; ++i) cv[i] = Blake3IvWord(i);
  Blake3Compress(cv, block, 0, 0, kChunkStart | kChunkEnd | kRoot, out);
  uint8_t bytes[32];
  for (int i = 0; i < 8; ++i) std::memcpy(bytes + 4 * i, &out[i], 4);  // little-endian hosts only
  if (HexEncode(bytes, 32) != kBlake3EmptyHex) {
    return DataLossError(std::string("BLAKE3 compression known answer mismatch: expected ") + kBlake3EmptyHex +
                         ", got " + HexEncode(bytes, 32));
  }
  double best_ps = 0, best_cpu_ps = 0;
  uint32_t sink = 0;
  for (int rep = 0; rep < kChainRepetitions; ++rep) {
    for (int i = 0; i < 8; ++i) cv[i] = Blake3IvWord(i) ^ static_cast<uint32_t>(rep);
    for (int i = 0; i < 16; ++i) block[i] = static_cast<uint32_t>(i * 0x9E3779B9u);
    const double cpu0 = ThreadCpuSeconds();
    const auto t0 = Clock::now();
    for (uint64_t n = 0; n < kChainCompressions; ++n) {
      // Each compression's chaining value is the previous one's output: a chain, like a graph
      // path, that no amount of parallel hardware shortens.
      Blake3Compress(cv, block, n, 64, 0, out);
      std::memcpy(cv, out, sizeof cv);
    }
    const double ps = Since(t0) * 1e12 / static_cast<double>(kChainCompressions);
    const double cpu_ps = (ThreadCpuSeconds() - cpu0) * 1e12 / static_cast<double>(kChainCompressions);
    sink ^= cv[0];
    if (rep == 0 || ps < best_ps) best_ps = ps;
    if (rep == 0 || cpu_ps < best_cpu_ps) best_cpu_ps = cpu_ps;
  }
  // The fastest the core achieved: by CPU time, which a shared machine does not inflate (wall
  // time counts the moments another process had the core). Both are reported.
  const double fastest_ps = std::min(best_ps, best_cpu_ps > 0 ? best_cpu_ps : best_ps);
  nlohmann::ordered_json j;
  j["known_answer"] = {{"case", "BLAKE3(\"\")"}, {"ok", true}};
  j["compressions"] = kChainCompressions;
  j["repetitions"] = kChainRepetitions;
  j["ps_per_compression"] = Sig(fastest_ps, 4);
  j["wall_ps_per_compression"] = Sig(best_ps, 4);
  j["cpu_ps_per_compression"] = Sig(best_cpu_ps, 4);
  j["code"] = "kernels/blake3_compress.h Blake3Compress (portable)";
  j["chain_digest_word"] = sink;  // keeps the chain observable
  return j;
}

// One chunk of `plan` recomputed and compared with the device. Errors: DATA_LOSS naming the label.
Status SpotCheck(const DeviceMemory& memory, const RegionSpec& plan, uint64_t chunk) {
  WP_ASSIGN_OR_RETURN(ChunkOutputs expected,
                      RecomputeChunk(plan.format, plan.seed, plan.chunk_labels, chunk, plan.first + plan.count));
  std::vector<uint64_t> indices(plan.chunk_labels);
  for (uint32_t i = 0; i < plan.chunk_labels; ++i) indices[i] = expected.first_label + i;
  std::vector<uint8_t> got(indices.size() * kLabelBytes);
  WP_RETURN_IF_ERROR(memory.Lookup(indices.data(), indices.size(), got.data()));
  for (size_t i = 0; i < indices.size(); ++i) {
    if (std::memcmp(expected.labels.data() + i * kLabelBytes, got.data() + i * kLabelBytes, kLabelBytes) != 0) {
      return DataLossError("label " + std::to_string(indices[i]) + " on " + memory.device().id + ": expected " +
                           HexEncode(expected.labels.data() + i * kLabelBytes, kLabelBytes) + ", got " +
                           HexEncode(got.data() + i * kLabelBytes, kLabelBytes));
    }
  }
  return Status::Ok();
}

uint64_t RandomBelow(uint64_t bound) {
  uint64_t r;
  randombytes_buf(&r, sizeof r);
  return r % bound;
}

// Lookup latency of `q` uniformly random labels of the filled range, `samples` times.
nlohmann::ordered_json LookupLatency(const DeviceMemory& memory, const RegionSpec& plan, uint32_t q, uint32_t samples,
                                     Status* error) {
  std::vector<uint64_t> indices(q);
  std::vector<uint8_t> out(static_cast<size_t>(q) * kLabelBytes);
  std::vector<double> us;
  us.reserve(samples);
  for (uint32_t s = 0; s < samples; ++s) {
    for (auto& index : indices) index = plan.first + RandomBelow(plan.count);
    const auto t0 = Clock::now();
    Status st = memory.Lookup(indices.data(), indices.size(), out.data());
    const double t = Since(t0) * 1e6;
    if (!st.ok()) {
      *error = st;
      return {};
    }
    us.push_back(t);
  }
  std::sort(us.begin(), us.end());
  auto pct = [&us](double p) { return NearestRankPercentile(us, p); };
  return {{"labels_per_lookup", q},  {"samples", samples},       {"p50_us", Sig(pct(0.5))},
          {"p90_us", Sig(pct(0.9))}, {"p99_us", Sig(pct(0.99))}, {"p999_us", Sig(pct(0.999))},
          {"max_us", Sig(us.back())}};
}

// Everything measured on one device. Errors: acquisition, fill or check failures.
StatusOr<nlohmann::ordered_json> BenchDevice(Backend& backend, const DeviceInfo& device, LabelFormat format,
                                             const std::vector<uint32_t>& ms, int threads) {
  const bool host = device.kind == DeviceKind::kHost;
  const double gib = FLAGS_fill_gib > 0 ? FLAGS_fill_gib : (host ? 0.125 : 16.0);
  uint64_t bytes = static_cast<uint64_t>(gib * kGiB);
  const uint64_t leave = host ? uint64_t{1} << 30 : uint64_t{1} << 30;  // leave 1 GiB for the system/runtime
  if (device.available_bytes > leave) bytes = std::min(bytes, device.available_bytes - leave);
  const KnownAnswer& ka = BenchKnownAnswer(format);
  bytes = std::max<uint64_t>(bytes, ka.count * kLabelBytes);

  nlohmann::ordered_json d;
  d["kind"] = DeviceKindName(device.kind);
  d["id"] = device.id;
  d["name"] = device.name;
  d["total_bytes"] = device.total_bytes;
  d["available_bytes"] = device.available_bytes;
  FillOptions options;
  options.threads = threads;
  nlohmann::ordered_json fills = nlohmann::ordered_json::array();
  for (size_t i = 0; i < ms.size(); ++i) {
    const uint32_t m = ms[i];
    AcquireOptions acquire;
    acquire.bytes = bytes;
    auto t0 = Clock::now();
    auto memory = backend.Acquire(device.id, acquire);
    if (!memory.ok()) return memory.status();
    const double acquire_s = Since(t0);
    DeviceMemory& mem = **memory;
    if (i == 0) {
      WP_RETURN_IF_ERROR(CheckKnownAnswerOnDevice(mem, ka, options));
      d["known_answer"] = {{"case", KnownAnswerName(ka)}, {"sha256", ka.sha256_hex}, {"ok", true}};
    }
    RegionSpec plan;
    plan.format = format;
    randombytes_buf(plan.seed, kSeedBytes);
    plan.chunk_labels = m;
    plan.first = 0;
    plan.count = mem.label_capacity() / m * m;
    if (plan.count == 0) return InvalidArgumentError("--fill_gib holds no chunk of m = " + std::to_string(m));
    std::fprintf(stderr, "bench all: %s: fill %.3f GiB at m = %u\n", device.id.c_str(), plan.count * kLabelBytes / static_cast<double>(kGiB),
                 m);
    const double cpu0 = ProcessCpuSeconds();
    t0 = Clock::now();
    WP_RETURN_IF_ERROR(mem.Fill(plan, options));
    const double fill_s = Since(t0);
    const double fill_cpu_s = ProcessCpuSeconds() - cpu0;
    WP_RETURN_IF_ERROR(SpotCheck(mem, plan, RandomBelow(plan.count / m)));
    const double filled = static_cast<double>(plan.count) * kLabelBytes;
    const ChunkCost cost = ChunkCostFor(format, m, host ? kLanes : 0);
    fills.push_back(
        {{"format", LabelFormatName(format)},
         {"chunk_labels", m},
         {"bytes", plan.count * kLabelBytes},
         {"acquire_s", Sig(acquire_s)},
         {"fill_s", Sig(fill_s)},
         {"fill_cpu_seconds", Sig(fill_cpu_s)},
         {"bytes_per_s", Sig(filled / fill_s)},
         {"gib_per_s", Sig(filled / fill_s / kGiB)},
         {"compressions_per_s", Sig(plan.count / m * cost.nodes_hashed * cost.compressions_per_node / fill_s)},
         {"check", {{"chunks", 1}, {"ok", true}}}});
    if (i + 1 == ms.size()) {
      std::fprintf(stderr, "bench all: %s: %u lookups of %u labels\n", device.id.c_str(), FLAGS_lookup_samples,
                   FLAGS_lookup_labels);
      Status error;
      d["lookup"] = LookupLatency(mem, plan, FLAGS_lookup_labels, FLAGS_lookup_samples, &error);
      if (!error.ok()) return error;
      // One chunk alone: the device's latency to label a single chunk (a recompute).
      RegionSpec one = plan;
      one.count = m;
      t0 = Clock::now();
      WP_RETURN_IF_ERROR(mem.Fill(one, options));
      const double one_us = Since(t0) * 1e6;
      const double depth = 1.5 * m;
      d["one_chunk"] = {{"chunk_labels", m},
                        {"fill_us", Sig(one_us)},
                        {"sequential_depth", static_cast<uint64_t>(depth)},
                        {"step_ps", Sig(one_us * 1e6 / (depth * SequentialCompressionsPerNode(format)))}};
    }
    mem.Release();
  }
  d["fill"] = fills;
  if (!host) {
    auto raw = backend.MeasureCompressionRate(device.id, 1.0);
    if (raw.ok()) d["raw_compressions_per_s"] = Sig(*raw);
  }
  return d;
}

}  // namespace

int RunBenchAll(BenchSetup& setup) {
  auto ms = ParseChunkLabelsList(FLAGS_fill_chunk_labels);
  if (!ms.ok()) return UsageError(kName, ms.status().message());
  if (FLAGS_lookup_labels < 1 || FLAGS_lookup_samples < 1) {
    return UsageError(kName, "--lookup_labels and --lookup_samples must be >= 1");
  }
  if (!(FLAGS_fill_gib >= 0)) return UsageError(kName, "--fill_gib must be >= 0");
  std::optional<proto::KeyPair> node_key;
  if (!FLAGS_node_key.empty()) {
    auto key = proto::ReadSecretKeyFile(FLAGS_node_key);
    if (!key.ok()) return UsageError(kName, CliErrorText(key.status().WithContext("--node_key")));
    node_key = *key;
  }
  if (!FLAGS_out.empty() && !node_key) {
    return UsageError(kName, "--out writes the signed profile: give --node_key (the node's secret key file)");
  }
  const auto start = Clock::now();
  const int64_t now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();

  nlohmann::ordered_json profile;
  profile["format"] = "wipeproof-node-profile-v1";
  if (node_key) profile["node_key_id"] = proto::KeyIdHex(proto::KeyIdOf(node_key->public_key));
  profile["software_version"] = "wipeproof-prover " WIPEPROOF_VERSION_STRING;
  profile["created_at_unix_us"] = now_us;
  profile["created_at"] = IsoDate(now_us);
  profile["machine"] = MachineJson();
  profile["label_format"] = LabelFormatName(setup.format);
  profile["host_simd"] = SimdLevelName(setup.simd);
  profile["threads"] = EffectiveThreads(setup.threads);

  std::fprintf(stderr, "bench all: sequential compression chain on one core\n");
  auto chain = SequentialCompression();
  if (!chain.ok()) return Failure(kName, chain.status());
  profile["host_sequential_compression"] = *chain;

  // RecomputeChunk on one core at each m: the verifier's (and a one-core attacker's) time per chunk.
  uint8_t seed[kSeedBytes];
  randombytes_buf(seed, sizeof seed);
  nlohmann::ordered_json verify = nlohmann::ordered_json::array();
  Status ka_verify = CheckKnownAnswerByRecompute(BenchKnownAnswer(setup.format), setup.simd);
  if (!ka_verify.ok()) return Failure(kName, ka_verify);
  for (uint32_t m : *ms) {
    std::vector<double> ms_each, cpu_ms_each;
    for (uint64_t c = 0; c < kRecomputeChunks; ++c) {
      const double cpu0 = ThreadCpuSeconds();
      const auto t0 = Clock::now();
      auto chunk = RecomputeChunk(setup.format, seed, m, c, (c + 1) * m, setup.simd);
      if (!chunk.ok()) return Failure(kName, chunk.status());
      ms_each.push_back(Since(t0) * 1e3);
      cpu_ms_each.push_back((ThreadCpuSeconds() - cpu0) * 1e3);
    }
    std::sort(ms_each.begin(), ms_each.end());
    std::sort(cpu_ms_each.begin(), cpu_ms_each.end());
    verify.push_back({{"chunk_labels", m},
                      {"ms_per_chunk_median", Sig(ms_each[kRecomputeChunks / 2])},
                      {"ms_per_chunk_min", Sig(ms_each.front())},
                      {"cpu_ms_per_chunk_median", Sig(cpu_ms_each[kRecomputeChunks / 2])},
                      {"chunks", kRecomputeChunks}});
  }
  profile["host_recompute_chunk"] = verify;

  BackendConfig config;
  config.host.simd = setup.simd;
  BackendSet backends = CreateBackends(config);
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const auto& backend : backends.backends) {
    for (const DeviceInfo& device : backend->Devices()) {
      auto d = BenchDevice(*backend, device, setup.format, *ms, setup.threads);
      if (!d.ok()) return Failure(kName, d.status().WithContext(device.id));
      devices.push_back(*d);
    }
  }
  profile["devices"] = devices;
  // Informational: a built-in adversary class whose t_min is above what this node itself achieves
  // does not rule out the node's own hardware. The authority's classes file may differ; calibrate
  // and plan repeat the check against the classes actually used.
  nlohmann::ordered_json class_warnings = nlohmann::ordered_json::array();
  {
    double fastest_ps = (*chain)["ps_per_compression"].get<double>();
    std::string where = "host core";
    for (const auto& d : devices) {
      if (d.contains("one_chunk") && d["kind"] != "host" && d["one_chunk"]["step_ps"].get<double>() < fastest_ps) {
        fastest_ps = d["one_chunk"]["step_ps"].get<double>();
        where = d["id"].get<std::string>() + " one-chunk step";
      }
    }
    for (const auto& [name, t_min_ps] : kBuiltInClassTMinPs) {
      if (fastest_ps > 0 && fastest_ps < t_min_ps) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "class %s assumes no sequential compression faster than %.0f ps, but this node's %s took "
                      "%.0f ps",
                      name, t_min_ps, where.c_str(), fastest_ps);
        class_warnings.push_back(line);
        std::fprintf(stderr, "bench all: warning: %s\n", line);
      }
    }
  }
  profile["class_warnings"] = class_warnings;
  profile["disabled"] = backends.disabled;
  profile["bench_seconds"] = Sig(Since(start));
  const std::string text = profile.dump(2);
  std::printf("%s\n", text.c_str());
  if (node_key) {
    auto signed_doc = proto::SignNodeProfile(text + "\n", *node_key);
    if (!signed_doc.ok()) return Failure(kName, signed_doc.status());
    if (!FLAGS_out.empty()) {
      Status written = WriteFileReplacing(FLAGS_out, *signed_doc);
      if (!written.ok()) return Failure(kName, written);
      std::fprintf(stderr, "bench all: signed profile written to %s (node key %s)\n", FLAGS_out.c_str(),
                   proto::KeyIdHex(proto::KeyIdOf(node_key->public_key)).c_str());
    }
  }
  return kExitOk;
}

}  // namespace wipeproof
