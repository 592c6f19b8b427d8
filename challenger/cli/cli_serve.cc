// `wipeproof-challenger serve --inventory=FILE ...` (cli.h): the wave schedule (scheduler.h), each
// wave on its own thread, every run of a wave through RunWave (wave_run.h).
#include <glog/logging.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <mutex>
#include <thread>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_flags.h"
#include "challenger/fleet/open_files.h"
#include "challenger/fleet/outcome_report.h"
#include "challenger/fleet/plan_builder.h"
#include "challenger/fleet/scheduler.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/ledger/ledger_record_sink.h"
#include "challenger/session/session_plan.h"
#include "common/clock.h"

namespace wipeproof {

namespace {

constexpr char kSub[] = "serve";

std::atomic<bool> g_stop{false};

extern "C" void OnStopSignal(int) { g_stop.store(true); }

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

struct ServeState {
  std::mutex mu;
  uint64_t sessions = 0;
  uint64_t failures = 0;
};

void ReportWave(const Wave& wave, const std::vector<WaveMemberResult>& results, ServeState* state) {
  std::lock_guard<std::mutex> lock(state->mu);
  for (const WaveMemberResult& r : results) {
    ++state->sessions;
    if (!r.outcome.ok()) {
      ++state->failures;
      std::cerr << "wipeproof-challenger serve: wave " << wave.name << " node " << r.node
                << ": no session: " << r.outcome.status().ToString() << "\n";
      continue;
    }
    const SessionOutcome& o = *r.outcome;
    if (!o.pass || !o.ledger.ok()) ++state->failures;
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
}

}  // namespace

int RunServe() {
  auto setup = WipeSetupFromFlags();
  if (!setup.ok()) return ConfigError(kSub, setup.status());
  WarnIfNoBound(kSub, setup->profile);
  const Inventory& inventory = setup->inventory;
  const Profile& profile = setup->profile;
  const SessionKeys& keys = setup->keys;

  std::vector<const Wave*> waves;
  for (const Wave& w : inventory.waves) {
    if (FLAGS_wave.empty() || w.name == FLAGS_wave) waves.push_back(&w);
  }
  if (waves.empty()) {
    return ConfigError(kSub, FLAGS_wave.empty() ? "the inventory has no waves to schedule"
                                                : "the inventory has no wave named '" + FLAGS_wave + "'");
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
      std::cerr << "wipeproof-challenger serve: node " << n.name << " is in no wave and is never wiped by serve\n";
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

  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  LedgerRecordSink sink(ledger->get());
  const TcpSessionOptions& options = setup->tcp;
  ServeState state;

  auto schedule = [&](const Wave& wave) {
    uint64_t delay = FLAGS_once ? 0 : FirstWaveDelayUs(wave.period_s);
    for (;;) {
      LOG(INFO) << "wave " << wave.name << ": next run in " << delay / 1e6 << " s";
      if (!SleepUnlessStopped(delay)) return;
      Status wave_room = (*ledger)->CheckRoomForSession(kSessionLedgerBytes * wave.nodes.size());
      if (!wave_room.ok()) {
        std::lock_guard<std::mutex> lock(state.mu);
        ++state.failures;
        std::cerr << "wipeproof-challenger serve: wave " << wave.name << " not run: " << wave_room.ToString() << "\n";
      } else {
        // A wave run that fails, however it fails, is counted and reported; the schedule (and the
        // other waves) go on.
        try {
          ReportWave(wave, RunWave(inventory, wave, profile, keys, sink, options), &state);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(state.mu);
          ++state.failures;
          std::cerr << "wipeproof-challenger serve: wave " << wave.name << " run failed: " << e.what() << "\n";
        }
      }
      {
        std::lock_guard<std::mutex> lock(state.mu);
        if (FLAGS_max_sessions > 0 && state.sessions >= FLAGS_max_sessions) g_stop.store(true);
      }
      if (FLAGS_once || g_stop.load()) return;
      delay = NextWaveDelayUs(wave.period_s, wave.jitter_s);
    }
  };
  std::vector<std::thread> workers;
  for (const Wave* w : waves) workers.emplace_back(schedule, std::cref(*w));
  for (std::thread& t : workers) t.join();
  std::cerr << "wipeproof-challenger serve: " << state.sessions << " session(s), " << state.failures << " failed\n";
  return state.failures == 0 ? kExitPass : kExitFail;
}

}  // namespace wipeproof
