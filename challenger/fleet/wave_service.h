// The wave service of `wipeproof-challenger serve`: every wave of a list on its own schedule
// (scheduler.h: first run after a uniform delay in [0, period], then period - jitter + U[0, 2*jitter]
// after each run ends), each wave on a thread of its own, every run through RunPreparedWave
// (wave_run.h). A run is prepared (seeds and challenges drawn, expected labels computed) no earlier
// than about twice its precompute time before the run's time (scheduler.h PrepareStartDelayUs: the
// last run's prepare time, measured; before the first run, the wave's challenged labels times
// MeasureExpectedLabelUs), so its orders go out at that time and its secrets are held little longer
// than they take to compute (the expected labels in locked memory, out of core dumps, zeroed when
// the run ends: session/secret_buffer.h). Prepared runs hold at most `prepare_ahead_bytes` of
// expected labels over all waves (a run that would go over is prepared at its time).
//
// A held wave (inventory.h Wave::hold: idle nodes) draws its next run's delay before each run, and
// its members hold their labels under occupancy rounds from their proof rounds until then (wave_run.h
// PlanWave); the next run follows as soon as the windows close. So the nodes are held and challenged
// continuously, refilled with fresh seeds about once a period, and the next wipe's time stays secret.
//
// Lines for people (docs/operations.md "Running wipes") go to `err` (the challenger's own log, never
// its metrics: fleet_metrics.h publishes no future run): each wave's next run (UTC),
// each run's start and end with its members by outcome (a node refusing as busy is a failed wipe
// shown apart, and 3 in a row an ERROR line: outcome_report.h), the wave verdict's statement, and once `signal` is set, a
// notice naming the runs in progress and the longest they may still take. Each member's summary
// goes to `out` (with `json`: its verdict as one JSON line on `out`, the summary on `err`).
//
// Thread-safety: Run() is called once, from one thread; it starts and joins the wave threads. The
// `stop` and `signal` atomics may be set from a signal handler; the precompute getters may be read
// from any thread (the metrics collector) while Run() runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "challenger/fleet/fleet_metrics.h"
#include "challenger/fleet/inventory.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_record_sink.h"
#include "challenger/parameters/parameter_profile.h"

namespace wipeproof {

struct WaveServiceOptions {
  bool once = false;           // one run of every wave, started at once, then return
  uint64_t max_sessions = 0;   // stop after this many sessions over all waves (0 = no limit)
  uint64_t prepare_ahead_bytes = 0;  // expected labels prepared ahead of their run's time, over all waves
  bool json = false;           // each verdict as a JSON line on `out`, the summary on `err`
  std::string ledger_path;     // named in the member summaries
};

// What the service did, for the closing line and the exit code.
struct WaveServiceTotals {
  uint64_t sessions = 0;
  uint64_t failures = 0;  // failed verdicts (busy refusals included), members without a session, runs not run
  uint64_t busy = 0;      // of which sessions refused as busy (nodeBusy)
};

class WaveService {
 public:
  // `waves` point into `inventory`; every reference must outlive Run(). `metrics` may be null.
  WaveService(const Inventory& inventory, const std::vector<const Wave*>& waves, const Profile& profile,
              const SessionKeys& keys, Ledger& ledger, const TcpSessionOptions& session_options,
              const WaveServiceOptions& options, FleetMetrics* metrics, std::ostream& out, std::ostream& err);

  // Runs every wave's schedule until `stop` is set (a running wave run ends and records its verdicts
  // first), after options.max_sessions, or with options.once after one run of each. `signal` is the
  // signal that set `stop` (0 = none), announced on `err`.
  WaveServiceTotals Run(std::atomic<bool>& stop, const std::atomic<int>& signal);

  // The metrics' precompute gauges: expected labels held by wave runs whose time has come, until
  // they end (bytes), and the wave runs computing them at their run's time (too little prepared
  // ahead). A run prepared ahead of its time counts from that time only: counted earlier, the
  // gauges would announce the run (threat-model.md T-SCHEDULE-SECRET).
  uint64_t HeldExpectedLabelBytes() const { return held_bytes_.load(); }
  int WavesPreparing() const { return preparing_.load(); }

 private:
  struct RunCounts;
  // `shown`: counted in WavesPreparing() (a preparation at the run's time, not ahead of it).
  // `hold_close_us`: a held wave's window close (wave_run.h PlanWave); 0 otherwise.
  PreparedWave Prepare(const Wave& wave, bool shown, uint64_t hold_close_us);
  // Before a wave's first run: its precompute time, estimated (microseconds; 0 when unknown).
  uint64_t EstimatePrepareUs(const Wave& wave);
  void Schedule(const Wave& wave, std::atomic<bool>& stop);
  // Returns whether every member passed (a held wave's members then held to its next run).
  bool RunOnce(const Wave& wave, PreparedWave prepared);
  RunCounts ReportRun(const Wave& wave, const std::vector<WaveMemberResult>& results);
  void AnnounceStop(int signal);

  const Inventory& inventory_;
  const std::vector<const Wave*> waves_;
  const Profile& profile_;
  const SessionKeys& keys_;
  Ledger& ledger_;
  LedgerRecordSink sink_;
  TcpSessionOptions session_options_;
  const WaveServiceOptions options_;
  FleetMetrics* const metrics_;
  std::ostream& out_;
  std::ostream& err_;

  std::atomic<uint64_t> prepared_bytes_{0};  // reserved by runs prepared ahead
  std::atomic<int> preparing_{0};
  std::atomic<uint64_t> held_bytes_{0};
  std::mutex mu_;  // guards totals_, running_ and the lines on err_
  WaveServiceTotals totals_;
  std::map<std::string, int64_t> running_;  // wave runs in progress: name -> latest end (Unix us)
  std::map<std::string, uint32_t> busy_in_a_row_;  // node -> its latest sessions refused as busy, in a row
  // Busy refusals in a row after which each further one is reported as an ERROR line.
  static constexpr uint32_t kBusyEscalation = 3;
  std::mutex label_us_mu_;          // guards label_us_
  std::optional<double> label_us_;  // MeasureExpectedLabelUs, measured once for every wave
};

}  // namespace wipeproof
