// `wipeproof-challenger serve --inventory=FILE ...` (cli.h): the wave schedule (scheduler.h), each
// wave on its own thread, every run of a wave through RunWave (wave_run.h). With --metrics_listen,
// Prometheus metrics (fleet_metrics.h) are served by a MetricsHttpThread: a thread of its own with
// its own KJ event loop (serve has no loop to share: each wave member runs its own); the wave
// threads report into the registry, which is thread-safe. The whole ledger chain is verified at
// start (where the ledger's verdicts also seed each node's last pass) and after each wave run for
// wipeproof_challenger_ledger_verified.
// Plain lines on stderr (docs/operations.md "Running wipes"): each wave's next run (UTC) when it is
// scheduled, each run's start and end with its members by outcome (a node busy with another
// session is busy, not a failure: outcome_report.h), and on SIGINT/SIGTERM a notice at once naming
// the runs in progress and the longest they may still take.
#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_flags.h"
#include "challenger/fleet/fleet_metrics.h"
#include "challenger/fleet/fleet_status.h"
#include "challenger/fleet/lifecycle_spec.h"
#include "challenger/fleet/open_files.h"
#include "challenger/fleet/outcome_report.h"
#include "challenger/fleet/plan_builder.h"
#include "challenger/fleet/scheduler.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/fleet/wave_shard.h"
#include "challenger/ledger/ledger_record_sink.h"
#include "challenger/ledger/ledger_records.h"
#include "challenger/session/session_plan.h"
#include "common/clock.h"
#include "common/metrics_http_server.h"
#include "common/metrics_registry.h"
#include "common/numbers.h"
#include "common/terminal_text.h"
#include "proto/codec.h"

namespace wipeproof {

namespace {

constexpr char kSub[] = "serve";

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};  // the signal that stopped serve; 0 = none (yet)

extern "C" void OnStopSignal(int signal) {
  g_signal.store(signal);
  g_stop.store(true);
}

// Sleeps `us` microseconds in short steps; false when told to stop meanwhile.
bool SleepUnlessStopped(uint64_t us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (!g_stop.load()) {
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

struct ServeState {
  std::mutex mu;
  uint64_t sessions = 0;
  uint64_t failures = 0;
  uint64_t busy = 0;  // sessions refused because the node ran another session (not failures)
  // Wave runs in progress: wave name -> the latest time (Unix us) its run can end.
  std::map<std::string, int64_t> running;
};

// A wave run's members by outcome, for its end line.
struct WaveCounts {
  int pass = 0, fail = 0, busy = 0, error = 0;
};

// The longest a prepared run can take once started: its sessions' timeout, plus for a member with
// a drain hook the drain grace and the drain and resume commands' timeouts.
uint64_t MaxRunUs(const PreparedWave& prepared) {
  uint64_t session_us = 0, lifecycle_us = 0;
  for (const auto& s : prepared.sessions) {
    if (s) session_us = std::max(session_us, s->plan.session_timeout_us);
  }
  for (const auto& l : prepared.lifecycles) {
    if (l && l->kind != LifecycleKind::kNone) {
      lifecycle_us = std::max(lifecycle_us, static_cast<uint64_t>((l->grace_s + 2 * l->command_timeout_s) * 1e6));
    }
  }
  return session_us + lifecycle_us;
}

WaveCounts ReportWave(const Wave& wave, const std::vector<WaveMemberResult>& results, ServeState* state,
                      FleetMetrics* metrics) {
  std::lock_guard<std::mutex> lock(state->mu);
  WaveCounts counts;
  for (const WaveMemberResult& r : results) {
    if (metrics != nullptr) metrics->OnMemberResult(r, SystemClock().UnixMicros());
    ++state->sessions;
    if (!r.outcome.ok()) {
      ++state->failures;
      ++counts.error;
      std::cerr << "wipeproof-challenger serve: wave " << TerminalSafe(wave.name) << " node " << TerminalSafe(r.node)
                << ": no session: " << CliErrorText(r.outcome.status()) << "\n";
      continue;
    }
    const SessionOutcome& o = *r.outcome;
    // A node busy with another session is not a failed wipe of it (outcome_report.h).
    const bool busy = IsBusyRefusal(o);
    if (busy) {
      ++state->busy;
      ++counts.busy;
      std::cerr << "wipeproof-challenger serve: wave " << TerminalSafe(wave.name) << " node " << TerminalSafe(r.node)
                << ": busy (its agent is running another session): not wiped in this run, not counted as a "
                   "failure\n";
    } else {
      ++(o.pass ? counts.pass : counts.fail);
    }
    if ((!o.pass && !busy) || !o.ledger.ok()) ++state->failures;
    const std::string summary = OutcomeSummary(o, FLAGS_ledger);
    if (FLAGS_json) {
      std::cerr << summary;
      // Invalid UTF-8 is replaced, never thrown over (verdict text is sanitized already).
      std::cout << OutcomeJson(o, FLAGS_ledger).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                << std::endl;
    } else {
      std::cout << summary << std::endl;
    }
  }
  return counts;
}

}  // namespace

int RunServe() {
  auto setup = WipeSetupFromFlags();
  if (!setup.ok()) return ConfigError(kSub, setup.status());
  WarnIfNoBound(kSub, setup->profile);
  const Inventory& inventory = setup->inventory;
  const Profile& profile = setup->profile;
  const SessionKeys& keys = setup->keys;

  auto shard = ParseWaveShard(FLAGS_shard);
  if (!shard.ok()) return ConfigError(kSub, shard.status().WithContext("--shard"));
  std::vector<const Wave*> waves;
  for (const Wave* w : WavesOfShard(inventory, *shard)) {
    if (FLAGS_wave.empty() || w->name == FLAGS_wave) waves.push_back(w);
  }
  if (waves.empty()) {
    std::string why = FLAGS_wave.empty() ? "the inventory has no waves to schedule"
                                         : "the inventory has no wave named '" + FLAGS_wave + "'";
    if (shard->count > 1) why += " in shard " + FLAGS_shard;
    return ConfigError(kSub, why);
  }
  if (shard->count > 1) {
    std::cerr << "wipeproof-challenger serve: shard " << FLAGS_shard << ": " << waves.size() << " of "
              << inventory.waves.size() << " waves\n";
  }
  // Every node of every scheduled wave must plan now, so a configuration error stops serve at start.
  for (const Wave* w : waves) {
    for (const std::string& node : w->nodes) {
      auto plan = BuildPlan(inventory, node, profile, {}, SystemClock());
      if (!plan.ok()) return ConfigError(kSub, plan.status().WithContext("wave " + w->name));
    }
  }
  for (const InventoryNode& n : inventory.nodes) {
    if (inventory.WaveOf(n.name) == nullptr) {
      std::cerr << "wipeproof-challenger serve: node " << TerminalSafe(n.name)
                << " is in no wave and is never wiped by serve\n";
    }
  }
  // Each member of a wave run holds its own descriptors (open_files.h): raise the soft limit to
  // what all waves need together (their runs may overlap), and refuse a wave that cannot fit even
  // alone rather than fail its surplus members as `disconnected`; that all fit is only warned about.
  size_t all_nodes = 0;
  for (const Wave* w : waves) all_nodes += w->nodes.size();
  auto open_files = RaiseOpenFileLimit(OpenFilesNeeded(all_nodes));
  if (!open_files.ok()) return ConfigError(kSub, open_files.status());
  for (const Wave* w : waves) {
    Status fits = CheckOpenFileRoom(w->nodes.size(), *open_files, "wave " + w->name);
    if (!fits.ok()) return ConfigError(kSub, fits);
  }
  if (Status fits = CheckOpenFileRoom(all_nodes, *open_files, "every wave at once"); !fits.ok()) {
    std::cerr << "wipeproof-challenger serve: warning: " << fits.message()
              << "; members of waves whose runs overlap may fail as disconnected\n";
  }
  auto ledger = LedgerFromFlag(keys.challenger);
  if (!ledger.ok()) return ConfigError(kSub, ledger.status());
  Status room = (*ledger)->CheckRoomForSession();
  if (!room.ok()) return ConfigError(kSub, room);

  // Metrics: every node and wave scheduled gets its series now.
  MetricsRegistry registry;
  std::optional<FleetMetrics> metrics;
  if (!FLAGS_metrics_listen.empty()) {
    if (Status s = CheckHostPortFlag(FLAGS_metrics_listen, "--metrics_listen"); !s.ok()) return ConfigError(kSub, s);
    metrics.emplace(registry, WIPEPROOF_VERSION_STRING, waves, SystemClock().UnixMicros());
    Ledger* l = ledger->get();
    metrics->CollectLedgerEntries([l]() -> StatusOr<uint64_t> {
      WP_ASSIGN_OR_RETURN(LedgerHead head, l->Head());
      return head.entry_count;
    });
  }
  const proto::PublicKey challenger_pub = keys.challenger.public_key;
  auto verify_ledger = [&] {
    if (!metrics) return;
    auto head = (*ledger)->Verify(challenger_pub);
    if (!head.ok()) {
      std::cerr << "wipeproof-challenger serve: ledger does not verify: " << CliErrorText(head.status()) << "\n";
    }
    metrics->OnLedgerVerified(head.ok(), SystemClock().UnixMicros());
  };
  if (metrics) {
    // The ledger's verdicts seed each node's last pass, so a restart does not hide an overdue node.
    auto fleet = ReadFleetStatus(**ledger, challenger_pub, inventory, SystemClock().UnixMicros());
    if (fleet.ok()) {
      for (const NodeStatus& n : fleet->nodes) {
        if (n.last_pass_unix_us != 0) {
          metrics->SeedLastPass(n.node, n.last_pass_unix_us);
        } else if (n.first_verdict_unix_us != 0) {
          metrics->SeedNeverPassed(n.node, n.first_verdict_unix_us);  // due since its first try
        }
      }
    } else {
      std::cerr << "wipeproof-challenger serve: ledger does not verify: " << CliErrorText(fleet.status()) << "\n";
    }
    metrics->OnLedgerVerified(fleet.ok(), SystemClock().UnixMicros());
  }

  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  LedgerRecordSink sink(ledger->get());
  ServeState state;
  TcpSessionOptions options = setup->tcp;
  // Draining and resuming nodes (the inventory's lifecycle) is reported as it happens.
  options.lifecycle_notice = [&state](const std::string& line) {
    std::lock_guard<std::mutex> lock(state.mu);
    std::cerr << line << "\n";
  };

  // Each wave's next run is prepared (challenges drawn, expected labels computed) while its thread
  // waits for the run's time, so its orders go out at that time rather than after verification;
  // prepared runs hold their expected labels, at most --prepare_ahead_gib over all waves (a run
  // that would go over is prepared at its time).
  const uint64_t prepare_ahead_bytes = static_cast<uint64_t>(std::max(0.0, FLAGS_prepare_ahead_gib) * (1ull << 30));
  std::atomic<uint64_t> prepared_bytes{0};
  std::atomic<int> preparing{0};        // wave runs computing expected labels now
  std::atomic<uint64_t> held_bytes{0};  // expected labels computed, held until their run ends
  // Declared after everything its collectors read, so it stops serving before they go.
  std::optional<MetricsHttpThread> metrics_http;
  if (metrics) {
    registry.AddCollector([&] { metrics->SetPrecompute(held_bytes.load(), preparing.load()); });
    metrics_http.emplace(registry);
    auto port = metrics_http->Start(FLAGS_metrics_listen);
    if (!port.ok()) return ConfigError(kSub, port.status());
    std::cerr << "wipeproof-challenger serve: metrics on "
              << FLAGS_metrics_listen.substr(0, FLAGS_metrics_listen.rfind(':')) << ":" << *port << std::endl;
  }
  auto prepare = [&](const Wave& wave) {
    ++preparing;
    PreparedWave p = PrepareWave(inventory, wave, profile, options);
    held_bytes += p.ExpectedLabelBytes();
    --preparing;
    return p;
  };
  auto schedule = [&](const Wave& wave) {
    uint64_t delay = FLAGS_once ? 0 : FirstWaveDelayUs(wave.period_s);
    // The estimate of a run's expected labels: the previous run's, or before the first the most a
    // session may hold for every node (kMaxLabelsPerSession labels of 32 bytes).
    uint64_t estimate = wave.nodes.size() * kMaxLabelsPerSession * 32;
    for (;;) {
      std::optional<std::future<PreparedWave>> ahead;
      uint64_t reserved = 0;
      if (prepare_ahead_bytes > 0 && prepared_bytes.fetch_add(estimate) + estimate <= prepare_ahead_bytes) {
        reserved = estimate;
        ahead = std::async(std::launch::async, [&] { return prepare(wave); });
      } else {
        if (prepare_ahead_bytes > 0) prepared_bytes.fetch_sub(estimate);
        LOG(INFO) << "wave " << TerminalSafe(wave.name)
                  << ": prepared at its time (--prepare_ahead_gib leaves no room ahead)";
      }
      // Released once the run is over: its expected labels are held until then.
      auto release = [&] {
        prepared_bytes.fetch_sub(reserved);
        reserved = 0;
      };
      const int64_t next_us = SystemClock().UnixMicros() + static_cast<int64_t>(delay);
      {
        std::lock_guard<std::mutex> lock(state.mu);
        std::cerr << "wipeproof-challenger serve: wave " << TerminalSafe(wave.name) << " (" << wave.nodes.size()
                  << " node(s), period " << PlainSeconds(wave.period_s) << " s, jitter " << PlainSeconds(wave.jitter_s)
                  << " s): ";
        if (FLAGS_once) {
          std::cerr << "one run now (--once: no next run)" << std::endl;
        } else {
          std::cerr << "next run at " << UtcSeconds(next_us) << " (in " << FormatFixed(delay / 1e6, 1) << " s)"
                    << std::endl;
        }
      }
      if (metrics) metrics->OnNextWave(wave.name, next_us);
      const bool go = SleepUnlessStopped(delay);
      std::optional<PreparedWave> prepared;
      if (ahead) prepared.emplace(ahead->get());
      if (!go) {
        if (prepared) held_bytes -= prepared->ExpectedLabelBytes();
        release();
        return;
      }
      if (!prepared) prepared.emplace(prepare(wave));
      estimate = prepared->ExpectedLabelBytes();
      LOG(INFO) << "wave " << TerminalSafe(wave.name) << ": prepared in " << prepared->prepare_us / 1e6 << " s, "
                << estimate / double(1 << 20) << " MiB of expected labels";
      Status wave_room = (*ledger)->CheckRoomForSession(kSessionLedgerBytes * wave.nodes.size());
      if (!wave_room.ok()) {
        std::lock_guard<std::mutex> lock(state.mu);
        ++state.failures;
        std::cerr << "wipeproof-challenger serve: wave " << TerminalSafe(wave.name)
                  << " not run: " << CliErrorText(wave_room) << "\n";
      } else {
        // A wave run that fails, however it fails, is counted and reported; the schedule (and the
        // other waves) go on.
        const int64_t started_us = SystemClock().UnixMicros();
        {
          std::lock_guard<std::mutex> lock(state.mu);
          state.running[wave.name] = started_us + static_cast<int64_t>(MaxRunUs(*prepared));
          std::cerr << "wipeproof-challenger serve: wave " << TerminalSafe(wave.name) << ": run started at "
                    << UtcSeconds(started_us) << ", " << wave.nodes.size() << " node(s)" << std::endl;
        }
        try {
          std::optional<proto::SignedEnvelope> wave_verdict;
          const WaveCounts counts =
              ReportWave(wave, RunPreparedWave(*std::move(prepared), wave, keys, sink, options, &wave_verdict), &state,
                         metrics ? &*metrics : nullptr);
          {
            const int64_t ended_us = SystemClock().UnixMicros();
            std::lock_guard<std::mutex> lock(state.mu);
            std::cerr << "wipeproof-challenger serve: wave " << TerminalSafe(wave.name) << ": run ended at "
                      << UtcSeconds(ended_us) << " after " << FormatFixed((ended_us - started_us) / 1e6, 1)
                      << " s: " << counts.pass << " passed, " << counts.fail << " failed, " << counts.busy << " busy, "
                      << counts.error << " without a session" << std::endl;
          }
          if (wave_verdict) {
            auto parsed = proto::ParseMessage<proto::WaveVerdict>(proto::AsView(wave_verdict->payload));
            if (parsed.ok()) {
              if (metrics) metrics->OnWaveRun(wave.name, parsed->root().getPass());
              std::lock_guard<std::mutex> lock(state.mu);
              std::cerr << "wave " << TerminalSafe(wave.name) << ": " << (parsed->root().getPass() ? "PASS" : "FAIL")
                        << "; " << TerminalSafe(parsed->root().getStatement().cStr()) << "\n";
            }
          }
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(state.mu);
          ++state.failures;
          std::cerr << "wipeproof-challenger serve: wave " << TerminalSafe(wave.name)
                    << " run failed: " << TerminalSafe(e.what()) << "\n";
        }
        std::lock_guard<std::mutex> lock(state.mu);
        state.running.erase(wave.name);
      }
      release();
      held_bytes -= estimate;  // the run is over (or was not run): its expected labels are gone
      verify_ledger();
      {
        std::lock_guard<std::mutex> lock(state.mu);
        if (FLAGS_max_sessions > 0 && state.sessions >= FLAGS_max_sessions) g_stop.store(true);
      }
      if (FLAGS_once || g_stop.load()) return;
      delay = NextWaveDelayUs(wave.period_s, wave.jitter_s);
    }
  };
  std::atomic<size_t> scheduling{waves.size()};
  std::vector<std::thread> workers;
  for (const Wave* w : waves) {
    workers.emplace_back([&, w] {
      schedule(*w);
      --scheduling;
    });
  }
  // On SIGINT or SIGTERM: say so at once, and how long the wave runs in progress may still take.
  bool announced = false;
  auto announce_stop = [&] {
    if (announced || g_signal.load() == 0) return;
    announced = true;
    std::lock_guard<std::mutex> lock(state.mu);
    std::cerr << "wipeproof-challenger serve: signal " << g_signal.load() << ": stopping; no new wave runs";
    if (state.running.empty()) {
      std::cerr << "; no wave run in progress" << std::endl;
      return;
    }
    int64_t until = 0;
    std::string names;
    for (const auto& [name, end_us] : state.running) {
      until = std::max(until, end_us);
      names += (names.empty() ? "" : ", ") + TerminalSafe(name);
    }
    const int64_t left_us = std::max<int64_t>(0, until - SystemClock().UnixMicros());
    std::cerr << "; waiting for the running wave run(s) (" << names << ") to end and record their verdicts: at most "
              << FormatFixed(left_us / 1e6, 0) << " s (until " << UtcSeconds(until) << ", their sessions' timeout)"
              << std::endl;
  };
  while (scheduling.load() > 0) {
    announce_stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  announce_stop();  // a signal the waves saw first
  for (std::thread& t : workers) t.join();
  std::cerr << "wipeproof-challenger serve: " << state.sessions << " session(s), " << state.failures << " failed, "
            << state.busy << " busy (not failures)\n";
  return state.failures == 0 ? kExitPass : kExitFail;
}

}  // namespace wipeproof
