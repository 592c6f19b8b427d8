// The prover agent's Prometheus metrics (docs/metrics.md has the table): what AgentCore reports as
// it happens (refusals, session ends, rounds, errors) and, at each scrape, its status and devices.
//
//   wipeproof_agent_info{node,version}                               gauge 1
//   wipeproof_agent_phase{phase}                                     gauge: 1 for the current phase
//                                                                    of idle, filling, ready, releasing
//   wipeproof_agent_session_info{session_id}                         gauge 1 while a session runs
//   wipeproof_agent_phase_since_timestamp_seconds                    gauge, Unix seconds
//   wipeproof_agent_device_total_bytes{device,uuid,model,node}       gauge: the device's memory
//   wipeproof_agent_device_planned_bytes{device,uuid,model,node}     gauge: labels planned * 32 (0 idle)
//   wipeproof_agent_device_bytes_held{device,uuid,model,node}        gauge: labels written * 32 (0 idle)
//   wipeproof_agent_fill_progress_ratio                              gauge 0..1 over the session's devices
//   wipeproof_agent_last_fill_duration_seconds                       gauge: the last completed fill
//   wipeproof_agent_rounds_answered_total                            counter
//   wipeproof_agent_round_lookup_seconds                             histogram: lookup time of a round
//   wipeproof_agent_sessions_total{outcome}                          counter: pass, fail, aborted,
//                                                                    disconnected, timed_out, error
//   wipeproof_agent_refusals_total{reason}                           counter: busy, signature, address,
//                                                                    order_time, replayed, devices
//   wipeproof_agent_last_error_timestamp_seconds                     gauge, Unix seconds (0: none yet)
// Labels: device = the selector ("host", "GPU-<uuid>", a PCI id), uuid = the NVIDIA UUID
// ("GPU-..." as DCGM exporter's UUID label; empty for host and HIP), model = the device name,
// node = the inventory name.
//
// Thread-safety: the On* methods are thread-safe and quick (atomics, the histogram's short
// mutex); AgentCore calls them under its own lock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/metrics_registry.h"
#include "common/status.h"

namespace wipeproof {

class AgentCore;

class AgentMetrics {
 public:
  // Registers the agent's families in `registry`. REQUIRES: `registry` outlives this object.
  AgentMetrics(MetricsRegistry& registry, std::string node_name, const std::string& version);

  // Adds a collector that reads `core`'s status (and its devices, once, now) at each scrape.
  // REQUIRES: `core` outlives the registry's last Render; call once.
  void CollectFrom(const AgentCore& core);

  // Reasons a refused order is counted under (refusals_total{reason}).
  static constexpr const char* kRefusedBusy = "busy";            // a session runs
  static constexpr const char* kRefusedSignature = "signature";  // envelope or signature
  static constexpr const char* kRefusedDelegation = "delegation";  // not under the authority's delegation
  static constexpr const char* kRefusedAddress = "address";      // another node, challenger or connection
  static constexpr const char* kRefusedTime = "order_time";      // expired, not yet valid, too long
  static constexpr const char* kRefusedReplayed = "replayed";    // session id seen before
  static constexpr const char* kRefusedDevices = "devices";      // plan does not match the devices
  void OnRefusal(const char* reason, int64_t now_unix_us);
  // A session ended: `completed` with a verdict (`pass` says which), or early for `why`.
  void OnSessionEnded(bool completed, bool pass, const Status& why, int64_t now_unix_us);
  void OnRoundAnswered(int64_t lookup_us);

  // The outcome label for a session that ended early for `why` (aborted, disconnected, timed_out, error).
  static const char* EarlyOutcome(const Status& why);

 private:
  const std::string node_name_;
  MetricsRegistry& registry_;
  GaugeFamily& phase_;
  GaugeFamily& session_info_;
  GaugeFamily& phase_since_;
  GaugeFamily& device_total_;
  GaugeFamily& device_planned_;
  GaugeFamily& device_held_;
  GaugeFamily& fill_progress_;
  GaugeFamily& last_fill_;
  Counter& rounds_;
  Histogram& lookup_;
  CounterFamily& sessions_;
  CounterFamily& refusals_;
  Gauge& last_error_;
};

}  // namespace wipeproof
