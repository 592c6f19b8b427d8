// What a cheating agent is told to do: the one way it departs from the honest agent
// (cheating_agent.h), with the parameters of that departure. Each kind is played by one cheat of
// adversary/cheats/ (cheats/make_cheat.h maps the kind to it); scenarios.h sets these for the
// selftest and the challenger's tests set them directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace wipeproof::adversary {

// The one way an agent departs from the honest one. Numbers are the adversaries of
// docs/results/security-results.md; the rest are faults the challenger's tests provoke.
enum class DeviationKind {
  kNone,
  // 1. Keeps some chunks of every device unlabeled (hidden_fraction at `placement`, or every
  //    stride-th chunk) and answers there per `hidden_answer`.
  kHideChunks,
  // 3. Moves `relocate_chunks` chunks of the last planned device to host memory: first outside the
  //    plan (room: `host_free_bytes`, the host's unplanned memory), then into the planned host
  //    region, overwriting as many host chunks as there is no free room for (those answer zeros).
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
  // 11. The borrower (occupancy windows): from its first occupancy round on (a round with every
  //    device at the order's occupancyLabels), drops hidden_fraction of every device's chunks (at
  //    random; they answer zeros) right after each occupancy answer and stays short for `borrow_us`
  //    of its clock, relabelling (really) before the first round that comes later; 0: for good.
  kBorrowBetweenRounds,
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
  kRefuseOrder,            // refuses every order: FAILED_PRECONDITION "busy: test refusal", or `note` when
                           // set (text never makes a refusal "busy": that is kAlwaysBusy's typed refusal)
  kAlwaysBusy,             // refuses every order with the real agent's typed busy refusal (BUSY "session
                           // ... in progress (filling)"), hoping a busy node is never counted as failed
  kDisconnectMidFill,      // calls `disconnect` during startSession and never answers
  kBusyAfterRefusedRound,  // holds its fill report, refuses the first round, then fails startSession
                           // with the typed busy refusal
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
  // kHideChunks, kEarlyFillReport, kDisconnectOnHidden, kDropAfterRounds: chunks left out =
  // round(f * chunks), per device
  double hidden_fraction = 0;
  Placement placement = Placement::kContiguous;
  uint64_t stride = 10;  // kHideChunks with Placement::kStrided
  HiddenAnswer hidden_answer = HiddenAnswer::kRandomBytes;
  uint64_t relocate_chunks = 0;
  uint64_t host_free_bytes = 0;  // kRelocate: room in host memory outside the plan (bytes)
  uint64_t short_chunks = 0;
  uint64_t dedup_chunks = 0;
  std::string note;                          // kUnderfill*: the fill report's note for the short device;
                                             // kRefuseOrder: the refusal's text when not empty
  uint32_t round = 2;                        // kLateRound, kHugeRoundError: the round index it happens in;
                                             // kDropAfterRounds: the rounds answered before the drop
  int64_t advance_us = 0;                    // kLateFill, kLateRound: simulated microseconds added;
                                             // kEarlyFillReport: how long after the report the rest is written
  size_t huge_text_bytes = size_t{5} << 20;  // kHuge*
  std::function<void()> disconnect;          // kDisconnectMidFill, kDisconnectOnHidden: cuts the connection
  std::function<void()> on_drop;             // kDropAfterRounds: called once, right after the drop
  int64_t borrow_us = 0;                     // kBorrowBetweenRounds: how long each borrow lasts (0: for good)
};

// The hostile text of the kHuge* deviations: "agent text\n\x01\xff" then 'x' up to `bytes`.
inline std::string HugeAgentText(size_t bytes) {
  std::string text = "agent text\n\x01\xff";
  if (text.size() < bytes) text.append(bytes - text.size(), 'x');
  return text;
}

}  // namespace wipeproof::adversary
