// The selftest's scenarios: the honest agent and adversaries 1-7 and 9-11 of docs/results/security-results.md, each
// a Deviation of the cheating agent (cheating_agent.h) on a small node, with the outcome the
// challenger must reach and the detection rate theory predicts. challenger/selftest runs them
// through the real SessionRunner and judges the measured rates against these.
//
// Setup (SelftestSetup, every scenario the same unless it says otherwise): one node with one planned
// device "GPU-selftest-0" of 32 chunks of m = 256 labels (256 KiB) plus a 4096-byte allowed reserve;
// profile c1, R = 3 rounds, q = 4 labels per device per round, round deadline 7 us, calibrated for
// class selftest-cpu (t_min 40 ns, safety 2: recompute floor 1.5*m*t_min/2 = 7.68 us; a class of
// the selftest's own, so that the small m keeps round times in whole microseconds), honest p99.9
// 5 us; honest agents take 2 us per round on the simulated clock (cheating_agent.h). The profile
// and the class file are signed by the selftest's authority key (as `calibrate` and `sign` would),
// unless the scenario's ProfileDocument says otherwise.
//
// Theoretical detection rate of an adversary whose labels are missing (or wrong) in a fraction f of
// a device's chunks: 1 - (1-f)^N, with N = q_d * R the labels challenged on that device over the
// session (each lands in a hidden chunk with probability f). The challenger draws the q_d chunks of
// a round without replacement (challenger/session/challenges.h), so the exact rate is higher:
//   exact = 1 - (C(C-h, q) / C(C, q))^R       (C chunks, h of them hidden)
// and the 1 - (1-f)^N formula is a lower bound of it. Deterministic cheats have f = 1 (rate 1);
// adversaries expected to pass have f = 0 (rate 0).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adversary/cheating_agent.h"
#include "kernels/label_spec.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::adversary {

struct SelftestSetup {
  uint32_t chunk_labels = 256;        // m
  uint64_t device_chunks = 32;        // chunks per planned device
  uint64_t gpu_reserve_bytes = 4096;  // allowed reserve of the selftest GPU model
  uint32_t rounds = 3;                // R
  uint32_t labels_per_round = 4;      // q per device
  uint64_t round_deadline_us = 7;
  uint64_t honest_round_p999_us = 5;
  // The adversary class the profile is calibrated for (challenger/parameters AdversaryClass).
  std::string adversary_class = "selftest-cpu";
  uint64_t t_min_ps = 40'000;  // picoseconds per sequential compression ruled out
  double safety_factor = 2.0;
  uint64_t relocation_reserve_chunks = 16;  // 3c: allowed reserve of each GPU, in chunks of m
  SimTiming timing;                         // recompute_chunk_ps filled from depth(m)
  uint64_t graph_depth = 0;                 // min output depth of the graph for m (graph_metrics.h)
};

// The setup above with graph_depth and timing.recompute_chunk_ps = depth * c_node(c1) * t_min.
SelftestSetup DefaultSelftestSetup();

enum class NodeKind {
  kOneGpu,              // GPU-selftest-0 only
  kHostAndGpu,          // host (32 chunks, no reserve; its whole physical memory) then GPU-selftest-0
  kHostPartlyPlanned,   // as kHostAndGpu, but the node's physical host memory is twice the host plan
  kTwoGpus,             // GPU-selftest-0, GPU-selftest-1
  kGpuOddCapacity,      // GPU-selftest-0 whose capacity is not whole chunks (+1..chunk-1 bytes, per run)
  kTwoGpusLargeReserve  // GPU-selftest-0, GPU-selftest-1, each with relocation_reserve_chunks chunks
                        // of allowed reserve (model selftest-gpu-reserve)
};

// How a scenario's sessions run.
enum class ScenarioSetting {
  kLoneSession,  // one session of the node over an in-memory pipe
  // The node (node-a, the scenario's agent) and an honest neighbour (node-b, GPU-selftest-0 only)
  // in one complete wave, in step as `serve` runs a wave: node-b is still filling when node-a drops
  // (its fill report waits for node-a's Deviation::on_drop). Judged on node-a's outcome; node-b
  // must pass every run (challenger/selftest/selftest_wave.h).
  kWaveOfTwo,
  // Before each session, a third party with its own key sends a copy of the session's signed order
  // to the agent over TCP and TLS, as the agent is served (adversary/agent_server.h: the real
  // agent's TLS channel, pinned to the challenger's certificate); then the challenger runs the
  // session over the pipe.
  kCopiedOrderFirst,
};

// The parameter profile document a scenario's sessions run under.
enum class ProfileDocument {
  kSigned,    // signed by the authority, its class from the authority's signed class file
  kUnsigned,  // the same profile, not signed
  kTampered,  // signed, then altered (the round deadline lowered by 1 us): the signature fails
  // A rogue challenger host: it holds the authority's delegation, which lists only the signed
  // profile, and orders under a class the authority did not sign (the signed profile's t_min
  // raised 100-fold, still named as the authority's document).
  kUndelegated,
};

enum class ScenarioCheck {
  kNone,
  kHostNotPlanned,
  kNoPartialChunk,
  kBoundStated,
  kNoBoundFromProfile,        // passes, states no bound, and says the profile is not the authority's
  kNodeBoundCoversRelocation,  // passes with a bound that covers the node's unlabeled bytes (every
                               // device's capacity not holding labels, as the agent left it), and
                               // labels the per-device figures as diagnostics
  kWaveInStep,         // kWaveOfTwo: node-b passes; node-b's fill was released by node-a's drop; node-a's
                       // first proof round came after its drop (rounds before it are holding rounds);
                       // the wave verdict passes exactly when node-a passed
  kCopiedOrderRefused  // kCopiedOrderFirst: the third party's startSession failed and no connection of
                       // its reached the agent (no order seen, no memory held)
};

struct ScenarioSpec {
  std::string id;     // "1a-recompute-contiguous"
  int adversary = 0;  // 0 honest, 1-7 and 9-11 as in docs/results/security-results.md
  std::string title;
  std::string description;
  NodeKind node = NodeKind::kOneGpu;
  ScenarioSetting setting = ScenarioSetting::kLoneSession;
  LabelFormat format = LabelFormat::kC1;
  Deviation deviation;
  int64_t relay_link_us = -1;  // >= 0: a RelayAgent (relay_agent.h) with this added round latency in front
  // > 0: the order asks an occupancy window (challenger/session/occupancy_bound.h) of this length on
  // the session's clock, mean gap occupancy_mean_gap_us of real time, b = a quarter of the planned
  // bytes, occupancy_labels labels per round, and a pool of exactly occupancy_rounds rounds (the
  // window ends when they are used up, before its length on the simulated clock).
  uint64_t occupancy_window_us = 0;
  uint64_t occupancy_mean_gap_us = 0;
  uint32_t occupancy_labels = 0;
  uint32_t occupancy_rounds = 0;
  bool prime = false;          // one uncounted honest session first (AdversaryMemory)
  proto::FailureReason expected = proto::FailureReason::NONE;
  ScenarioCheck check = ScenarioCheck::kNone;
  ProfileDocument profile = ProfileDocument::kSigned;
  // Theory: f of the device's chunks missing, N labels challenged there, chunks C, hidden h.
  double f = 0;
  uint64_t n = 0;
  uint64_t chunks = 0;
  uint64_t hidden = 0;
  std::string n_meaning;
  double theory = 0;  // 1 - (1-f)^N
  double exact = 0;   // 1 - (C(C-h,q)/C(C,q))^R; = theory when f is 0 or 1
};

// Every scenario, in report order.
std::vector<ScenarioSpec> SelftestScenarios(const SelftestSetup& setup);

}  // namespace wipeproof::adversary
