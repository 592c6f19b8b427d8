// The cheating prover: one ProverAgent server that speaks the real protocol over Cap'n Proto and is
// honest unless its Deviation says how to cheat. Honest, it verifies the authority-signed order,
// fills host vectors with the session's labels (kernels/region_labeler.h), signs the fill report
// and the transcript with the node key (proto/node_messages.h) and answers rounds by lookup. Each
// deviation departs from that in exactly one way. The selftest (challenger/selftest, scenarios in
// scenarios.h) and the challenger's tests run it against the real SessionRunner, so every outcome
// is a real signed verdict.
//
// Not the production agent (prover/agent): that one links the GPU backends, and the challenger
// binary, which runs the selftest, must not link a GPU runtime. The production agent's admission
// checks (expiry, skew, replayed session ids) are tested in tests/prover/agent_*; they are not what
// these deviations attack.
//
// Simulated time. With a FakeClock (Options::sim_clock) the agent charges it for what it would
// take:
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

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "kernels/label_spec.h"
#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/signing.h"
#include "proto/transcript.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::adversary {

// The one way an agent departs from the honest one. Numbers are the adversaries of
// docs/results/security-results.md; the rest are faults the challenger's tests provoke.
enum class DeviationKind {
  kNone,
  // 1. Keeps some chunks of every device unlabeled (hidden_fraction at `placement`, or every
  //    stride-th chunk) and answers there per `hidden_answer`.
  kHideChunks,
  // 3. Moves `relocate_chunks` chunks of the last planned device to host memory: outside the plan
  //    when host is not planned (room: `host_free_bytes`), else into the planned host region,
  //    overwriting as many host chunks as there is no free room for (those answer zeros).
  kRelocate,
  // 3c. Moves `relocate_chunks` chunks of device 0 into the allowed reserve (capacity - planned) of
  //    device 1, as many as fit there, and answers them from there: every label answers, while
  //    device 0 keeps that much memory of its own unwiped (a checkpoint's room).
  kRelocateToReserve,
  // 4. Fills `short_chunks` chunks fewer on the last device and reports them as held by other
  //    processes (a) or as a larger reserve (b), with `note` (a default when empty).
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
  kShortAnswer,                // every answer one label (32 bytes) short
  kReusedTranscriptSignature,  // this session's transcript payload under an earlier session's signature
  kEarlyFillReport,            // reports every device filled while hidden_fraction of its chunks are not
                               // written yet; they are `advance_us` simulated us after the report
  kDisconnectOnHidden,         // hides hidden_fraction of the chunks; cuts the connection (`disconnect`)
                               // when a round asks for one, hoping to be run again with fresh draws
  // 9. The wave shell game: after answering `round` rounds (the count it expects, as a v1 order
  //    disclosed), drops hidden_fraction of every device's chunks (they answer zeros) to make room
  //    for a neighbour's checkpoint, and calls `on_drop` (the neighbour then relabels).
  kDropAfterRounds,
  kWithholdNotice,      // reports the fill but never answers deviceFilled for its last device
  kLateNoticeDiffers,   // answers deviceFilled for its last device 200 ms after the report, with a
                        // notice claiming 32 bytes more than the report says of that device
  kPartialChunkProbe,   // records any device range that is not whole chunks and leaves its
                        // trailing partial chunk unlabeled (answers zeros there)
  kWrongRoundIndex,     // answers round r as round r+1
  kTamperedReport,      // flips a payload byte of the signed fill report
  kTranscriptMismatch,  // signs a transcript digest with one bit flipped
  // Timing faults (need sim_clock): the clock moves `advance_us` inside startSession (kLateFill)
  // or inside round `round` (kLateRound).
  kLateFill,
  kLateRound,
  // Connection faults.
  kRefuseOrder,        // refuses every order: FAILED_PRECONDITION "busy: test refusal", or `note` when
                       // set (e.g. the real agent's "session ... in progress (filling)")
  kDisconnectMidFill,  // calls `disconnect` during startSession and never answers
  // Hostile texts (HugeAgentText(huge_text_bytes)): a wipeproof Status, a plain exception or a
  // DISCONNECTED exception from startSession; a Status from round `round` and the abort that
  // follows; a Status from finish.
  kHugeRefusal,
  kHugeException,
  kHugeDisconnect,
  kHugeRoundError,
  kHugeFinishError,
};

enum class HiddenAnswer {
  kRecompute,       // (a) recompute on demand (correct, charged on the simulated clock)
  kRandomBytes,     // (b) random bytes
  kEarlierSession,  // (c) the label of the same index under an earlier session's seed
  kZeros,           // the memory was simply never written
};

enum class Placement {
  kRandom,      // hidden_fraction of the chunks, chosen at random
  kContiguous,  // hidden_fraction of the chunks, one contiguous run (as a checkpoint would be)
  kStrided,     // every stride-th chunk from chunk 0
};

struct Deviation {
  DeviationKind kind = DeviationKind::kNone;
  double hidden_fraction = 0;  // kHideChunks: hidden chunks = round(f * chunks), per device
  Placement placement = Placement::kContiguous;
  uint64_t stride = 10;  // kHideChunks with Placement::kStrided
  HiddenAnswer hidden_answer = HiddenAnswer::kRandomBytes;
  uint64_t relocate_chunks = 0;
  uint64_t host_free_bytes = 0;  // kRelocate: room in unplanned host memory (bytes)
  uint64_t short_chunks = 0;
  uint64_t dedup_chunks = 0;
  std::string note;                          // kUnderfill*: the fill report's note for the short device;
                                             // kRefuseOrder: the refusal's text when not empty
  uint32_t round = 2;                        // kLateRound, kHugeRoundError: the round index it happens in
  int64_t advance_us = 0;                    // kLateFill, kLateRound: simulated microseconds added
  size_t huge_text_bytes = size_t{5} << 20;  // kHuge*
  std::function<void()> disconnect;          // kDisconnectMidFill, kDisconnectOnHidden: cuts the connection
  std::function<void()> on_drop;             // kDropAfterRounds: called once, right after the drop
};

// The hostile text of the kHuge* deviations: "agent text\n\x01\xff" then 'x' up to `bytes`.
std::string HugeAgentText(size_t bytes);

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

// What an agent did and saw, for assertions and the selftest's per-scenario checks.
struct AgentLog {
  int orders = 0;                                          // startSession calls
  std::chrono::steady_clock::time_point first_order_at{};  // real time of the first startSession
  // Real time of the last fill message answered (the report or a device's notice), and of the first
  // proof-shaped round received (every planned device at exactly its labelsPerRound): the selftest's
  // wave check orders these across members, whose simulated clocks differ.
  std::chrono::steady_clock::time_point filled_at{};
  std::chrono::steady_clock::time_point first_proof_round_at{};
  int rounds = 0;                                          // round calls that got past the shape check
  int finishes = 0;
  int aborts = 0;
  std::string abort_reason;  // of the last abort
  bool holds_memory = false;
  uint64_t hidden_chunks_challenged = 0;  // kHideChunks: hidden chunks asked, all rounds
  int64_t recompute_charged_us = 0;       // kHideChunks + kRecompute: simulated time charged
  uint64_t max_round_recompute_us = 0;    // ... largest single-round charge
  uint64_t partial_chunk_ranges = 0;      // devices whose range was not whole chunks of m
  uint64_t relocated_chunks = 0;          // kRelocate: chunks moved to host memory
  uint64_t overwritten_chunks = 0;        // kRelocate: host chunks lost for lack of room
  // Bytes of each planned device's declared capacity that held no label of the session when the
  // rounds ran (capacity - bytes of labels stored there, whichever device's labels they are).
  std::vector<uint64_t> unlabeled_bytes;
};

struct AgentKeys {
  proto::PublicKey authority{};   // orders must verify under it
  proto::PublicKey challenger{};  // verdicts must verify under it
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
  enum class ChunkState : uint8_t { kStored, kHidden, kRelocated, kOverwritten, kDeduped, kPending };
  struct Device {
    std::string selector;
    uint64_t first = 0;
    uint64_t count = 0;
    uint64_t capacity_bytes = 0;
    uint64_t allowed_reserve_bytes = 0;
    uint32_t labels_per_round = 0;   // q_d of the order
    std::vector<uint8_t> labels;     // count * 32; chunks not kStored are zero
    std::vector<ChunkState> chunks;  // per chunk of m
  };

  // Writes label `g` of device `d` as this agent answers it; `recompute` collects hidden chunks.
  void AnswerLabel(size_t d, uint64_t g, uint8_t* out, std::set<std::pair<size_t, uint64_t>>* recompute);
  void ApplyStorageDeviation();
  // Drops round(hidden_fraction * chunks) chunks of every device, chosen at random, as `state`.
  void DropChunks(ChunkState state);
  kj::Promise<void> Fill(StartSessionContext context);
  void Charge(int64_t micros);
  int64_t NowUnixUs() const;
  int64_t NowMonotonicUs() const;
  void Release();

  const AgentKeys keys_;
  CheatingAgentOptions options_;
  const Deviation& deviation_;
  AdversaryMemory own_memory_;
  AdversaryMemory* memory_;
  AgentLog own_log_;
  AgentLog* log_;
  std::mt19937_64 rng_;

  // The session.
  std::optional<proto::TranscriptHasher> hasher_;
  proto::Bytes session_id_;
  std::array<uint8_t, kSeedBytes> seed_{};
  LabelFormat format_ = LabelFormat::kC1;
  uint32_t m_ = 0;
  std::vector<Device> devices_;
  std::vector<proto::SignedEnvelope> notices_;                              // per device, signed at the fill
  std::map<std::pair<size_t, uint64_t>, std::vector<uint8_t>> host_store_;  // kRelocated chunks
  std::map<size_t, uint64_t> relocated_into_;            // device -> bytes of other devices' labels kept there
  std::optional<proto::Held<proto::WipeOrder>> order_;  // the session's, verified
  std::optional<proto::Bytes> previous_answer_;          // canonical RoundAnswer
  std::vector<std::vector<uint64_t>> previous_indices_;  // [device][k]
  uint32_t rounds_answered_ = 0;
  bool gated_ = false;            // startSession waits at options_.fill_gate
  int64_t pending_ready_us_ = 0;  // kEarlyFillReport: simulated time when the pending chunks exist
};

}  // namespace wipeproof::adversary
