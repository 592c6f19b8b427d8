#include "challenger/fleet/wave_service.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <optional>
#include <ostream>
#include <thread>

#include "challenger/fleet/lifecycle_spec.h"
#include "challenger/fleet/outcome_report.h"
#include "challenger/fleet/scheduler.h"
#include "challenger/fleet/wave_drain.h"
#include "challenger/ledger/ledger_records.h"
#include "common/clock.h"
#include "common/cli_exit_codes.h"
#include "common/numbers.h"
#include "common/peer_text.h"
#include "common/terminal_text.h"
#include "proto/codec.h"

namespace wipeproof {

namespace {

constexpr char kPrefix[] = "wipeproof-challenger serve: ";

// Sleeps until `until` in short steps; false when told to stop meanwhile.
bool SleepUnlessStopped(std::chrono::steady_clock::time_point until, const std::atomic<bool>& stop) {
  while (!stop.load()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(100)));
  }
  return false;
}

// The wall-clock time in UTC to the second, e.g. "2026-12-02T05:50:00Z".
std::string UtcSeconds(int64_t unix_us) { return FormatUnixMicrosUtc(unix_us).substr(0, 19) + "Z"; }

// A period or jitter in seconds as given: "86400", "0.5".
std::string PlainSeconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", s);
  return buf;
}

// The longest a prepared run can take once started: its sessions' timeout, plus for a member with
// a drain hook its lifecycle steps at their longest (wave_drain.h LifecycleLongestS).
uint64_t MaxRunUs(const PreparedWave& prepared) {
  uint64_t session_us = 0, lifecycle_us = 0;
  for (const auto& s : prepared.sessions) {
    if (s) session_us = std::max(session_us, s->plan.session_timeout_us);
  }
  for (const auto& l : prepared.lifecycles) {
    if (l && l->kind != LifecycleKind::kNone) {
      lifecycle_us = std::max(lifecycle_us, static_cast<uint64_t>(LifecycleLongestS(*l) * 1e6));
    }
  }
  return session_us + lifecycle_us;
}

}  // namespace

// A wave run's members by outcome, for its end line.
struct WaveService::RunCounts {
  int pass = 0, fail = 0, busy = 0, error = 0;
};

WaveService::WaveService(const Inventory& inventory, const std::vector<const Wave*>& waves, const Profile& profile,
                         const SessionKeys& keys, Ledger& ledger, const TcpSessionOptions& session_options,
                         const WaveServiceOptions& options, FleetMetrics* metrics, std::ostream& out,
                         std::ostream& err)
    : inventory_(inventory),
      waves_(waves),
      profile_(profile),
      keys_(keys),
      ledger_(ledger),
      sink_(&ledger),
      session_options_(session_options),
      options_(options),
      metrics_(metrics),
      out_(out),
      err_(err) {
  // Draining and resuming nodes (the inventory's lifecycle) is reported as it happens (escaped and
  // cut by WaveDrain).
  session_options_.lifecycle_notice = [this](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    err_ << line << "\n";
  };
}

WaveService::RunCounts WaveService::ReportRun(const Wave& wave, const std::vector<WaveMemberResult>& results) {
  std::lock_guard<std::mutex> lock(mu_);
  RunCounts counts;
  for (const WaveMemberResult& r : results) {
    if (metrics_ != nullptr) metrics_->OnMemberResult(r, SystemClock().UnixMicros());
    ++totals_.sessions;
    if (!r.outcome.ok()) {
      ++totals_.failures;
      ++counts.error;
      err_ << kPrefix << "wave " << TerminalSafe(wave.name) << " node " << TerminalSafe(r.node)
           << ": no session: " << PeerText(CliErrorText(r.outcome.status()))  // a scheduler's text: cut
           << "\n";
      continue;
    }
    const SessionOutcome& o = *r.outcome;
    // A node refusing as busy is a failed wipe: serve runs one session per node at a time, so it has
    // none there (outcome_report.h). Refusals in a row escalate to an error line.
    const bool busy = IsBusyRefusal(o);
    uint32_t& in_a_row = busy_in_a_row_[r.node];
    in_a_row = busy ? in_a_row + 1 : 0;
    if (busy) {
      ++totals_.busy;
      ++counts.busy;
      err_ << kPrefix << "wave " << TerminalSafe(wave.name) << " node " << TerminalSafe(r.node)
           << ": busy (its agent says it runs another session; this challenger has none there): not wiped, counted "
              "as a failed wipe ("
           << in_a_row << " in a row)\n";
      if (in_a_row >= kBusyEscalation) {
        err_ << kPrefix << "ERROR: node " << TerminalSafe(r.node) << " has refused " << in_a_row
             << " orders in a row as busy: its wipes keep failing; find what else drives its agent, or whether it "
                "refuses on purpose\n";
      }
    } else {
      ++(o.pass ? counts.pass : counts.fail);
    }
    if (!o.pass || !o.ledger.ok()) ++totals_.failures;
    const std::string summary = OutcomeSummary(o, options_.ledger_path);
    if (options_.json) {
      err_ << summary;
      // Invalid UTF-8 is replaced, never thrown over (verdict text is sanitized already).
      out_ << OutcomeJson(o, options_.ledger_path)
                  .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
           << std::endl;
    } else {
      out_ << summary << std::endl;
    }
  }
  return counts;
}

uint64_t WaveService::EstimatePrepareUs(const Wave& wave) {
  double label_us = 0;
  {
    std::lock_guard<std::mutex> lock(label_us_mu_);
    if (!label_us_) label_us_ = MeasureExpectedLabelUs(profile_, session_options_.threads);
    label_us = *label_us_;
  }
  const uint64_t labels = ChallengedLabels(PlanWave(inventory_, wave, profile_, *session_options_.clock));
  return static_cast<uint64_t>(static_cast<double>(labels) * label_us);
}

PreparedWave WaveService::Prepare(const Wave& wave, bool shown, uint64_t hold_close_us) {
  if (shown) ++preparing_;
  PreparedWave p = PrepareWave(inventory_, wave, profile_, session_options_, hold_close_us);
  if (shown) --preparing_;
  return p;
}

// One run of a prepared wave: counted and reported however it fails; the schedule (and the other
// waves) go on.
bool WaveService::RunOnce(const Wave& wave, PreparedWave prepared) {
  Status wave_room = ledger_.CheckRoomForSession(kSessionLedgerBytes * wave.nodes.size());
  if (!wave_room.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++totals_.failures;
    err_ << kPrefix << "wave " << TerminalSafe(wave.name) << " not run: " << CliErrorText(wave_room) << "\n";
    return false;
  }
  bool all_passed = false;
  const int64_t started_us = SystemClock().UnixMicros();
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_[wave.name] = started_us + static_cast<int64_t>(MaxRunUs(prepared));
    err_ << kPrefix << "wave " << TerminalSafe(wave.name) << ": run started at " << UtcSeconds(started_us) << ", "
         << wave.nodes.size() << " node(s)" << std::endl;
  }
  try {
    std::optional<proto::SignedEnvelope> wave_verdict;
    const RunCounts counts =
        ReportRun(wave, RunPreparedWave(std::move(prepared), wave, keys_, sink_, session_options_, &wave_verdict));
    all_passed = counts.pass == static_cast<int>(wave.nodes.size());
    {
      const int64_t ended_us = SystemClock().UnixMicros();
      std::lock_guard<std::mutex> lock(mu_);
      err_ << kPrefix << "wave " << TerminalSafe(wave.name) << ": run ended at " << UtcSeconds(ended_us) << " after "
           << FormatFixed((ended_us - started_us) / 1e6, 1) << " s: " << counts.pass << " passed, " << counts.fail
           << " failed, " << counts.busy << " busy, " << counts.error << " without a session" << std::endl;
    }
    if (wave_verdict) {
      auto parsed = proto::ParseMessage<proto::WaveVerdict>(proto::AsView(wave_verdict->payload));
      if (parsed.ok()) {
        if (metrics_ != nullptr) metrics_->OnWaveRun(wave.name, parsed->root().getPass());
        std::lock_guard<std::mutex> lock(mu_);
        err_ << "wave " << TerminalSafe(wave.name) << ": " << (parsed->root().getPass() ? "PASS" : "FAIL") << "; "
             << TerminalSafe(parsed->root().getStatement().cStr()) << "\n";
      }
    }
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mu_);
    ++totals_.failures;
    err_ << kPrefix << "wave " << TerminalSafe(wave.name) << " run failed: " << TerminalSafe(e.what()) << "\n";
  }
  std::lock_guard<std::mutex> lock(mu_);
  running_.erase(wave.name);
  return all_passed;
}

void WaveService::Schedule(const Wave& wave, std::atomic<bool>& stop) {
  using Steady = std::chrono::steady_clock;
  uint64_t delay = options_.once ? 0 : FirstWaveDelayUs(wave.period_s);
  // The estimate of a run's expected labels: the previous run's, or before the first the most a
  // session may hold for every node (kMaxLabelsPerSession labels of 32 bytes).
  uint64_t estimate = wave.nodes.size() * kMaxLabelsPerSession * 32;
  // How long a run takes to prepare: the previous run's, measured; before the first, estimated.
  uint64_t precompute_us = 0;
  bool measured = false;
  const uint64_t ahead_limit = options_.prepare_ahead_bytes;
  for (;;) {
    const Steady::time_point run_at = Steady::now() + std::chrono::microseconds(delay);
    const int64_t next_us = SystemClock().UnixMicros() + static_cast<int64_t>(delay);
    // A held wave: its members hold their labels from this run to the next, whose time is drawn now
    // and kept secret (each window closes at it; the order states only the longest it may be).
    const uint64_t hold_close_us = wave.hold ? std::max<uint64_t>(1, NextWaveDelayUs(wave.period_s, wave.jitter_s)) : 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      err_ << kPrefix << "wave " << TerminalSafe(wave.name) << " (" << wave.nodes.size() << " node(s), period "
           << PlainSeconds(wave.period_s) << " s, jitter " << PlainSeconds(wave.jitter_s) << " s"
           << (wave.hold ? ", held between runs" : "") << "): ";
      if (options_.once) {
        err_ << "one run now (--once: no next run)" << std::endl;
      } else {
        err_ << "next run at " << UtcSeconds(next_us) << " (in " << FormatFixed(delay / 1e6, 1) << " s)" << std::endl;
      }
    }
    if (!measured && delay > 0) precompute_us = EstimatePrepareUs(wave);
    // The run's secrets exist from here on: no earlier than about twice its precompute time before it.
    const uint64_t wait_us = PrepareStartDelayUs(delay, precompute_us);
    bool go = SleepUnlessStopped(run_at - std::chrono::microseconds(delay - wait_us), stop);
    std::optional<std::future<PreparedWave>> ahead;
    uint64_t reserved = 0;
    if (go) {
      if (ahead_limit > 0 && prepared_bytes_.fetch_add(estimate) + estimate <= ahead_limit) {
        reserved = estimate;
        ahead = std::async(std::launch::async, [&] { return Prepare(wave, false, hold_close_us); });
        LOG(INFO) << "wave " << TerminalSafe(wave.name) << ": preparing " << FormatFixed((delay - wait_us) / 1e6, 1)
                  << " s before the run (precompute " << (measured ? "measured" : "estimated") << " at "
                  << FormatFixed(precompute_us / 1e6, 1) << " s)";
      } else {
        if (ahead_limit > 0) prepared_bytes_.fetch_sub(estimate);
        LOG(INFO) << "wave " << TerminalSafe(wave.name)
                  << ": prepared at its time (--prepare_ahead_gib leaves no room ahead)";
      }
      go = SleepUnlessStopped(run_at, stop);
    }
    std::optional<PreparedWave> prepared;
    if (ahead) prepared.emplace(ahead->get());
    if (!go) {
      prepared_bytes_.fetch_sub(reserved);
      return;
    }
    if (!prepared) prepared.emplace(Prepare(wave, true, hold_close_us));
    estimate = prepared->ExpectedLabelBytes();
    held_bytes_ += estimate;  // shown from the run's time on, never ahead of it
    precompute_us = prepared->prepare_us;
    measured = true;
    LOG(INFO) << "wave " << TerminalSafe(wave.name) << ": prepared in " << prepared->prepare_us / 1e6 << " s, "
              << estimate / double(1 << 20) << " MiB of expected labels";
    const bool held = RunOnce(wave, *std::move(prepared)) && wave.hold;
    prepared_bytes_.fetch_sub(reserved);  // released once the run is over: its labels were held until then
    held_bytes_ -= estimate;              // the run is over (or was not run): its expected labels are gone
    if (metrics_ != nullptr) {
      auto head = ledger_.Verify(keys_.challenger.public_key);
      if (!head.ok()) {
        err_ << kPrefix << "ledger does not verify: " << CliErrorText(head.status()) << "\n";
      }
      metrics_->OnLedgerVerified(head.ok(), SystemClock().UnixMicros());
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (options_.max_sessions > 0 && totals_.sessions >= options_.max_sessions) stop.store(true);
    }
    if (options_.once || stop.load()) return;
    // A held wave's next run follows at once when its members held to its drawn time (all passed);
    // after a failed run the schedule waits as for any wave (no run after run at an absent node).
    delay = held ? 0 : NextWaveDelayUs(wave.period_s, wave.jitter_s);
  }
}

// On SIGINT or SIGTERM: say so at once, and how long the wave runs in progress may still take.
void WaveService::AnnounceStop(int signal) {
  std::lock_guard<std::mutex> lock(mu_);
  err_ << kPrefix << "signal " << signal << ": stopping; no new wave runs";
  if (running_.empty()) {
    err_ << "; no wave run in progress" << std::endl;
    return;
  }
  int64_t until = 0;
  std::string names;
  for (const auto& [name, end_us] : running_) {
    until = std::max(until, end_us);
    names += (names.empty() ? "" : ", ") + TerminalSafe(name);
  }
  const int64_t left_us = std::max<int64_t>(0, until - SystemClock().UnixMicros());
  err_ << "; waiting for the running wave run(s) (" << names << ") to end and record their verdicts: at most "
       << FormatFixed(left_us / 1e6, 0) << " s (until " << UtcSeconds(until) << ", their sessions' timeout)"
       << std::endl;
}

WaveServiceTotals WaveService::Run(std::atomic<bool>& stop, const std::atomic<int>& signal) {
  session_options_.stop = &stop;  // a run stopped during its drains sends no order (wave_run.h)
  std::atomic<size_t> scheduling{waves_.size()};
  std::vector<std::thread> workers;
  for (const Wave* w : waves_) {
    workers.emplace_back([&, w] {
      Schedule(*w, stop);
      --scheduling;
    });
  }
  bool announced = false;
  auto announce_once = [&] {
    if (announced || signal.load() == 0) return;
    announced = true;
    AnnounceStop(signal.load());
  };
  while (scheduling.load() > 0) {
    announce_once();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  announce_once();  // a signal the waves saw first
  for (std::thread& t : workers) t.join();
  std::lock_guard<std::mutex> lock(mu_);
  return totals_;
}

}  // namespace wipeproof
