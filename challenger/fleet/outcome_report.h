// How `wipeproof-challenger wipe` and `serve` print a session: a human summary and a JSON object,
// both built from the signed verdict (the record of truth) plus where it went in the ledger.
//
// JSON object (one per session; `wipe --json` and `serve --json` print each on one line), keys in
// this order:
//   session_id (hex), node, wave (the order's wave name, or null when the node is in no wave), pass,
//   outcome ("pass", "fail", or "busy": IsBusyRefusal),
//   times {order_issued, order_sent, fill_reported, last_round, verdict_signed: each RFC 3339 UTC with
//          microseconds ("2027-01-15T08:00:00.123456Z") and <name>_unix_us beside it (Unix
//          microseconds); null when it did not happen (no fill report, no round)}, statement,
//   failure {reason ("none", "wrongLabel", ...), text, device?, round?, label_index?, expected?, received?},
//   bound_stated, deadline_rule_satisfied, confidence, total_unwiped_bound_bytes,
//   fill_us, fill_deadline_us, round_deadline_us, prepare_us (challenges and expected labels, before the order),
//   rounds [{round, elapsed_us, labels_checked, deadline_met, all_correct}],
//   devices [{selector, planned_bytes, bytes_held, capacity_bytes, allowed_reserve_bytes, chunks_checked,
//             diagnostic_confidence, diagnostic_unwiped_bound_bytes}],
//   profile {name, calibrated, adversary_class, t_min_ps, safety_factor, confidence, honest_round_p999_us,
//            recompute_floor_us, authority_key_id (hex; "" unsigned), document_digest (hex; "" unsigned)},
//   assumptions [{name, held, detail}], order_digest, report_digest, verdict_digest (hex),
//   transcript_verified, superseded_verdict, ledger {path, verdict_sequence (or null), error (or null)}
// Failure fields marked ? appear only when they apply. Byte counts are bytes, times microseconds.
// The times are the challenger's wall clock: order_issued and verdict_signed are the order's and
// the verdict's signed issuedAt (both in the ledger; a wave's members wait for each other between
// signing and sending); order_sent is when the order went out (null: never, e.g. no room in the
// ledger); fill_reported is order_sent + fill_us (the report received); last_round is when the
// last round's answer arrived (order_sent + the round's send offset + its elapsed_us).
// total_unwiped_bound_bytes is the stated bound: the node's planned memory taken together, reserves
// in full (challenger/session/bound.h). The per-device figures are diagnostics only: they assume no
// label moved to another device, which a prover can do, so no statement rests on them.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "challenger/session/session_runner.h"

namespace wipeproof {

// True when the agent refused the order as busy with another session (nodeBusy: its typed refusal,
// never read from its text). No wipe ran, and the challenger that ordered it has no session there,
// so it is a failed wipe: a node answering every order "busy" must not escape its wipes. `wipe`,
// `serve`, `status` and the metrics count it as failed and show it as BUSY.
bool IsBusyRefusal(const SessionOutcome& outcome);

// "pass", "fail" or "busy" (IsBusyRefusal).
const char* OutcomeName(const SessionOutcome& outcome);

// REQUIRES: outcome.verdict is a verdict this challenger signed (it is parsed without checking the
// signature again). `ledger_path` is shown as given.
nlohmann::ordered_json OutcomeJson(const SessionOutcome& outcome, const std::string& ledger_path);

// Multi-line summary, e.g.
//   node n1  session fa7e61f34bdcfaa18fc25289b366fb1e  PASS
//   profile cli-test (uncalibrated), class commodity-cpu, round deadline 500000 us, not signed by the authority
//   deadline rule not met: round deadline 500000 us > recompute floor 1.92 us for class commodity-cpu
//   fill: 0.004 s (deadline 60.000 s)
//   rounds: 4 run, slowest 338 us, median 79 us (deadline 500000 us)
//   device host: 131072 bytes held of 131072 planned (131072 bytes, 100.0% of planned; capacity 131072 = 131072 bytes,
//     allowed reserve 0), 27 chunks checked
// (sizes of 1 MiB and up in MiB or GiB beside the byte count, numbers.h FormatBytesHuman; with a
// bound stated it adds ", diagnostic only ...: at most N bytes not wiped (X GiB, P% of capacity)")
//   statement: no bound: parameters not calibrated (profile cli-test)
//   assumptions:
//     held      host-memory-in-plan: host memory of node n1 is planned (selector host)
//     NOT HELD  no-nvme-in-reach: unknown: the inventory does not declare ...
//   ledger: ledger.db, verdict entry #3
// A failed session adds "failure: <SessionFailure::Describe()>" after the first line; a busy node
// (IsBusyRefusal) shows BUSY instead of FAIL on the first line and adds
//   busy: node n1 is running another session: nothing was wiped now and this is not a failed wipe of the node; ...
std::string OutcomeSummary(const SessionOutcome& outcome, const std::string& ledger_path);

}  // namespace wipeproof
