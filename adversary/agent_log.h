// What a cheating agent (cheating_agent.h) keeps beyond one session: what it remembers for the
// next one (AdversaryMemory, which 1c and 7d answer from) and what it did and saw (AgentLog, for the
// tests' assertions and the selftest's per-scenario checks).
//
// Thread-safety: written on the agent's event-loop thread; read once the agent is done.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/label_spec.h"
#include "proto/signing.h"

namespace wipeproof::adversary {

// What an adversary remembers across sessions (1c, 7d). Shared by the runs of one scenario.
struct AdversaryMemory {
  std::optional<std::array<uint8_t, kSeedBytes>> earlier_seed;
  std::optional<proto::SignedEnvelope> earlier_transcript;
};

// What an agent did and saw, for assertions and the selftest's per-scenario checks.
struct AgentLog {
  int orders = 0;                                          // startSession calls
  std::chrono::steady_clock::time_point first_order_at{};  // real time of the first startSession
  // Real time of the last fill message answered (the report or a device's notice), and of the first
  // proof-shaped round received (every planned device at exactly its labelsPerRound): the selftest's
  // wave check orders these across members, whose simulated clocks differ.
  std::chrono::steady_clock::time_point filled_at{};
  std::chrono::steady_clock::time_point first_proof_round_at{};
  int rounds = 0;  // round calls that got past the shape check
  int finishes = 0;
  int aborts = 0;
  std::string abort_reason;  // of the last abort
  bool holds_memory = false;
  uint64_t hidden_chunks_challenged = 0;  // kHideChunks, kEarlyFillReport, kDisconnectOnHidden: chunks
                                          // asked that it did not hold, all rounds
  int64_t recompute_charged_us = 0;       // kHideChunks + kRecompute: simulated time charged
  uint64_t max_round_recompute_us = 0;    // ... largest single-round charge
  uint64_t partial_chunk_ranges = 0;      // devices whose range was not whole chunks of m
  uint64_t relocated_chunks = 0;          // kRelocate, kRelocateToReserve: chunks moved elsewhere
  uint64_t overwritten_chunks = 0;        // kRelocate: host chunks lost for lack of room
  // Bytes of each planned device's declared capacity that held no label of the session when the
  // rounds ran (capacity - bytes of labels stored there, whichever device's labels they are).
  std::vector<uint64_t> unlabeled_bytes;
};

}  // namespace wipeproof::adversary
