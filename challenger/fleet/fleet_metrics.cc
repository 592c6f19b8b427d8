#include "challenger/fleet/fleet_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "challenger/fleet/fleet_status.h"
#include "challenger/fleet/outcome_report.h"
#include "challenger/fleet/proven_capacity.h"
#include "proto/codec.h"

namespace wipeproof {

namespace {

// Seconds: 50 us to 10 s; a round's send-to-answer time sits well under its deadline when honest.
const std::vector<double> kRoundBuckets = {5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2,
                                           5e-2, 0.1,  0.25,   0.5,  1,    2.5,    5,    10};

}  // namespace

FleetMetrics::FleetMetrics(MetricsRegistry& registry, const std::string& version, const std::vector<const Wave*>& waves,
                           int64_t now_unix_us)
    : registry_(registry),
      sessions_(registry.AddCounter("wipeproof_challenger_sessions_total",
                                    "Sessions per node by outcome: pass, fail (a failed verdict), busy (a failed "
                                    "verdict: the node refused the order as busy), error (no session happened).",
                                    {"node", "outcome"})),
      bound_(registry.AddGauge("wipeproof_challenger_verdict_unwiped_bound_bytes",
                               "The last verdict's stated bound on the node's memory that may not have been wiped, "
                               "at the profile's confidence; NaN when the verdict stated no bound.",
                               {"node"})),
      pass_(registry.AddGauge("wipeproof_challenger_verdict_pass", "1 when the node's last verdict passed, else 0.",
                              {"node"})),
      last_verdict_(registry.AddGauge("wipeproof_challenger_last_verdict_timestamp_seconds",
                                      "Unix time of the node's last verdict (0: none yet).", {"node"})),
      last_pass_(registry.AddGauge("wipeproof_challenger_last_pass_timestamp_seconds",
                                   "Unix time of the node's last passing verdict (0: none yet).", {"node"})),
      pass_due_(registry.AddGauge("wipeproof_challenger_pass_due_timestamp_seconds",
                                  "Unix time by which the node's next pass is due: its last pass (before one, the "
                                  "earliest of its first verdict, its first order and the first inventory in the "
                                  "ledger naming it, else the challenger's start) plus its wave's period + jitter + "
                                  "600 s.",
                                  {"node"})),
      rounds_(registry.AddHistogram("wipeproof_challenger_round_seconds",
                                    "Challenge round latency, send to answer received, per node.", {"node"},
                                    kRoundBuckets)),
      fill_(registry.AddGauge("wipeproof_challenger_fill_seconds",
                              "Order sent to fill report received, the node's last session.", {"node"})),
      wave_runs_(registry.AddCounter("wipeproof_challenger_wave_runs_total",
                                     "Wave runs by the wave verdict: pass, fail.", {"wave", "outcome"})),
      held_(registry.AddGauge("wipeproof_challenger_node_held",
                              "1 when the node's wave is held between runs (the inventory's hold), else 0.", {"node"})),
      occupied_proven_(registry.AddCounter("wipeproof_challenger_occupied_proven_seconds_total",
                                           "Seconds stated occupancy windows prove the node's planned memory held "
                                           "(each window less its T* + U), added at each verdict.",
                                           {"node"})),
      compute_proven_(registry.AddCounter("wipeproof_challenger_compute_proven_seconds_total",
                                          "The least compute time, in seconds, stated compute statements prove the "
                                          "node's fills took, added at each verdict.",
                                          {"node"})),
      ledger_entries_(
          registry.AddGauge("wipeproof_challenger_ledger_entries", "Entries in the ledger.", {}).WithLabels({})),
      ledger_verified_(registry
                           .AddGauge("wipeproof_challenger_ledger_verified",
                                     "1 when the whole ledger chain verified at the last check, 0 when it did not.", {})
                           .WithLabels({})),
      ledger_verified_at_(registry
                              .AddGauge("wipeproof_challenger_ledger_last_verify_timestamp_seconds",
                                        "Unix time of the last whole-chain ledger check (0: none yet).", {})
                              .WithLabels({})),
      backlog_bytes_(registry
                         .AddGauge("wipeproof_challenger_precompute_backlog_bytes",
                                   "Expected labels held by wave runs under way (from each run's time on).", {})
                         .WithLabels({})),
      waves_preparing_(registry
                           .AddGauge("wipeproof_challenger_precompute_waves",
                                     "Wave runs computing their expected labels at their run's time.", {})
                           .WithLabels({})) {
  registry.AddGauge("wipeproof_challenger_info", "The challenger's version.", {"version"}).WithLabels({version}).Set(1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Wave* wave : waves) {
    for (const char* outcome : {"pass", "fail"}) wave_runs_.WithLabels({wave->name, outcome});
    for (const std::string& node : wave->nodes) {
      for (const char* outcome : {"pass", "fail", "busy", "error"}) sessions_.WithLabels({node, outcome});
      last_pass_.WithLabels({node});
      last_verdict_.WithLabels({node});
      // No verdict yet: NaN, not 0 (which would read as a failed verdict or an instant fill).
      pass_.WithLabels({node}).Set(nan);
      bound_.WithLabels({node}).Set(nan);
      fill_.WithLabels({node}).Set(nan);
      rounds_.WithLabels({node});
      held_.WithLabels({node}).Set(wave->hold ? 1 : 0);
      occupied_proven_.WithLabels({node});
      compute_proven_.WithLabels({node});
      wave_of_[node] = *wave;
      pass_due_.WithLabels({node}).Set(static_cast<double>(PassDueUnixUs(*wave, now_unix_us)) / 1e6);
    }
  }
}

const char* FleetMetrics::OutcomeOf(const WaveMemberResult& result) {
  if (!result.outcome.ok()) return "error";
  return OutcomeName(*result.outcome);
}

void FleetMetrics::OnMemberResult(const WaveMemberResult& result, int64_t now_unix_us) {
  const std::string& node = result.node;
  const char* outcome = OutcomeOf(result);
  sessions_.WithLabels({node, outcome}).Increment();
  if (!result.outcome.ok()) return;
  const SessionOutcome& o = *result.outcome;
  const double now_s = static_cast<double>(now_unix_us) / 1e6;
  last_verdict_.WithLabels({node}).Set(now_s);
  pass_.WithLabels({node}).Set(o.pass ? 1 : 0);
  if (o.pass) {
    last_pass_.WithLabels({node}).Set(now_s);
    auto wave = wave_of_.find(node);
    if (wave != wave_of_.end()) {
      pass_due_.WithLabels({node}).Set(static_cast<double>(PassDueUnixUs(wave->second, now_unix_us)) / 1e6);
    }
  }
  bound_.WithLabels({node}).Set(o.summary.bound_stated ? static_cast<double>(o.summary.bound.total_bytes)
                                                       : std::numeric_limits<double>::quiet_NaN());
  fill_.WithLabels({node}).Set(static_cast<double>(o.fill_us) / 1e6);
  Histogram& rounds = rounds_.WithLabels({node});
  for (const RoundRecord& r : o.rounds) rounds.Observe(static_cast<double>(r.elapsed_us) / 1e6);
  // Only what the ledger holds (status reads the same verdicts): a verdict that did not reach it
  // proves nothing there.
  auto verdict = proto::ParseMessage<proto::Verdict>(proto::AsView(o.verdict.payload));
  if (verdict.ok() && o.ledger.ok()) {
    const ProvenCapacity proven = ProvenCapacityOf(verdict->root());
    occupied_proven_.WithLabels({node}).Increment(static_cast<double>(proven.ProvenOccupiedUs()) / 1e6);
    compute_proven_.WithLabels({node}).Increment(static_cast<double>(proven.compute_us) / 1e6);
  }
}

void FleetMetrics::SeedLastPass(const std::string& node, int64_t at_unix_us) {
  const double at_s = static_cast<double>(at_unix_us) / 1e6;
  auto wave = wave_of_.find(node);
  if (wave == wave_of_.end() || at_s <= last_pass_.WithLabels({node}).Value()) return;
  last_pass_.WithLabels({node}).Set(at_s);
  // Due from the recorded pass, even if that is already past: a restart must not hide an overdue node.
  pass_due_.WithLabels({node}).Set(static_cast<double>(PassDueUnixUs(wave->second, at_unix_us)) / 1e6);
}

void FleetMetrics::SeedNeverPassed(const std::string& node, int64_t due_from_unix_us) {
  auto wave = wave_of_.find(node);
  if (wave == wave_of_.end() || last_pass_.WithLabels({node}).Value() > 0) return;
  const double due_s = static_cast<double>(PassDueUnixUs(wave->second, due_from_unix_us)) / 1e6;
  Gauge& due = pass_due_.WithLabels({node});
  if (due_s < due.Value()) due.Set(due_s);
}

void FleetMetrics::SeedFromLedger(const FleetStatus& status) {
  for (const NodeStatus& n : status.nodes) {
    if (n.last_pass_unix_us != 0) {
      SeedLastPass(n.node, n.last_pass_unix_us);
    } else if (n.due_from_unix_us != 0) {
      SeedNeverPassed(n.node, n.due_from_unix_us);
    }
  }
}

void FleetMetrics::OnWaveRun(const std::string& wave, bool pass) {
  wave_runs_.WithLabels({wave, pass ? "pass" : "fail"}).Increment();
}

void FleetMetrics::OnLedgerVerified(bool ok, int64_t now_unix_us) {
  ledger_verified_.Set(ok ? 1 : 0);
  ledger_verified_at_.Set(static_cast<double>(now_unix_us) / 1e6);
}

void FleetMetrics::SetPrecompute(uint64_t backlog_bytes, int waves_preparing) {
  backlog_bytes_.Set(static_cast<double>(backlog_bytes));
  waves_preparing_.Set(waves_preparing);
}

void FleetMetrics::CollectLedgerEntries(std::function<StatusOr<uint64_t>()> entries) {
  registry_.AddCollector([this, entries = std::move(entries)] {
    auto n = entries();
    if (n.ok()) ledger_entries_.Set(static_cast<double>(*n));
  });
}

}  // namespace wipeproof
