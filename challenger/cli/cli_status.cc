// `wipeproof-challenger status`: the fleet at a glance from the ledger and the inventory
// (challenger/fleet/fleet_status.h): per node its last verdict and that verdict's age, its bound,
// its failed sessions, its last pass and when the next pass is due. A table on stdout, or JSON
// with --json. The ledger is opened read-only and its whole chain verified first.
// Exit status: 0 shown; 1 the ledger does not verify (nothing shown); 2 bad command line,
// inventory, key or ledger file.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_flags.h"
#include "challenger/fleet/fleet_status.h"
#include "challenger/ledger/ledger.h"
#include "common/clock.h"
#include "proto/key_files.h"

namespace wipeproof {

namespace {

constexpr char kSub[] = "status";

// The challenger's public key from --challenger_key: a PREFIX.pub, or the PREFIX.key serve uses.
StatusOr<proto::PublicKey> ChallengerPublicKey() {
  if (FLAGS_challenger_key.empty()) {
    return InvalidArgumentError("--challenger_key is required (PREFIX-challenger.pub, or the .key)");
  }
  auto pub = proto::ReadPublicKeyFile(FLAGS_challenger_key);
  if (pub.ok()) return pub;
  auto pair = proto::ReadSecretKeyFile(FLAGS_challenger_key);
  if (pair.ok()) return pair->public_key;
  return pub.status().WithContext("--challenger_key");
}

}  // namespace

int RunStatus() {
  auto inventory = InventoryFromFlag();
  if (!inventory.ok()) return ConfigError(kSub, inventory.status().WithContext("--inventory"));
  auto pub = ChallengerPublicKey();
  if (!pub.ok()) return ConfigError(kSub, pub.status());
  if (FLAGS_ledger.empty()) return ConfigError(kSub, "--ledger is required (ledger database file)");
  auto ledger = Ledger::OpenReadOnly(FLAGS_ledger);
  if (!ledger.ok()) return ConfigError(kSub, ledger.status().WithContext("--ledger=" + FLAGS_ledger));
  if (!(FLAGS_capacity_over_s >= 1 && FLAGS_capacity_over_s <= 366 * 86400.0)) {
    char got[32];
    std::snprintf(got, sizeof got, "%.10g", FLAGS_capacity_over_s);
    return ConfigError(kSub, std::string("--capacity_over_s must be in [1, 31622400] seconds (366 days), got ") + got);
  }
  auto status = ReadFleetStatus(**ledger, *pub, *inventory, SystemClock().UnixMicros(),
                                static_cast<uint64_t>(std::llround(FLAGS_capacity_over_s * 1e6)));
  if (!status.ok()) {
    return ConfigError(kSub, status.status());  // 1: the ledger does not verify; 2: a key that did not sign it
  }
  if (FLAGS_json) {
    std::cout << FleetStatusJson(*status).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
              << std::endl;
  } else {
    std::cout << FleetStatusTable(*status);
  }
  return kExitOk;
}

const CliSubcommand& StatusSubcommand() {
  static const CliSubcommand kSubcommand = {
      "status",
      "the fleet at a glance from the ledger and the inventory",
      "Per inventory node (and any other node the ledger names): its last verdict (PASS, FAIL, or BUSY\n"
      "when the agent was running another session) and that verdict's age, the bound it stated, its\n"
      "failed sessions (an order without a verdict whose session can no longer run, e.g. a challenger\n"
      "killed mid-wipe, is INTERRUPTED and counted as failed; RUNNING while it still may run), its last\n"
      "pass, and when the next pass is due: the last pass (never passed: the earliest of its first verdict,\n"
      "its first order and the first inventory in the ledger naming it or its key; none of these: not\n"
      "shown) + its wave's period + jitter + 600 s for the run itself\n"
      "(OVERDUE when past). Below the table, for a node held between runs (its wave's hold) or with\n"
      "stated occupancy or compute statements: the share of the last --capacity_over_s its stated\n"
      "occupancy windows prove it held (each window less its T* + U) and the least compute time its\n"
      "stated compute statements prove fills took. Then whether the ledger's orders ran under this inventory\n"
      "(their delegation names its digest): when none did, the nodes, waves and holds shown are the file's\n"
      "word, unchecked. The ledger is opened read-only and its whole chain verified first;\n"
      "--challenger_key takes the challenger's PREFIX.pub (or its .key). A table on stdout, or --json.\n"
      "Exit 0 shown (whatever the nodes' verdicts), 1 the ledger does not verify, 2 bad command line,\n"
      "inventory, key or ledger file.",
      {"inventory", "ledger", "challenger_key", "json", "capacity_over_s"},
      &RunStatus,
      {{"inventory", "inventory JSON file: the nodes and waves to show (required)"},
       {"challenger_key",
        "the challenger's public key file (PREFIX-challenger.pub, or its .key) the ledger is verified under "
        "(required)"},
       {"ledger", "ledger database file (SQLite), opened read-only (required)"},
       {"json", "print the fleet as JSON on stdout instead of the table"},
       {"capacity_over_s", "the span, in seconds before now, of each node's proven capacity (default a week)"}}};
  return kSubcommand;
}

}  // namespace wipeproof
