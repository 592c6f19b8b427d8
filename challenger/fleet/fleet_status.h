// The fleet at a glance (`wipeproof-challenger status`): per inventory node, its last verdict in
// the ledger and that verdict's age, its bound, how many of its sessions failed, its last pass, and
// when the next pass is due by its wave's schedule. Read from the ledger, whose whole chain is
// verified first (a status built on a ledger that does not verify is refused).
//
// Units: Unix microseconds for times, bytes for sizes.
// Thread-safety: pure functions over their arguments (the ledger serializes its own reads).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "challenger/fleet/inventory.h"
#include "challenger/ledger/ledger.h"
#include "common/status.h"

namespace wipeproof {

// Slack added to a wave's period + jitter for a node's next pass to be due: a wave run takes time
// (drain, fill, rounds), so its pass lands a little after the run's scheduled start.
inline constexpr double kPassDueSlackS = 600;

// By when a node of `wave` that last passed at `last_pass_unix_us` must pass again: that pass +
// the wave's period_s + jitter_s + kPassDueSlackS, in Unix microseconds. The one rule for both
// `status` (NEXT DUE, OVERDUE) and the metric wipeproof_challenger_pass_due_timestamp_seconds
// (its alert WipeproofNoPassWithinPeriod). For a node that never passed, pass the time its clock
// starts from (NodeStatus::due_from_unix_us; serve: its start when the ledger knows nothing of it).
int64_t PassDueUnixUs(const Wave& wave, int64_t last_pass_unix_us);

struct NodeVerdictStatus {
  bool pass = false;
  std::string failure;  // "wrongLabel: ..." when failed; empty on a pass
  bool busy = false;    // failed: the agent refused the order as busy (nodeBusy, its typed refusal)
  bool bound_stated = false;
  uint64_t bound_bytes = 0;  // meaningful when bound_stated
  std::string statement;
  int64_t at_unix_us = 0;  // the verdict's issuedAt
  uint64_t ledger_sequence = 0;
};

// A node's newest session, as `status` shows it in its row.
enum class NodeState {
  kNone,         // no session recorded
  kPass,         // its last verdict passed
  kFail,         // its last verdict failed (not busy)
  kBusy,         // its last verdict: refused as busy (nodeBusy): a failed wipe, shown apart
  kInterrupted,  // an order newer than its last verdict, without a verdict, whose session cannot run
                 // any more (the challenger stopped before its verdict, e.g. killed): a failed wipe
  kRunning,      // an order newer than its last verdict, without a verdict yet, whose session may still
                 // run: now is before the order's expiresAt + sessionTimeout
};

// "none", "pass", "fail", "busy", "interrupted", "running": the JSON's "state".
const char* NodeStateName(NodeState state);

struct NodeStatus {
  std::string node;
  std::string wave;                       // empty: in no wave (serve never wipes it)
  std::optional<NodeVerdictStatus> last;  // none: no verdict in the ledger
  NodeState state = NodeState::kNone;
  // Sessions of the node: its verdicts and its interrupted sessions (an order without a verdict
  // whose session cannot run any more; docs/threat-model.md: count it as a failed wipe); a session
  // that may still run is not counted.
  uint64_t sessions = 0;
  uint64_t failures = 0;                  // failed verdicts (busy refusals included) and interrupted sessions
  uint64_t interrupted = 0;               // of which interrupted sessions
  uint64_t busy = 0;                      // of which refused as busy (nodeBusy)
  int64_t last_pass_unix_us = 0;          // 0: never passed
  int64_t first_verdict_unix_us = 0;      // the node's first verdict's issuedAt; 0: none
  // Since when a node that never passed has been due: the earliest of its first verdict, its first
  // recorded order (with a verdict or not) and the first inventory recorded in the ledger that names
  // it, by its name or by its public key (serve records its inventory as it starts; a node renamed
  // keeps its key), so a node kept from its wipes (never ordered:
  // always "out of service", never drained) still falls due, and a restart of serve does not move
  // it. 0: the ledger knows nothing of the node.
  int64_t due_from_unix_us = 0;
  // PassDueUnixUs from the last pass; when the node never passed, from due_from_unix_us (OVERDUE
  // once that is past); 0 when the node is in no wave or the ledger knows nothing of it.
  int64_t next_due_unix_us = 0;
  // The node's newest session whose order is recorded but that has no verdict, when newer than its
  // last verdict (a challenger killed mid-wipe, or a session running now): session id as 32 hex
  // digits ("" when none), the order's issuedAt, and until when it may run (the order's expiresAt +
  // sessionTimeout; state kRunning while now is before it, else kInterrupted).
  std::string unfinished_session;
  int64_t unfinished_at_unix_us = 0;
  int64_t unfinished_until_unix_us = 0;
  // Capacity held over time (proven_capacity.h), over the last FleetStatus::capacity_over_us: the
  // time stated occupancy windows prove the planned memory held, and the least compute time stated
  // compute statements prove fills took. `held`: its wave is held between runs (inventory hold).
  bool held = false;
  uint64_t occupied_proven_us = 0;
  uint64_t compute_proven_us = 0;
};

struct FleetStatus {
  std::string ledger_path;
  // Whether the ledger's wipes ran under the inventory shown: its digest (nullopt for an inventory
  // naming keys by file, which no delegation can name) and how many recorded orders carry a
  // delegation naming that digest. 0: the nodes, waves and holds shown are that file's word only.
  // The delegations' authority signatures are not checked here (status has no authority key):
  // `ledger audit` checks them.
  std::optional<proto::Digest> inventory_digest;
  uint64_t orders_naming_inventory = 0;
  uint64_t orders = 0;  // orders recorded in the ledger
  uint64_t ledger_entries = 0;    // all verified
  std::vector<NodeStatus> nodes;  // inventory order, then nodes only the ledger knows
  int64_t now_unix_us = 0;
  uint64_t capacity_over_us = 0;  // the span [now - this, now) of the nodes' proven capacity
};

// The default span of `status --capacity_over_s`: a week.
inline constexpr uint64_t kDefaultCapacityOverUs = uint64_t{7} * 86'400 * 1'000'000;

// Errors: the ledger's Verify errors (DATA_LOSS naming the first bad entry, PERMISSION_DENIED for a
// ledger written by another key), SQLite errors.
// `capacity_over_us` > 0: the span of each node's proven capacity (NodeStatus::occupied_proven_us).
StatusOr<FleetStatus> ReadFleetStatus(const Ledger& ledger, const proto::PublicKey& challenger_pub,
                                      const Inventory& inventory, int64_t now_unix_us,
                                      uint64_t capacity_over_us = kDefaultCapacityOverUs);

// One line on whether the ledger's wipes ran under the inventory shown (FleetStatus::
// orders_naming_inventory): printed under the table and in the JSON's "inventory".
std::string InventoryProvenance(const FleetStatus& status);

// A table for people, one line per node (sizes in GiB beside bytes, ages in s/min/h/d), then a line
// per node that is held or has proven capacity over the span ("held: 96.2% of the last 7.0 d proven
// occupied ..."); node, wave and failure texts escaped by TerminalSafe (common/terminal_text.h).
std::string FleetStatusTable(const FleetStatus& status);
// The same as JSON: {"ledger": {...}, "now": ..., "nodes": [{...}]}; a node's "state" is
// NodeStateName, "failures" counts its "interrupted" sessions too, and "unfinished_session" is
// {"session_id", "order_issued", "order_issued_unix_us", "running", "running_until_unix_us"} or null;
// its "capacity" is {"held", "over_s", "occupied_proven_s", "occupied_fraction", "compute_proven_s",
// "compute_fraction"}.
nlohmann::ordered_json FleetStatusJson(const FleetStatus& status);

// "42 s", "5.0 min", "3.2 h", "2.1 d".
std::string FormatAge(int64_t micros);

}  // namespace wipeproof
