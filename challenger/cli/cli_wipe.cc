// `wipeproof-challenger wipe --node=NAME ...` (cli.h): one session over TCP.
#include <cstdio>
#include <iostream>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_flags.h"
#include "challenger/fleet/outcome_report.h"
#include "challenger/fleet/plan_builder.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/ledger/ledger_record_sink.h"
#include "challenger/session/session_plan.h"
#include "common/clock.h"

namespace wipeproof {

namespace {
constexpr char kSub[] = "wipe";
}  // namespace

int RunWipe() {
  if (FLAGS_node.empty()) return ConfigError(kSub, "--node is required (inventory name of the node)");
  if (Status occupancy = CheckOccupancyFlags(); !occupancy.ok()) return ConfigError(kSub, occupancy);
  auto setup = WipeSetupFromFlags();
  if (!setup.ok()) return ConfigError(kSub, setup.status());
  WarnIfNoBound(kSub, setup->profile);
  const Inventory& inventory = setup->inventory;
  const Profile& profile = setup->profile;
  const SessionKeys& keys = setup->keys;
  auto plan = BuildPlan(inventory, FLAGS_node, profile, LoneSessionWaveContext(inventory, FLAGS_node), SystemClock());
  if (!plan.ok()) return ConfigError(kSub, plan.status());
  if (Status occupancy = ApplyOccupancyFlags(&*plan); !occupancy.ok()) return ConfigError(kSub, occupancy);
  auto ledger = LedgerFromFlag(keys.challenger, inventory);
  if (!ledger.ok()) return ConfigError(kSub, ledger.status());
  Status room = (*ledger)->CheckRoomForSession();
  if (!room.ok()) return ConfigError(kSub, room);
  WarnIfLabAuthorityKey(kSub, keys);
  WarnIfInventoryNotDelegated(kSub, keys, inventory);

  LedgerRecordSink sink(ledger->get());
  const TcpSessionOptions& options = setup->tcp;
  auto outcome = RunTcpSession(*plan, keys, sink, nullptr, options);
  if (!outcome.ok()) return ConfigError(kSub, outcome.status());

  const std::string summary = OutcomeSummary(*outcome, FLAGS_ledger);
  if (FLAGS_json) {
    // One JSON object on one line (outcome_report.h), as `serve --json` prints each verdict.
    std::cerr << summary;
    std::cout
        << OutcomeJson(*outcome, FLAGS_ledger).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
        << std::endl;
  } else {
    std::cout << summary << std::flush;
  }
  return outcome->pass && outcome->ledger.ok() ? kExitOk : kExitFailed;
}

const CliSubcommand& WipeSubcommand() {
  static const CliSubcommand kSubcommand = {"wipe",
   "run one wipe session with one node over TCP and print its verdict",
   "Plans the node's devices from the inventory and the profile, sends the signed order, times the\n"
   "fill and R challenge rounds, checks every label, signs the verdict, collects the agent's signed\n"
   "transcript and records everything in the ledger. Prints a summary (stdout), or with --json the\n"
   "verdict as JSON (stdout) and the summary on stderr. Exit 0 pass, 1 fail (or not fully recorded),\n"
   "2 no session ran (bad input), 3 the environment stopped the session (a node that refuses as busy\n"
   "with another session is a failed wipe: exit 1, shown BUSY) (the table: wipeproof-challenger --help). A lone node of a larger wave is wiped without its "
   "neighbours: its verdict says\n"
   "the wave-complete assumption did not hold (use serve, or a wave of one node). A bound is stated only\n"
   "under a calibrated profile signed by the authority key whose class is that of --classes, also signed.\n"
   "With --occupancy_window_s the node then holds its labels for that window and answers occupancy rounds\n"
   "at secret exponential gaps; the verdict adds for how long at most its planned memory lacked labels.",
   {"node", "inventory", "delegation", "authority_pub", "authority_key", "challenger_key", "ledger", "profile", "classes", "threads", "json",
    "connect_timeout_s", "round_channel", "progress", "occupancy_window_s", "occupancy_mean_gap_s", "occupancy_shortfall",
    "occupancy_labels"},
   &RunWipe,
   {{"node", "inventory name of the node to wipe (required)"},
    {"delegation", kDelegationHelp},
    {"authority_pub", kAuthorityPubForDelegationHelp},
    {"authority_key", kAuthorityKeySignsOrdersHelp},
    {"challenger_key", kChallengerKeyHelp},
    {"ledger", "ledger database file (SQLite) the session is recorded in; created if absent (required)"},
    {"json", "print the verdict as one JSON object on stdout (the summary goes to stderr)"}}};
  return kSubcommand;
}

}  // namespace wipeproof
