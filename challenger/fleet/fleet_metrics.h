// The challenger's Prometheus metrics for `serve --metrics_listen` (docs/metrics.md has the table):
// session outcomes and verdict facts per node as each wave run reports them, the ledger and the
// expected-label precompute. The schedule is secret: no series, label or value says when a wave
// runs next (a node that knew could plan around its wipe: move a checkpoint away just before it).
// The pass-due time is no such thing: it follows from the last pass and the wave's period and
// jitter, an upper bound the inventory gives anyway (threat-model.md T-SCHEDULE-SECRET).
//
//   wipeproof_challenger_info{version}                                  gauge 1
//   wipeproof_challenger_sessions_total{node,outcome}                   counter: pass, fail, busy, error
//                                                                       (busy: a failed verdict, refused as
//                                                                       busy; error: no session)
//   wipeproof_challenger_verdict_unwiped_bound_bytes{node}              gauge: the last verdict's stated
//                                                                       bound; NaN when it stated none
//                                                                       (and before the first verdict)
//   wipeproof_challenger_verdict_pass{node}                             gauge: 1 last verdict passed, 0 not;
//                                                                       NaN before the first verdict
//   wipeproof_challenger_last_verdict_timestamp_seconds{node}           gauge, Unix seconds
//   wipeproof_challenger_last_pass_timestamp_seconds{node}              gauge, Unix seconds (0: never)
//   wipeproof_challenger_pass_due_timestamp_seconds{node}               gauge, Unix seconds: by when the
//                                                                       next pass is due (alert when
//                                                                       time() is past it): fleet_status.h
//                                                                       PassDueUnixUs from the last pass
//                                                                       (before one: from NodeStatus::
//                                                                       due_from_unix_us of the ledger,
//                                                                       else the start): period + jitter
//                                                                       + 10 min
//   wipeproof_challenger_round_seconds{node}                            histogram: send to answer
//   wipeproof_challenger_fill_seconds{node}                             gauge: order to fill report,
//                                                                       last session; NaN before one
//   wipeproof_challenger_wave_runs_total{wave,outcome}                  counter: pass, fail
//   wipeproof_challenger_node_held{node}                                gauge: 1 when its wave is held
//                                                                       between runs (inventory hold)
//   wipeproof_challenger_occupied_proven_seconds_total{node}            counter: the time stated
//                                                                       occupancy windows prove its
//                                                                       memory held (each window less
//                                                                       its T* + U: proven_capacity.h),
//                                                                       added at each verdict
//   wipeproof_challenger_compute_proven_seconds_total{node}             counter: the least compute time
//                                                                       stated compute statements prove
//                                                                       its fills took
//   wipeproof_challenger_ledger_entries                                 gauge (read at each scrape)
//   wipeproof_challenger_ledger_verified                                gauge: 1 the whole chain verified
//                                                                       at the last check, 0 not
//   wipeproof_challenger_ledger_last_verify_timestamp_seconds           gauge, Unix seconds
//   wipeproof_challenger_precompute_backlog_bytes                       gauge: expected labels held by
//                                                                       wave runs under way (a run
//                                                                       prepared ahead counts from its
//                                                                       time on, so none is announced)
//   wipeproof_challenger_precompute_waves                               gauge: wave runs preparing at
//                                                                       their time (none ahead of it)
//
// Every series of every node and wave scheduled exists from the construction on (counters and
// histograms at 0, gauges at 0 or NaN as above), so rates and alerts see a node before its first
// verdict; a node that never passes fires WipeproofNoPassWithinPeriod once its due time is past.
//
// Thread-safety: every method is thread-safe (wave threads report concurrently).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "challenger/fleet/fleet_status.h"
#include "challenger/fleet/inventory.h"
#include "challenger/fleet/wave_run.h"
#include "common/metrics_registry.h"

namespace wipeproof {

class FleetMetrics {
 public:
  // Registers the families in `registry` (which must outlive this object) with a zero series for
  // every node and wave of `waves`, so alerts see them before the first run; `now_unix_us` starts
  // every node's pass-due clock. Call SeedLastPass for passes recorded before this start.
  FleetMetrics(MetricsRegistry& registry, const std::string& version, const std::vector<const Wave*>& waves,
               int64_t now_unix_us);
  // A pass recorded before this process started (from the ledger), so a restart does not reset
  // the last pass; ignored when older than what is known.
  void SeedLastPass(const std::string& node, int64_t at_unix_us);
  // Since when a node that never passed has been due (from the ledger: fleet_status.h
  // NodeStatus::due_from_unix_us), so a restart does not push its due time out again. Moves the due
  // time earlier only; ignored for a node with a known pass.
  void SeedNeverPassed(const std::string& node, int64_t due_from_unix_us);
  // Both seeds for every node of a status read from the ledger (ReadFleetStatus): its last pass,
  // or, for a node that never passed, since when it has been due. What serve does as it starts.
  void SeedFromLedger(const FleetStatus& status);

  // One member's result of a wave run (`now_unix_us`: when it was reported).
  void OnMemberResult(const WaveMemberResult& result, int64_t now_unix_us);
  // A wave run's own verdict.
  void OnWaveRun(const std::string& wave, bool pass);
  // The result of a whole-chain ledger verification.
  void OnLedgerVerified(bool ok, int64_t now_unix_us);
  // Expected-label bytes held by wave runs under way, and wave runs preparing at their time, now
  // (wave_service.h: nothing prepared ahead of a run's time counts).
  void SetPrecompute(uint64_t backlog_bytes, int waves_preparing);
  // Adds a collector that sets the ledger's entry count at each scrape from `entries` (errors: the
  // gauge keeps its last value).
  void CollectLedgerEntries(std::function<StatusOr<uint64_t>()> entries);

  // The outcome label of a member result: pass, fail, busy, error.
  static const char* OutcomeOf(const WaveMemberResult& result);

 private:
  MetricsRegistry& registry_;
  CounterFamily& sessions_;
  GaugeFamily& bound_;
  GaugeFamily& pass_;
  GaugeFamily& last_verdict_;
  GaugeFamily& last_pass_;
  GaugeFamily& pass_due_;
  std::map<std::string, Wave> wave_of_;  // per node: its wave; const after construction
  HistogramFamily& rounds_;
  GaugeFamily& fill_;
  CounterFamily& wave_runs_;
  GaugeFamily& held_;
  CounterFamily& occupied_proven_;
  CounterFamily& compute_proven_;
  Gauge& ledger_entries_;
  Gauge& ledger_verified_;
  Gauge& ledger_verified_at_;
  Gauge& backlog_bytes_;
  Gauge& waves_preparing_;
};

}  // namespace wipeproof
