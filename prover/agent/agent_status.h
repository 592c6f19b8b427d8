// What AgentCore reports about itself: the status RPC's AgentStatus and the describe RPC's
// NodeDescription as plain values (testable without capnp), and their writers into the wire
// structs (wipe.capnp).
//
// Thread-safety: values; the writers are pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/crypto.h"
#include "proto/wipe.capnp.h"
#include "prover/backends/backend.h"

namespace wipeproof {

struct DeviceProgress {
  std::string selector;
  uint64_t bytes_held = 0;     // bytes holding labels so far (labels_filled * 32)
  uint64_t labels_filled = 0;  // labels written so far
  uint64_t label_count = 0;    // labels planned
};

struct AgentStatusSnapshot {
  proto::AgentPhase phase = proto::AgentPhase::IDLE;
  proto::Bytes session_id;              // 16 bytes; empty when idle
  std::vector<DeviceProgress> devices;  // the session's devices; empty when idle
  int64_t phase_since_unix_us = 0;      // Unix us
  uint64_t fill_micros = 0;             // microseconds: last fill (0 if none yet)
  uint32_t rounds_answered = 0;         // in the current session
  uint32_t last_round_micros = 0;       // microseconds
  uint64_t sessions_completed = 0;      // finished with a transcript since start
  std::string last_error;               // last refusal or abort reason
  uint64_t bytes_acquired = 0;          // bytes of device memory the session holds (acquired, not
                                        // only labelled); 0 when idle. Not on the wire.
};

struct NodeDescriptionInfo {
  proto::KeyId node_key_id{};
  proto::PublicKey node_public_key{};
  std::string agent_version;
  std::vector<DeviceInfo> devices;    // enabled devices, now
  std::vector<std::string> disabled;  // "cuda: disabled: <reason>" (BackendSet::DisabledNow)
};

// "idle", "filling", "ready" or "releasing" (the schema's names): refusal texts and metric labels.
const char* AgentPhaseName(proto::AgentPhase phase);

void WriteStatus(const AgentStatusSnapshot& status, proto::AgentStatus::Builder out);
void WriteDescription(const NodeDescriptionInfo& info, proto::NodeDescription::Builder out);

}  // namespace wipeproof
