#include "challenger/session/round_costs.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace wipeproof {
namespace {

uint64_t RusageNs(int who) {
  struct rusage u {};
  if (getrusage(who, &u) != 0) return 0;
  auto ns = [](const timeval& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(t.tv_usec) * 1'000ull;
  };
  return ns(u.ru_utime) + ns(u.ru_stime);
}

// `ns` as microseconds with 3 decimals.
std::string Us(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                static_cast<unsigned long long>(ns % 1000));
  return buf;
}

std::string Figure(const CostHistogram& h) {
  return "{\"count\": " + std::to_string(h.count()) + ", \"p50_us\": " + Us(h.Quantile(0.5)) +
         ", \"p99_us\": " + Us(h.Quantile(0.99)) + ", \"p999_us\": " + Us(h.Quantile(0.999)) +
         ", \"max_us\": " + Us(h.max()) + "}";
}

}  // namespace

uint64_t SteadyNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

uint64_t ThreadCpuNs() {
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(t.tv_nsec);
}

uint64_t ThreadRusageCpuNs() { return RusageNs(RUSAGE_THREAD); }
uint64_t ProcessRusageCpuNs() { return RusageNs(RUSAGE_SELF); }

size_t CostHistogram::BucketOf(uint64_t v) {
  if (v < kExact) return static_cast<size_t>(v);
  const int e = 63 - __builtin_clzll(v);  // 6..63
  const uint64_t sub = (v >> (e - 5)) & (kSteps - 1);
  return kExact + static_cast<size_t>(e - 6) * kSteps + static_cast<size_t>(sub);
}

uint64_t CostHistogram::UpperEdge(size_t bucket) {
  if (bucket < kExact) return bucket;
  const int e = 6 + static_cast<int>((bucket - kExact) / kSteps);
  const uint64_t sub = (bucket - kExact) % kSteps;
  const uint64_t step = uint64_t{1} << (e - 5);
  return (uint64_t{1} << e) + sub * step + (step - 1);
}

void CostHistogram::Add(uint64_t v) {
  ++buckets_[BucketOf(v)];
  ++count_;
  max_ = std::max(max_, v);
  sum_ += v;
}

uint64_t CostHistogram::Quantile(double q) const {
  if (count_ == 0) return 0;
  if (q >= 1) return max_;
  const double want = std::ceil(std::max(q, 0.0) * static_cast<double>(count_));
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(want));
  uint64_t seen = 0;
  for (size_t b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (seen >= rank) return std::min(UpperEdge(b), max_);
  }
  return max_;
}

void RoundCostStats::Add(const SessionCosts& session) {
  std::lock_guard<std::mutex> lock(mu_);
  ++s_.sessions;
  s_.thread_cpu_ns += session.thread_cpu_ns;
  s_.loop_turns += session.loop_turns;
  bool first = true;
  for (const RoundCost& r : session.rounds) {
    ++s_.rounds;
    s_.build.Add(r.build_ns);
    s_.build_cpu.Add(r.build_cpu_ns);
    s_.send.Add(r.send_ns);
    if (!r.answered) continue;
    ++s_.answered;
    s_.check.Add(r.check_ns);
    s_.check_cpu.Add(r.check_cpu_ns);
    s_.added.Add(r.build_ns + r.check_ns);
    s_.added_cpu.Add(r.build_cpu_ns + r.check_cpu_ns);
    (first ? s_.added_first : s_.added_after_first).Add(r.build_ns + r.check_ns);
    first = false;
    s_.round.Add(r.round_ns);
    s_.transcript.Add(r.transcript_ns);
    if (r.wave_report_ns > 0) s_.wave_report.Add(r.wave_report_ns);
  }
  if (!session.rounds.empty() && session.thread_cpu_ns > 0) {
    s_.session_cpu_per_round.Add(session.thread_cpu_ns / session.rounds.size());
  }
}

void RoundCostStats::AddSharedThreadCpu(uint64_t cpu_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  s_.thread_cpu_ns += cpu_ns;
}

RoundCostStats::Summary RoundCostStats::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return s_;
}

std::string RoundCostStats::Json(uint64_t process_cpu_ns) const {
  const Summary s = Snapshot();
  std::string out = "{\"sessions\": " + std::to_string(s.sessions) + ", \"rounds\": " + std::to_string(s.rounds) +
                    ", \"answered\": " + std::to_string(s.answered);
  out += ", \"added\": " + Figure(s.added) + ", \"added_cpu\": " + Figure(s.added_cpu);
  out += ", \"added_first_round\": " + Figure(s.added_first) +
         ", \"added_after_first_round\": " + Figure(s.added_after_first);
  out += ", \"build\": " + Figure(s.build) + ", \"build_cpu\": " + Figure(s.build_cpu);
  out += ", \"send\": " + Figure(s.send);
  out += ", \"check\": " + Figure(s.check) + ", \"check_cpu\": " + Figure(s.check_cpu);
  out += ", \"round\": " + Figure(s.round);
  out += ", \"transcript\": " + Figure(s.transcript) + ", \"wave_report\": " + Figure(s.wave_report);
  out += ", \"session_thread_cpu_us\": " + Us(s.thread_cpu_ns);
  out += ", \"session_thread_cpu_us_per_round\": " + Us(s.rounds == 0 ? 0 : s.thread_cpu_ns / s.rounds);
  out += ", \"session_cpu_per_round\": " + Figure(s.session_cpu_per_round);
  out += ", \"loop_turns\": " + std::to_string(s.loop_turns);
  if (process_cpu_ns > 0) {
    out += ", \"process_cpu_us\": " + Us(process_cpu_ns);
    out += ", \"process_cpu_us_per_round\": " + Us(s.rounds == 0 ? 0 : process_cpu_ns / s.rounds);
  }
  out += "}";
  return out;
}

}  // namespace wipeproof
