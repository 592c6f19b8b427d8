// The selftest's prover agents (docs/security-results.md, issue #6): one honest agent that speaks
// the real ProverAgent protocol over Cap'n Proto (verifies the authority-signed order, fills host
// vectors with the session's labels (kernels/region_labeler.h), signs the fill report and the
// transcript with the node key, answers rounds by lookup), and each adversary as that same agent
// with exactly one Deviation. The challenger side is the real SessionRunner, so every outcome is a
// real signed verdict.
//
// Not the production agent (prover/agent): that library links the GPU backends, and the challenger
// binary must not link a GPU runtime. Admission checks of the production agent (expiry, skew,
// replay of session ids) are tested in tests/agent_*; they are not what these adversaries attack.
//
// Simulated time. Every session runs on a FakeClock that moves only when an agent charges it:
//   fill            SimTiming::fill_us once per startSession
//   honest round    SimTiming::round_us per round (link + lookup of an honest node)
//   recompute (1a)  ceil(k / recompute_cores) * depth(m) * c_node * t_min per round in which k
//                   hidden chunks were challenged (a chunk's labels need depth(m) sequential node
//                   evaluations of c_node compressions each, t_min per compression; chunks are
//                   independent, so `recompute_cores` cores recompute that many at once). The
//                   labels are recomputed for real (they are correct); only the time is simulated,
//                   so a 2-core CI machine does not flatter the margin.
//   relay (2)       RelayAgent adds link_us per round on top of its helper's round_us.
//
// Thread-safety: an agent lives on the thread of the kj event loop it serves.
#pragma once

#include <kj/async-io.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "kernels/label_spec.h"
#include "proto/crypto.h"
#include "proto/signing.h"
#include "proto/transcript.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::selftest {

// The one way an adversary departs from the honest agent.
enum class DeviationKind {
  kNone,
  // 1. Keeps `hidden_fraction` of the chunks of every device unlabeled and answers there per
  //    `hidden_answer`.
  kHideChunks,
  // 3. Moves `relocate_chunks` chunks of the last planned device to host memory: outside the plan
  //    when host is not planned (room: `host_free_bytes`), else into the planned host region,
  //    overwriting as many host chunks as there is no free room for (those answer zeros).
  kRelocate,
  // 4. Fills `short_chunks` chunks fewer on the last device and reports them as held by other
  //    processes (a) or as a larger reserve (b).
  kUnderfillHeldByOthers,
  kUnderfillInflatedReserve,
  // 5. Serves `dedup_chunks` chunks of device 1 (all of them when 0) from device 0's copy at the
  //    same chunk offset.
  kDedup,
  // 6. Fills with other key material: the seed with one bit flipped, the other format, or m / 2.
  kWrongSeed,
  kWrongFormat,
  kWrongChunkLabels,
  // 7. Protocol cheats.
  kReplayAnswer,               // round r >= 1 answered with round r-1's answer message, verbatim
  kOtherRoundIndices,          // round r >= 1: correct labels of round r-1's indices, round r's header
  kReorderedAnswer,            // the first two labels of every answer swapped
  kReusedTranscriptSignature,  // this session's transcript payload under an earlier session's signature
  kPartialChunkProbe,          // records any device range that is not whole chunks and leaves its
                               // trailing partial chunk unlabeled (answers zeros there)
};

enum class HiddenAnswer {
  kRecompute,       // (a) recompute on demand (correct, charged on the simulated clock)
  kRandomBytes,     // (b) random bytes
  kEarlierSession,  // (c) the label of the same index under an earlier session's seed
};

enum class Placement { kRandom, kContiguous };

struct Deviation {
  DeviationKind kind = DeviationKind::kNone;
  double hidden_fraction = 0;  // kHideChunks: hidden chunks = round(f * chunks), per device
  Placement placement = Placement::kContiguous;
  HiddenAnswer hidden_answer = HiddenAnswer::kRandomBytes;
  uint64_t relocate_chunks = 0;
  uint64_t host_free_bytes = 0;  // kRelocate: room in unplanned host memory
  uint64_t short_chunks = 0;
  uint64_t dedup_chunks = 0;
};

struct SimTiming {
  int64_t fill_us = 1'000'000;  // charged once per fill
  int64_t round_us = 2;         // charged per round (honest link + lookup)
  // Recompute (1a): depth(m) * c_node * t_min per batch of recompute_cores chunks, picoseconds.
  uint64_t recompute_chunk_ps = 0;
  uint32_t recompute_cores = 64;
};

// What an adversary remembers across sessions (1c, 7d). Shared by the runs of one scenario.
struct AdversaryMemory {
  std::optional<std::array<uint8_t, kSeedBytes>> earlier_seed;
  std::optional<proto::SignedEnvelope> earlier_transcript;
};

// What an agent observed, for the runner's per-scenario checks.
struct AgentObservations {
  uint64_t hidden_chunks_challenged = 0;  // kHideChunks: hidden chunks asked, all rounds
  int64_t recompute_charged_us = 0;       // kHideChunks + kRecompute: simulated time charged
  uint64_t max_round_recompute_us = 0;    // ... largest single-round charge
  uint64_t partial_chunk_ranges = 0;      // devices whose range was not whole chunks of m
  uint64_t relocated_chunks = 0;          // kRelocate: chunks moved to host memory
  uint64_t overwritten_chunks = 0;        // kRelocate: host chunks lost for lack of room
};

class SelftestAgent final : public proto::ProverAgent::Server {
 public:
  // `clock`, `memory` and `seen` outlive the agent. `rng_seed` picks the adversary's choices
  // (which chunks to hide); the challenger's challenges come from its own CSPRNG.
  SelftestAgent(proto::PublicKey authority, proto::PublicKey challenger, proto::KeyPair node, Deviation deviation,
                SimTiming timing, FakeClock* clock, AdversaryMemory* memory, AgentObservations* seen,
                uint64_t rng_seed);

 protected:
  kj::Promise<void> startSession(StartSessionContext context) override;
  kj::Promise<void> round(RoundContext context) override;
  kj::Promise<void> finish(FinishContext context) override;
  kj::Promise<void> abort(AbortContext context) override;
  kj::Promise<void> status(StatusContext context) override;

 private:
  enum class ChunkState : uint8_t { kStored, kHidden, kRelocated, kOverwritten, kDeduped };
  struct Device {
    std::string selector;
    uint64_t first = 0;
    uint64_t count = 0;
    uint64_t capacity_bytes = 0;
    uint64_t allowed_reserve_bytes = 0;
    std::vector<uint8_t> labels;     // count * 32; chunks not kStored are zero
    std::vector<ChunkState> chunks;  // per chunk of m
  };

  // Writes label `g` of device `d` as this agent answers it; `recompute` collects hidden chunks.
  void AnswerLabel(size_t d, uint64_t g, uint8_t* out, std::set<std::pair<size_t, uint64_t>>* recompute);
  void ApplyStorageDeviation();
  void Release();

  proto::PublicKey authority_, challenger_;
  proto::KeyPair node_;
  Deviation deviation_;
  SimTiming timing_;
  FakeClock* clock_;
  AdversaryMemory* memory_;
  AgentObservations* seen_;
  std::mt19937_64 rng_;

  // The session.
  std::optional<proto::TranscriptHasher> hasher_;
  proto::Bytes session_id_;
  std::array<uint8_t, kSeedBytes> seed_{};
  LabelFormat format_ = LabelFormat::kC1;
  uint32_t m_ = 0;
  std::vector<Device> devices_;
  std::map<std::pair<size_t, uint64_t>, std::vector<uint8_t>> host_store_;  // kRelocated chunks
  std::optional<proto::Bytes> previous_answer_;                             // canonical RoundAnswer
  std::vector<std::vector<uint64_t>> previous_indices_;                     // [device][k]
};

// Adversary 2: forwards every call to a helper agent that holds the labels (over its own
// in-memory capnp connection) and adds `link_us` of simulated latency to every round.
class RelayAgent final : public proto::ProverAgent::Server {
 public:
  RelayAgent(kj::AsyncIoContext& io, kj::Own<proto::ProverAgent::Server> helper, FakeClock* clock, int64_t link_us);
  ~RelayAgent() noexcept(false);

 protected:
  kj::Promise<void> startSession(StartSessionContext context) override;
  kj::Promise<void> round(RoundContext context) override;
  kj::Promise<void> finish(FinishContext context) override;
  kj::Promise<void> abort(AbortContext context) override;
  kj::Promise<void> status(StatusContext context) override;

 private:
  struct Link;
  kj::Own<Link> link_;
  FakeClock* clock_;
  int64_t link_us_;
};

}  // namespace wipeproof::selftest
