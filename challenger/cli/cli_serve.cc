// `wipeproof-challenger serve --inventory=FILE ...` (cli.h): checks the inventory, waves, open-file
// room and ledger, then runs the wave service (fleet/wave_service.h: the schedule, each wave on its
// own thread, the lines for people) until SIGINT/SIGTERM, --max_sessions or --once. With --metrics_listen,
// Prometheus metrics (fleet_metrics.h) are served by a MetricsHttpThread: a thread of its own with
// its own KJ event loop (serve has no loop to share: each wave member runs its own); the wave
// threads report into the registry, which is thread-safe. The whole ledger chain is verified at
// start (where the ledger's verdicts also seed each node's last pass) and after each wave run for
// wipeproof_challenger_ledger_verified.
#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <iostream>
#include <optional>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_flags.h"
#include "challenger/fleet/fleet_metrics.h"
#include "challenger/fleet/fleet_status.h"
#include "challenger/fleet/open_files.h"
#include "challenger/fleet/plan_builder.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/fleet/wave_service.h"
#include "challenger/fleet/wave_shard.h"
#include "challenger/ledger/ledger_records.h"
#include "challenger/session/round_costs.h"
#include "challenger/session/session_plan.h"
#include "common/clock.h"
#include "common/file_write.h"
#include "common/metrics_http_server.h"
#include "common/metrics_registry.h"
#include "common/terminal_text.h"

namespace wipeproof {

namespace {

constexpr char kSub[] = "serve";

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};  // the signal that stopped serve; 0 = none (yet)

extern "C" void OnStopSignal(int signal) {
  g_signal.store(signal);
  g_stop.store(true);
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
  auto ledger = LedgerFromFlag(keys.challenger, inventory);
  if (!ledger.ok()) return ConfigError(kSub, ledger.status());
  Status room = (*ledger)->CheckRoomForSession();
  if (!room.ok()) return ConfigError(kSub, room);
  WarnIfLabAuthorityKey(kSub, keys);
  WarnIfInventoryNotDelegated(kSub, keys, inventory);

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
  if (metrics) {
    // The ledger's verdicts seed each node's last pass, so a restart does not hide an overdue node.
    auto fleet = ReadFleetStatus(**ledger, challenger_pub, inventory, SystemClock().UnixMicros());
    if (fleet.ok()) {
      // A node that never passed is due since its first try, or the first inventory naming it.
      metrics->SeedFromLedger(*fleet);
    } else {
      std::cerr << "wipeproof-challenger serve: ledger does not verify: " << CliErrorText(fleet.status()) << "\n";
    }
    metrics->OnLedgerVerified(fleet.ok(), SystemClock().UnixMicros());
  }

  // The challenger's own share of each round, for the load test (never in the ledger).
  RoundCostStats round_costs;
  if (!FLAGS_round_costs.empty()) setup->tcp.round_costs = &round_costs;
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  WaveServiceOptions service_options;
  service_options.once = FLAGS_once;
  service_options.max_sessions = FLAGS_max_sessions;
  service_options.prepare_ahead_bytes =
      static_cast<uint64_t>(std::max(0.0, FLAGS_prepare_ahead_gib) * (1ull << 30));
  service_options.json = FLAGS_json;
  service_options.ledger_path = FLAGS_ledger;
  WaveService service(inventory, waves, profile, keys, **ledger, setup->tcp, service_options,
                      metrics ? &*metrics : nullptr, std::cout, std::cerr);
  // Declared after everything its collectors read, so it stops serving before they go.
  std::optional<MetricsHttpThread> metrics_http;
  if (metrics) {
    registry.AddCollector(
        [&] { metrics->SetPrecompute(service.HeldExpectedLabelBytes(), service.WavesPreparing()); });
    metrics_http.emplace(registry);
    auto port = metrics_http->Start(FLAGS_metrics_listen);
    if (!port.ok()) return ConfigError(kSub, port.status());
    std::cerr << "wipeproof-challenger serve: metrics on "
              << FLAGS_metrics_listen.substr(0, FLAGS_metrics_listen.rfind(':')) << ":" << *port << std::endl;
  }
  const WaveServiceTotals totals = service.Run(g_stop, g_signal);
  std::cerr << "wipeproof-challenger serve: " << totals.sessions << " session(s), " << totals.failures << " failed, "
            << totals.busy << " of them busy\n";
  if (!FLAGS_round_costs.empty()) {
    Status written = WriteFileReplacing(FLAGS_round_costs, round_costs.Json(ProcessRusageCpuNs()) + "\n");
    if (!written.ok()) {
      std::cerr << "wipeproof-challenger serve: --round_costs: " << CliErrorText(written) << "\n";
    }
  }
  return totals.failures == 0 ? kExitOk : kExitFailed;
}

const CliSubcommand& ServeSubcommand() {
  static const CliSubcommand kSubcommand = {"serve",
   "run the inventory's wave schedule: periodic wipes with random jitter",
   "Every wave runs on its own schedule: first after a uniform delay in [0, period], then every\n"
   "period - jitter + U[0, 2*jitter] seconds (libsodium CSPRNG), so a node cannot predict its next\n"
   "wipe. All nodes of a wave are wiped at once and kept in step: no node's rounds start before every\n"
   "node of the wave has filled, and none releases its memory before all rounds of the wave ended.\n"
   "Stops on SIGINT/SIGTERM after the running wave, after --max_sessions, or with --once after one\n"
   "run of every wave (started immediately). Exit 0 if every session passed, 1 if any failed.\n"
   "--metrics_listen=HOST:PORT serves Prometheus metrics on /metrics and /healthz (docs/metrics.md).",
   {"inventory", "delegation", "authority_pub", "authority_key", "challenger_key", "ledger", "profile", "classes", "threads", "json",
    "connect_timeout_s", "round_channel", "session_loops", "wave", "max_sessions", "once", "metrics_listen", "shard", "progress", "round_costs"},
   &RunServe,
   {{"delegation", kDelegationHelp},
    {"authority_pub", kAuthorityPubForDelegationHelp},
    {"authority_key", kAuthorityKeySignsOrdersHelp},
    {"challenger_key", kChallengerKeyHelp},
    {"ledger", "ledger database file (SQLite) every session is recorded in; created if absent (required)"},
    {"json", "print each verdict as one JSON object on stdout (the summaries go to stderr)"}}};
  return kSubcommand;
}

}  // namespace wipeproof
