#include "prover/agent/agent_metrics.h"

#include <utility>

#include "common/hex.h"
#include "proto/label_wire.h"
#include "prover/agent/agent_core.h"
#include "prover/agent/agent_status.h"

namespace wipeproof {

namespace {

const std::vector<std::string> kDeviceLabels = {"device", "uuid", "model", "node"};
// Seconds: 10 us to 1 s; a round's lookups take microseconds on the host, more on a busy GPU.
const std::vector<double> kLookupBuckets = {1e-5, 2.5e-5, 5e-5,   1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3,
                                            5e-3, 1e-2,   2.5e-2, 5e-2, 0.1,    0.25, 1};

}  // namespace

AgentMetrics::AgentMetrics(MetricsRegistry& registry, std::string node_name, const std::string& version)
    : node_name_(std::move(node_name)),
      registry_(registry),
      phase_(registry.AddGauge("wipeproof_agent_phase",
                               "The agent's phase: 1 for the current one of idle, filling, ready, releasing.",
                               {"phase"})),
      session_info_(registry.AddGauge("wipeproof_agent_session_info",
                                      "1 while a session runs, labelled with its id (32 hex digits).", {"session_id"})),
      phase_since_(
          registry.AddGauge("wipeproof_agent_phase_since_timestamp_seconds", "Unix time the current phase began.", {})),
      device_total_(registry.AddGauge("wipeproof_agent_device_total_bytes", "Memory the device has.", kDeviceLabels)),
      device_planned_(registry.AddGauge("wipeproof_agent_device_planned_bytes",
                                        "Bytes of labels the running session plans on the device (0 when idle).",
                                        kDeviceLabels)),
      device_held_(registry.AddGauge("wipeproof_agent_device_bytes_held",
                                     "Bytes of labels the device holds for the running session (0 when idle).",
                                     kDeviceLabels)),
      fill_progress_(registry.AddGauge("wipeproof_agent_fill_progress_ratio",
                                       "Labels written over labels planned, all devices of the running session "
                                       "(0 when idle).",
                                       {})),
      last_fill_(registry.AddGauge("wipeproof_agent_last_fill_duration_seconds",
                                   "Order arrival to fill report of the last completed fill (0: none yet).", {})),
      rounds_(registry.AddCounter("wipeproof_agent_rounds_answered_total", "Challenge rounds answered.", {})
                  .WithLabels({})),
      lookup_(registry
                  .AddHistogram("wipeproof_agent_round_lookup_seconds",
                                "Time to look up and sign into the transcript one round's labels.", {}, kLookupBuckets)
                  .WithLabels({})),
      sessions_(registry.AddCounter(
          "wipeproof_agent_sessions_total",
          "Sessions ended, by outcome: pass, fail (a verdict), aborted, disconnected, timed_out, error.", {"outcome"})),
      refusals_(registry.AddCounter(
          "wipeproof_agent_refusals_total",
          "Orders refused, by reason: busy, signature, delegation, address, order_time, replayed, devices.", {"reason"})),
      last_error_(registry
                      .AddGauge("wipeproof_agent_last_error_timestamp_seconds",
                                "Unix time of the last refusal or early session end (0: none yet).", {})
                      .WithLabels({})) {
  registry.AddGauge("wipeproof_agent_info", "The agent's node name and version.", {"node", "version"})
      .WithLabels({node_name_, version})
      .Set(1);
  // Every known label value from the start, so rates and alerts see a 0 before the first event.
  for (const char* outcome : {"pass", "fail", "aborted", "disconnected", "timed_out", "error"}) {
    sessions_.WithLabels({outcome});
  }
  for (const char* reason :
       {kRefusedBusy, kRefusedSignature, kRefusedDelegation, kRefusedAddress, kRefusedTime, kRefusedReplayed, kRefusedDevices}) {
    refusals_.WithLabels({reason});
  }
  last_fill_.WithLabels({});
  fill_progress_.WithLabels({});
}

void AgentMetrics::CollectFrom(const AgentCore& core) {
  struct Device {
    std::string id;
    std::vector<std::string> labels;
    uint64_t total_bytes;
  };
  std::vector<Device> devices;
  for (const DeviceInfo& d : core.Describe().devices) {
    const std::string uuid = d.id.rfind("GPU-", 0) == 0 ? d.id : "";
    devices.push_back({d.id, {d.id, uuid, d.name, node_name_}, d.total_bytes});
  }
  registry_.AddCollector([this, &core, devices] {
    const AgentStatusSnapshot s = core.GetStatus();
    const std::string current = AgentPhaseName(s.phase);
    for (const char* p : {"idle", "filling", "ready", "releasing"}) phase_.WithLabels({p}).Set(current == p ? 1 : 0);
    session_info_.Clear();
    if (!s.session_id.empty()) session_info_.WithLabels({HexEncode(s.session_id.data(), s.session_id.size())}).Set(1);
    phase_since_.WithLabels({}).Set(static_cast<double>(s.phase_since_unix_us) / 1e6);
    last_fill_.WithLabels({}).Set(static_cast<double>(s.fill_micros) / 1e6);
    double planned_all = 0;
    double held_all = 0;
    for (const Device& d : devices) {
      uint64_t planned = 0;
      uint64_t held = 0;
      for (const DeviceProgress& p : s.devices) {
        if (p.selector != d.id) continue;
        planned = p.label_count * proto::kLabelBytes;
        held = p.bytes_held;
      }
      device_total_.WithLabels(d.labels).Set(static_cast<double>(d.total_bytes));
      device_planned_.WithLabels(d.labels).Set(static_cast<double>(planned));
      device_held_.WithLabels(d.labels).Set(static_cast<double>(held));
      planned_all += static_cast<double>(planned);
      held_all += static_cast<double>(held);
    }
    fill_progress_.WithLabels({}).Set(planned_all > 0 ? held_all / planned_all : 0);
  });
}

void AgentMetrics::OnRefusal(const char* reason, int64_t now_unix_us) {
  refusals_.WithLabels({reason}).Increment();
  last_error_.Set(static_cast<double>(now_unix_us) / 1e6);
}

const char* AgentMetrics::EarlyOutcome(const Status& why) {
  switch (why.code()) {
    case StatusCode::kDeadlineExceeded:
      return "timed_out";
    case StatusCode::kUnavailable:
      return "disconnected";
    case StatusCode::kFailedPrecondition:
      return why.message().rfind("aborted", 0) == 0 ? "aborted" : "error";
    default:
      return "error";
  }
}

void AgentMetrics::OnSessionEnded(bool completed, bool pass, const Status& why, int64_t now_unix_us) {
  sessions_.WithLabels({completed ? (pass ? "pass" : "fail") : EarlyOutcome(why)}).Increment();
  if (!completed) last_error_.Set(static_cast<double>(now_unix_us) / 1e6);
}

void AgentMetrics::OnRoundAnswered(int64_t lookup_us) {
  rounds_.Increment();
  lookup_.Observe(static_cast<double>(lookup_us) / 1e6);
}

}  // namespace wipeproof
