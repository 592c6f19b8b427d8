// What a prover agent is configured with (`wipeproof-prover serve` flags, or tests): the keys it
// trusts and signs with, its node name, its limits on host memory, and its time policy.
//
// Units: microseconds for durations and Unix times, bytes for memory.
// Thread-safety: a value; AgentCore keeps its own copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/progress_line.h"
#include "proto/crypto.h"
#include "prover/agent/round_stages.h"

// The project version (CMake PROJECT_VERSION), set by prover/agent/CMakeLists.txt.
#ifndef WIPEPROOF_VERSION_STRING
#define WIPEPROOF_VERSION_STRING "unknown"
#endif

namespace wipeproof {

class AgentMetrics;  // prover/agent/agent_metrics.h

// Defaults (also the flag defaults of `serve`).
inline constexpr int64_t kDefaultClockSkewUs = 300'000'000;                // 5 min between node and challenger
inline constexpr uint64_t kDefaultSessionTimeoutUs = 3'600'000'000;        // 1 h: default and cap of an order's
inline constexpr int64_t kDefaultMaxOrderLifetimeUs = 86'400'000'000;      // 24 h: expiresAt - issuedAt
inline constexpr uint64_t kDefaultHostReserveBytes = uint64_t{256} << 20;  // left to the OS and the agent
inline constexpr size_t kDefaultReplayCapacity = 65536;                    // session ids remembered

struct AgentConfig {
  proto::PublicKey authority_key{};   // verifies the Delegation an order carries (proto/delegation.h)
  proto::PublicKey challenger_key{};  // verifies WipeOrder envelopes (under that delegation) and Verdicts
  proto::KeyPair node_key;                                                   // signs FillReport and TranscriptDigest
  std::string node_name;                                                     // must equal WipeOrder.nodeName
  std::string agent_version = "wipeproof-prover " WIPEPROOF_VERSION_STRING;  // NodeDescription.agentVersion

  // Orders are accepted only while issuedAt - skew <= now < expiresAt + skew (agent's wall clock),
  // and only if issuedAt is not before the agent started (no skew allowed there: order_checks.h).
  int64_t clock_skew_us = kDefaultClockSkewUs;
  // Orders valid for longer than this (expiresAt - issuedAt) are refused: the replay set must
  // remember an id until its order expires, so this bounds how long it holds each one.
  int64_t max_order_lifetime_us = kDefaultMaxOrderLifetimeUs;
  // Used when an order's sessionTimeoutUs is 0, and as the cap on any order's value.
  uint64_t session_timeout_us = kDefaultSessionTimeoutUs;

  // Host memory ("host" device): at most host_budget_bytes (0: no budget), and never more than
  // MemAvailable - host_reserve_bytes.
  uint64_t host_budget_bytes = 0;
  uint64_t host_reserve_bytes = kDefaultHostReserveBytes;
  // Worker threads of the host fill; 0: the hardware's, minus one per GPU filled alongside.
  int host_fill_threads = 0;

  // The fill's progress in the log (fill_progress.h): never, auto (once a fill runs 2 s), always.
  ProgressMode fill_progress = ProgressMode::kAuto;

  // Session ids remembered for replay refusal (see seen_sessions.h).
  size_t replay_capacity = kDefaultReplayCapacity;

  // Where the core reports refusals, session ends and rounds (--metrics_listen); null: nowhere.
  // Not owned; must outlive the core.
  AgentMetrics* metrics = nullptr;
  // Each session's rounds hashed into its transcript on a thread of its own, so the next round
  // never waits for the hash (session_transcript.h); false: on the answering thread after the
  // answer went out. `serve --transcript_thread` (auto: with at least 8 hardware threads).
  bool transcript_thread = true;

  // Where the core reports each answered round's stages (round_stages.h; the round benchmark);
  // empty: not measured. Called after the answer went out, once the round is hashed: on the
  // transcript's thread (transcript_thread), else under the core's lock. Must be quick, thread-safe
  // and must not call the core.
  RoundStagesSink round_stages;
};

}  // namespace wipeproof
