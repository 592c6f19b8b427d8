#include "challenger/fleet/fleet_status.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "challenger/fleet/proven_capacity.h"
#include "challenger/ledger/ledger_records.h"
#include "challenger/ledger/ledger_verify.h"
#include "challenger/session/failure.h"
#include "common/hex.h"
#include "common/terminal_text.h"
#include "proto/codec.h"
#include "proto/delegation.h"
#include "proto/signing.h"

namespace wipeproof {

namespace {

std::string Gib(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / static_cast<double>(uint64_t{1} << 30));
  return buf;
}

std::string TimeOrDash(int64_t unix_us) { return unix_us == 0 ? "-" : FormatUnixMicrosUtc(unix_us); }

// The earliest time `n` is known to have been due to be wiped (NodeStatus::due_from_unix_us).
void DueFrom(NodeStatus& n, int64_t at_unix_us) {
  if (at_unix_us <= 0) return;
  if (n.due_from_unix_us == 0 || at_unix_us < n.due_from_unix_us) n.due_from_unix_us = at_unix_us;
}

// A node as a recorded inventory's JSON names it: its name and its key (nodes[].public_key, hex,
// lower case; empty when absent).
struct RecordedNode {
  std::string name;
  std::string public_key_hex;
};

// The nodes of a recorded inventory's JSON; none when it does not parse as one.
std::vector<RecordedNode> NodesOf(const std::string& inventory_json) {
  std::vector<RecordedNode> nodes;
  const nlohmann::json doc = nlohmann::json::parse(inventory_json, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array()) return nodes;
  for (const nlohmann::json& node : doc["nodes"]) {
    if (!node.is_object() || !node.contains("name") || !node["name"].is_string()) continue;
    RecordedNode r{node["name"].get<std::string>(), ""};
    if (node.contains("public_key") && node["public_key"].is_string()) {
      r.public_key_hex = node["public_key"].get<std::string>();
      std::transform(r.public_key_hex.begin(), r.public_key_hex.end(), r.public_key_hex.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    }
    nodes.push_back(std::move(r));
  }
  return nodes;
}

// Whether `order`'s delegation names the inventory `digest` (Delegation.inventoryDigest). An order
// whose delegation does not parse names none. The challenger signed the order; whether the authority
// signed the delegation is the audit's check, not this view's.
bool NamesInventory(proto::WipeOrder::Reader order, const proto::Digest& digest) {
  auto envelope = proto::DecodeEnvelope(order.getDelegation());
  if (!envelope.ok()) return false;
  auto delegation = proto::ParseMessage<proto::Delegation>(proto::AsView(envelope->payload));
  if (!delegation.ok()) return false;
  const std::optional<proto::Digest> named = proto::NamedInventory(delegation->root());
  return named && *named == digest;
}

double Fraction(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

// A proven time: seconds with a tenth under two minutes (so that it agrees with its percentage),
// else as FormatAge.
std::string Span(uint64_t us) {
  if (us >= 120'000'000) return FormatAge(static_cast<int64_t>(us));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(us) / 1e6);
  return buf;
}

std::string Percent(uint64_t part, uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * Fraction(part, whole));
  return buf;
}

}  // namespace

const char* NodeStateName(NodeState state) {
  switch (state) {
    case NodeState::kNone:
      return "none";
    case NodeState::kPass:
      return "pass";
    case NodeState::kFail:
      return "fail";
    case NodeState::kBusy:
      return "busy";
    case NodeState::kInterrupted:
      return "interrupted";
    case NodeState::kRunning:
      return "running";
  }
  return "none";
}

int64_t PassDueUnixUs(const Wave& wave, int64_t last_pass_unix_us) {
  return last_pass_unix_us + static_cast<int64_t>((wave.period_s + wave.jitter_s + kPassDueSlackS) * 1e6);
}

std::string FormatAge(int64_t micros) {
  const double s = static_cast<double>(micros < 0 ? 0 : micros) / 1e6;
  char buf[32];
  if (s < 120) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else if (s < 7200) {
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  } else if (s < 2 * 86400) {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f d", s / 86400);
  }
  return buf;
}

StatusOr<FleetStatus> ReadFleetStatus(const Ledger& ledger, const proto::PublicKey& challenger_pub,
                                      const Inventory& inventory, int64_t now_unix_us, uint64_t capacity_over_us) {
  WP_ASSIGN_OR_RETURN(LedgerHead head, ledger.Verify(challenger_pub));
  FleetStatus out;
  out.ledger_path = ledger.path();
  out.ledger_entries = head.entry_count;
  out.now_unix_us = now_unix_us;
  out.inventory_digest = inventory.digest;
  out.capacity_over_us = capacity_over_us;
  const int64_t capacity_from =
      now_unix_us - static_cast<int64_t>(std::min<uint64_t>(capacity_over_us, static_cast<uint64_t>(now_unix_us)));
  std::map<std::string, size_t> index;
  auto node_at = [&](const std::string& name) -> NodeStatus& {
    auto it = index.find(name);
    if (it != index.end()) return out.nodes[it->second];
    index[name] = out.nodes.size();
    NodeStatus n;
    n.node = name;
    if (const Wave* w = inventory.WaveOf(name)) {
      n.wave = w->name;
      n.held = w->hold.has_value();
    }
    out.nodes.push_back(n);
    return out.nodes.back();
  };
  for (const InventoryNode& n : inventory.nodes) node_at(n.name);

  // Sessions whose order is recorded: node and the order's issuedAt; erased once a verdict comes.
  struct Ordered {
    std::string node;
    int64_t at_unix_us = 0;
    int64_t until_unix_us = 0;  // expiresAt + sessionTimeout: the session cannot run past it
  };
  std::map<proto::Bytes, Ordered> without_verdict;
  std::map<proto::Bytes, std::pair<std::string, ProvenCapacity>> proven_by_session;
  // Rows up to the verified head only (a row appended meanwhile is left for the next look).
  Status walked = ledger.ForEachRow(std::nullopt, [&](const LedgerRow& row) -> Status {
    if (row.sequence >= head.entry_count) return Status::Ok();
    if (row.kind == static_cast<int64_t>(proto::LedgerRecordKind::ORDER)) {
      WP_ASSIGN_OR_RETURN(VerifiedEntry entry, VerifyLedgerRow(row, challenger_pub));
      WP_ASSIGN_OR_RETURN(proto::SignedEnvelope envelope, proto::DecodeEnvelope(proto::AsView(entry.record)));
      WP_ASSIGN_OR_RETURN(auto order, proto::ParseMessage<proto::WipeOrder>(proto::AsView(envelope.payload)));
      proto::WipeOrder::Reader o = order.root();
      ++out.orders;
      if (out.inventory_digest && NamesInventory(o, *out.inventory_digest)) ++out.orders_naming_inventory;
      const uint64_t timeout_us = std::min<uint64_t>(o.getSessionTimeoutUs(), uint64_t{1} << 62);
      without_verdict[row.session_id] = {o.getNodeName().cStr(), o.getIssuedAtUnixUs(),
                                         o.getExpiresAtUnixUs() + static_cast<int64_t>(timeout_us)};
      DueFrom(node_at(o.getNodeName().cStr()), o.getIssuedAtUnixUs());
      return Status::Ok();
    }
    if (row.kind != static_cast<int64_t>(proto::LedgerRecordKind::VERDICT)) return Status::Ok();
    without_verdict.erase(row.session_id);
    WP_ASSIGN_OR_RETURN(VerifiedEntry entry, VerifyLedgerRow(row, challenger_pub));
    WP_ASSIGN_OR_RETURN(proto::SignedEnvelope envelope, proto::DecodeEnvelope(proto::AsView(entry.record)));
    WP_ASSIGN_OR_RETURN(auto verdict, proto::VerifyAndParse<proto::Verdict>(envelope, challenger_pub));
    proto::Verdict::Reader v = verdict.root();
    NodeStatus& n = node_at(v.getNodeName().cStr());
    NodeVerdictStatus last;
    last.pass = v.getPass();
    last.at_unix_us = v.getIssuedAtUnixUs();
    last.ledger_sequence = row.sequence;
    last.bound_stated = v.getBoundStated();
    last.bound_bytes = v.getTotalUnwipedBoundBytes();
    last.statement = v.getStatement().cStr();
    if (!last.pass) {
      const std::string text = v.getFailure().getText().cStr();
      last.failure = FailureReasonName(v.getFailure().getReason()) + (text.empty() ? "" : ": " + text);
      last.busy = v.getFailure().getReason() == proto::FailureReason::NODE_BUSY;
    }
    ++n.sessions;
    // A session's last verdict decides what it proves (a failure may supersede its pass).
    proven_by_session[row.session_id] = {v.getNodeName().cStr(), ProvenCapacityOf(v)};
    if (n.first_verdict_unix_us == 0) n.first_verdict_unix_us = last.at_unix_us;
    DueFrom(n, last.at_unix_us);
    if (last.pass) {
      n.last_pass_unix_us = last.at_unix_us;
    } else {
      ++n.failures;  // a busy refusal too: no wipe ran (a node answering "busy" must not escape its wipes)
      if (last.busy) ++n.busy;
    }
    n.last = last;
    return Status::Ok();
  });
  if (!walked.ok()) return walked.WithContext("reading the ledger's verdicts");
  for (const auto& [session, proven] : proven_by_session) {
    NodeStatus& n = node_at(proven.first);
    n.occupied_proven_us += ProvenOccupiedUsWithin(proven.second, capacity_from, now_unix_us);
    n.compute_proven_us += ProvenComputeUsWithin(proven.second, capacity_from, now_unix_us);
  }
  // One node holds one session at a time: more than the span proven is records that overlap, which
  // no honest challenger writes; never shown above the span.
  for (NodeStatus& n : out.nodes) {
    n.occupied_proven_us = std::min(n.occupied_proven_us, capacity_over_us);
    n.compute_proven_us = std::min(n.compute_proven_us, capacity_over_us);
  }
  for (const auto& [session, ordered] : without_verdict) {
    NodeStatus& n = node_at(ordered.node);
    const bool running = now_unix_us < ordered.until_unix_us;
    if (!running) {  // interrupted: a failed wipe (docs/threat-model.md)
      ++n.sessions;
      ++n.failures;
      ++n.interrupted;
    }
    if (n.last && n.last->at_unix_us >= ordered.at_unix_us) continue;  // an older session
    if (!n.unfinished_session.empty() && ordered.at_unix_us < n.unfinished_at_unix_us) continue;
    n.unfinished_session = HexEncode(session.data(), session.size());
    n.unfinished_at_unix_us = ordered.at_unix_us;
    n.unfinished_until_unix_us = ordered.until_unix_us;
  }
  // The inventories serve recorded: a node of the inventory shown is due from the first that named
  // it, by its name or by its key (a node renamed keeps its key, and so its due time).
  std::map<std::string, size_t> by_key;
  for (const InventoryNode& node : inventory.nodes) {
    if (index.count(node.name) != 0)
      by_key[HexEncode(node.public_key.data(), node.public_key.size())] = index[node.name];
  }
  WP_ASSIGN_OR_RETURN(std::vector<LedgerDocument> documents, ledger.Documents());
  for (const LedgerDocument& d : documents) {
    if (d.kind != "inventory") continue;
    for (const RecordedNode& recorded : NodesOf(d.body)) {
      auto named = index.find(recorded.name);
      if (named != index.end()) DueFrom(out.nodes[named->second], d.recorded_at_unix_us);
      auto keyed = recorded.public_key_hex.empty() ? by_key.end() : by_key.find(recorded.public_key_hex);
      if (keyed != by_key.end()) DueFrom(out.nodes[keyed->second], d.recorded_at_unix_us);
    }
  }
  for (NodeStatus& n : out.nodes) {
    if (!n.unfinished_session.empty()) {
      n.state = now_unix_us < n.unfinished_until_unix_us ? NodeState::kRunning : NodeState::kInterrupted;
    } else if (n.last) {
      n.state = n.last->pass ? NodeState::kPass : (n.last->busy ? NodeState::kBusy : NodeState::kFail);
    }
    const Wave* w = inventory.WaveOf(n.node);
    const int64_t since = n.last_pass_unix_us != 0 ? n.last_pass_unix_us : n.due_from_unix_us;
    if (w != nullptr && since != 0) n.next_due_unix_us = PassDueUnixUs(*w, since);
  }
  return out;
}

std::string FleetStatusTable(const FleetStatus& status) {
  std::vector<std::vector<std::string>> rows = {
      {"NODE", "WAVE", "LAST VERDICT", "AGE", "BOUND (unwiped, at most)", "FAILED", "LAST PASS", "NEXT DUE"}};
  for (const NodeStatus& n : status.nodes) {
    std::vector<std::string> r = {TerminalSafe(n.node), n.wave.empty() ? "(none)" : TerminalSafe(n.wave)};
    if (n.state == NodeState::kInterrupted || n.state == NodeState::kRunning) {
      r.push_back(n.state == NodeState::kRunning ? "RUNNING" : "INTERRUPTED");
      r.push_back(FormatAge(status.now_unix_us - n.unfinished_at_unix_us));
      r.push_back("no verdict");
    } else if (!n.last) {
      r.insert(r.end(), {"none", "-", "-"});
    } else {
      r.push_back(n.last->pass ? "PASS" : (n.last->busy ? "BUSY" : "FAIL"));
      r.push_back(FormatAge(status.now_unix_us - n.last->at_unix_us));
      r.push_back(n.last->bound_stated
                      ? Gib(n.last->bound_bytes) + " (" + std::to_string(n.last->bound_bytes) + " bytes)"
                      : "no bound stated");
    }
    r.push_back(std::to_string(n.failures) + " of " + std::to_string(n.sessions) +
                (n.interrupted > 0 ? " (" + std::to_string(n.interrupted) + " interrupted)" : "") +
                (n.busy > 0 ? " (" + std::to_string(n.busy) + " busy)" : ""));
    r.push_back(TimeOrDash(n.last_pass_unix_us));
    std::string due = TimeOrDash(n.next_due_unix_us);
    if (n.next_due_unix_us != 0 && n.next_due_unix_us < status.now_unix_us) due += " (OVERDUE)";
    r.push_back(due);
    rows.push_back(r);
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  for (const NodeStatus& n : status.nodes) {
    const std::string node = TerminalSafe(n.node);
    if (n.last && n.last->busy) {
      out += node + ": busy: its agent refused the order, saying it runs another session, so no wipe ran: "
             "counted as a failed wipe (" + TerminalSafe(n.last->failure) + ")\n";
    } else if (n.last && !n.last->pass) {
      out += node + ": last verdict failed: " + TerminalSafe(n.last->failure) + "\n";
    }
    if (n.state == NodeState::kInterrupted) {
      out += node + ": last session " + n.unfinished_session + " ordered at " +
             FormatUnixMicrosUtc(n.unfinished_at_unix_us) +
             ": no verdict, interrupted (the challenger stopped before its verdict): counted as a failed wipe\n";
    } else if (n.state == NodeState::kRunning) {
      out += node + ": session " + n.unfinished_session + " ordered at " +
             FormatUnixMicrosUtc(n.unfinished_at_unix_us) +
             ": running, no verdict yet (a failed wipe if none is recorded by " +
             FormatUnixMicrosUtc(n.unfinished_until_unix_us) + ")\n";
    }
    if (n.interrupted > (n.state == NodeState::kInterrupted ? 1u : 0u)) {
      out += node + ": " + std::to_string(n.interrupted) +
             " session(s) without a verdict in all (interrupted), counted as failed wipes\n";
    }
  }
  for (const NodeStatus& n : status.nodes) {
    if (!n.held && n.occupied_proven_us == 0 && n.compute_proven_us == 0) continue;
    const std::string over = FormatAge(static_cast<int64_t>(status.capacity_over_us));
    out += TerminalSafe(n.node) + ": " + (n.held ? "held: " : "") + Percent(n.occupied_proven_us, status.capacity_over_us) +
           " of the last " + over + " proven occupied (" + Span(n.occupied_proven_us) +
           " by stated occupancy statements); " +
           (n.compute_proven_us > 0 ? "at least " + Percent(n.compute_proven_us, status.capacity_over_us) +
                                          " of its compute proven spent on fills (" + Span(n.compute_proven_us) + ")"
                                    : std::string("no stated compute statement in the span")) +
           "\n";
  }
  out += "ledger " + status.ledger_path + ": " + std::to_string(status.ledger_entries) +
         " entries, the whole chain verified\n";
  out += InventoryProvenance(status) + "\n";
  return out;
}

std::string InventoryProvenance(const FleetStatus& status) {
  if (!status.inventory_digest) {
    return "inventory: no digest a delegation could name (its node keys are named by file): its nodes, waves "
           "and holds are this file's, unchecked";
  }
  const std::string digest = HexEncode(status.inventory_digest->data(), status.inventory_digest->size());
  if (status.orders_naming_inventory == 0) {
    return "inventory " + digest + ": no order of this ledger ran under it (no order's delegation names it): "
           "its nodes, waves and holds are this file's, unchecked";
  }
  return "inventory " + digest + ": the delegation of " + std::to_string(status.orders_naming_inventory) + " of " +
         std::to_string(status.orders) +
         " order(s) of this ledger names it (whether the authority signed those delegations is ledger audit's check)";
}

nlohmann::ordered_json FleetStatusJson(const FleetStatus& status) {
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const NodeStatus& n : status.nodes) {
    nlohmann::ordered_json j;
    j["node"] = n.node;
    j["wave"] = n.wave.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(n.wave);
    j["state"] = NodeStateName(n.state);
    if (n.last) {
      nlohmann::ordered_json l;
      l["pass"] = n.last->pass;
      l["busy"] = n.last->busy;
      l["failure"] = n.last->failure;
      l["at"] = FormatUnixMicrosUtc(n.last->at_unix_us);
      l["at_unix_us"] = n.last->at_unix_us;
      l["age_s"] = static_cast<double>(status.now_unix_us - n.last->at_unix_us) / 1e6;
      l["bound_stated"] = n.last->bound_stated;
      l["bound_bytes"] = n.last->bound_stated ? nlohmann::ordered_json(n.last->bound_bytes) : nlohmann::ordered_json();
      l["statement"] = n.last->statement;
      l["ledger_sequence"] = n.last->ledger_sequence;
      j["last_verdict"] = l;
    } else {
      j["last_verdict"] = nullptr;
    }
    j["sessions"] = n.sessions;
    j["failures"] = n.failures;
    j["interrupted"] = n.interrupted;
    j["busy"] = n.busy;
    j["last_pass_unix_us"] =
        n.last_pass_unix_us == 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(n.last_pass_unix_us);
    j["next_due_unix_us"] =
        n.next_due_unix_us == 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(n.next_due_unix_us);
    j["overdue"] = n.next_due_unix_us != 0 && n.next_due_unix_us < status.now_unix_us;
    if (n.unfinished_session.empty()) {
      j["unfinished_session"] = nullptr;
    } else {
      j["unfinished_session"] = {{"session_id", n.unfinished_session},
                                 {"order_issued", FormatUnixMicrosUtc(n.unfinished_at_unix_us)},
                                 {"order_issued_unix_us", n.unfinished_at_unix_us},
                                 {"running", n.state == NodeState::kRunning},
                                 {"running_until_unix_us", n.unfinished_until_unix_us}};
    }
    j["capacity"] = {{"held", n.held},
                     {"over_s", static_cast<double>(status.capacity_over_us) / 1e6},
                     {"occupied_proven_s", static_cast<double>(n.occupied_proven_us) / 1e6},
                     {"occupied_fraction", Fraction(n.occupied_proven_us, status.capacity_over_us)},
                     {"compute_proven_s", static_cast<double>(n.compute_proven_us) / 1e6},
                     {"compute_fraction", Fraction(n.compute_proven_us, status.capacity_over_us)}};
    nodes.push_back(j);
  }
  nlohmann::ordered_json out;
  out["ledger"] = {{"path", status.ledger_path}, {"entries", status.ledger_entries}, {"verified", true}};
  out["now_unix_us"] = status.now_unix_us;
  out["inventory"] = {{"digest", status.inventory_digest ? nlohmann::ordered_json(HexEncode(
                                                                status.inventory_digest->data(),
                                                                status.inventory_digest->size()))
                                                          : nlohmann::ordered_json()},
                      {"orders_naming_it", status.orders_naming_inventory},
                      {"orders", status.orders},
                      {"provenance", InventoryProvenance(status)}};
  out["nodes"] = nodes;
  return out;
}

}  // namespace wipeproof
