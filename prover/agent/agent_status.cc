#include "prover/agent/agent_status.h"

namespace wipeproof {
namespace {

proto::DeviceKind WireKind(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kHost:
      return proto::DeviceKind::HOST;
    case DeviceKind::kCuda:
      return proto::DeviceKind::CUDA;
    case DeviceKind::kHip:
      return proto::DeviceKind::HIP;
  }
  return proto::DeviceKind::HOST;
}

}  // namespace

const char* AgentPhaseName(proto::AgentPhase phase) {
  switch (phase) {
    case proto::AgentPhase::IDLE:
      return "idle";
    case proto::AgentPhase::FILLING:
      return "filling";
    case proto::AgentPhase::READY:
      return "ready";
    case proto::AgentPhase::RELEASING:
      return "releasing";
  }
  return "unknown";
}

void WriteStatus(const AgentStatusSnapshot& status, proto::AgentStatus::Builder out) {
  out.setPhase(status.phase);
  out.setSessionId(proto::AsView(status.session_id));
  auto devices = out.initDevices(static_cast<unsigned>(status.devices.size()));
  for (size_t i = 0; i < status.devices.size(); ++i) {
    const DeviceProgress& d = status.devices[i];
    auto w = devices[static_cast<unsigned>(i)];
    w.setSelector(d.selector);
    w.setBytesHeld(d.bytes_held);
    w.setLabelsFilled(d.labels_filled);
    w.setLabelCount(d.label_count);
  }
  out.setPhaseSinceUnixUs(status.phase_since_unix_us);
  out.setFillMicros(status.fill_micros);
  out.setRoundsAnswered(status.rounds_answered);
  out.setLastRoundMicros(status.last_round_micros);
  out.setSessionsCompleted(status.sessions_completed);
  out.setLastError(status.last_error);
}

void WriteDescription(const NodeDescriptionInfo& info, proto::NodeDescription::Builder out) {
  out.setNodeKeyId(proto::AsView(info.node_key_id));
  out.setNodePublicKey(proto::AsView(info.node_public_key));
  out.setProtocolVersion(proto::PROTOCOL_VERSION);
  out.setAgentVersion(info.agent_version);
  auto devices = out.initDevices(static_cast<unsigned>(info.devices.size() + info.disabled.size()));
  unsigned at = 0;
  for (const DeviceInfo& d : info.devices) {
    auto w = devices[at++];
    w.setKind(WireKind(d.kind));
    w.setName(d.name);
    w.setStableId(d.id);
    w.setTotalBytes(d.total_bytes);
    w.setAvailableBytes(d.available_bytes);
  }
  // A disabled backend is listed by kind with its reason and no id (it has no usable device).
  for (const std::string& line : info.disabled) {
    auto w = devices[at++];
    const std::string kind = line.substr(0, line.find(':'));
    w.setKind(kind == "hip" ? proto::DeviceKind::HIP : proto::DeviceKind::CUDA);
    w.setName(kind);
    w.setDisabledReason(line);
  }
}

}  // namespace wipeproof
