// The cheating prover: one ProverAgent server that speaks the real protocol over Cap'n Proto and is
// honest unless its Deviation says how to cheat. Honest, it verifies the challenger-signed order and its delegation,
// fills host vectors with the session's labels (kernels/region_labeler.h), signs the fill report
// and the transcript with the node key (proto/node_messages.h) and answers rounds by lookup. Each
// deviation (deviation.h) departs from that in exactly one way: this class runs the honest protocol
// and calls, at each step, the hooks of the one cheat its Deviation maps to (cheats/cheat.h; one
// file per family of adversaries in cheats/). The selftest (challenger/selftest, scenarios in
// scenarios.h) and the challenger's tests run it against the real SessionRunner, so every outcome
// is a real signed verdict.
//
// Not the production agent (prover/agent): that one links the GPU backends, and the challenger
// binary, which runs the selftest, must not link a GPU runtime. The production agent's admission
// checks (expiry, skew, replayed session ids) are tested in tests/prover/agent_*; they are not what
// these deviations attack.
//
// Simulated time (sim_time.h). With a FakeClock (Options::sim_clock) the agent charges it for what it
// would take:
//   fill            SimTiming::fill_us once per startSession
//   honest round    SimTiming::round_us per round (link + lookup of an honest node)
//   recompute (1a)  ceil(k / recompute_cores) * recompute_chunk_ps per round in which k hidden
//                   chunks were challenged (a chunk's labels need depth(m) sequential node
//                   evaluations of c_node compressions each, t_min per compression; chunks are
//                   independent, so `recompute_cores` cores recompute that many at once). The labels
//                   are recomputed for real (they are correct); only the time is simulated, so a
//                   2-core CI machine does not flatter the margin.
// Without one (an agent served over TCP) nothing is charged and timestamps come from the system
// clock.
//
// Thread-safety: an agent lives on the thread of the kj event loop it serves.
#pragma once

#include <kj/timer.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "adversary/agent_log.h"
#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"
#include "adversary/held_labels.h"
#include "adversary/sim_time.h"
#include "common/clock.h"
#include "proto/crypto.h"
#include "proto/signing.h"
#include "proto/transcript.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::adversary {

struct AgentKeys {
  proto::PublicKey authority{};   // the delegation an order carries must verify under it
  proto::PublicKey challenger{};  // orders and verdicts must verify under it
  proto::KeyPair node;            // signs fill reports and transcripts
};

struct CheatingAgentOptions {
  Deviation deviation;
  SimTiming timing;
  FakeClock* sim_clock = nullptr;     // when set: simulated time is charged to it
  AdversaryMemory* memory = nullptr;  // when set: shared across agents (else the agent's own)
  AgentLog* log = nullptr;            // when set: filled in as the agent runs
  uint64_t rng_seed = 1;              // the adversary's own choices (which chunks to hide)
  int fill_threads = 1;               // labeler threads per device fill
  // When set (with `timer`), startSession does not fill before fill_gate() is true: it checks again
  // every 100 us of real time (a node whose fill is held back by its neighbour's state).
  std::function<bool()> fill_gate;
  kj::Timer* timer = nullptr;
};

class CheatingAgent final : public proto::ProverAgent::Server {
 public:
  // Pointers in `options` outlive the agent. The challenger's challenges come from its own CSPRNG.
  CheatingAgent(AgentKeys keys, CheatingAgentOptions options);

 protected:
  kj::Promise<void> startSession(StartSessionContext context) override;
  kj::Promise<void> round(RoundContext context) override;
  kj::Promise<void> finish(FinishContext context) override;
  kj::Promise<void> abort(AbortContext context) override;
  kj::Promise<void> status(StatusContext context) override;
  kj::Promise<void> deviceFilled(DeviceFilledContext context) override;

 private:
  // Fills every planned device of the verified order with `filled`'s labels (all chunks kStored).
  Status FillDevices(proto::WipeOrder::Reader order, const RegionSpec& filled);
  // Bytes of each device's capacity that hold no label of the session, for AgentLog::unlabeled_bytes.
  std::vector<uint64_t> UnlabeledBytes() const;
  // What the fill report says of each device, as filled.
  std::vector<proto::DeviceFillFacts> FillFacts() const;
  // Writes the labels of `answered` (per entry of the round's devices) to `answer`.
  void WriteLabels(const Challenge& asked, const std::vector<std::vector<uint64_t>>& answered,
                   proto::RoundAnswer::Builder answer);
  // Writes label `g` of device `d` as this agent holds it.
  void AnswerLabel(size_t d, uint64_t g, uint8_t* out);
  void Release();

  const AgentKeys keys_;
  CheatingAgentOptions options_;
  AdversaryMemory own_memory_;
  AdversaryMemory* memory_;
  AgentLog own_log_;
  AgentLog* log_;
  std::mt19937_64 rng_;
  AgentClock clock_;

  // The session.
  std::optional<proto::TranscriptHasher> hasher_;
  proto::Bytes session_id_;
  HeldLabels held_;
  std::vector<proto::SignedEnvelope> notices_;          // per device, signed at the fill
  std::optional<proto::Held<proto::WipeOrder>> order_;  // the session's, verified
  bool gated_ = false;                                  // startSession waits at options_.fill_gate

  std::unique_ptr<Cheat> cheat_;  // options_.deviation's, built once
};

}  // namespace wipeproof::adversary
