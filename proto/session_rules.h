// The rules a session's messages follow (docs/protocol.md), with one home for every side that
// applies them: the challenger's live check (challenger/session/session_runner.h), the audit of its
// records (challenger/audit/session_audit.h), the agent (prover/agent/agent_core.h) and the
// cheating agent's honest path (adversary/). Each is a pure function of the delegated order
// and the messages. The checks return OK, or INVALID_ARGUMENT whose message says what broke the
// rule, peer fields quoted through common/peer_text.h; the caller decides what a broken rule means
// to it (a failure reason, an audit problem, a refused round) and adds its own context.
//
// Units: labels for indices and counts, bytes for sizes.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::proto {

// One challenged label: the device (its index into WipeOrder.devices) and the global label index.
struct ChallengedLabel {
  uint16_t device = 0;
  uint64_t label = 0;
};

// A round fits its order: every device it challenges is planned and challenged once, and every
// label index lies in that device's range [firstLabel, firstLabel + labelCount). On OK, `labels`
// (when given) holds the round's labels in the order an answer carries them.
// Errors: INVALID_ARGUMENT "devices[i]: device index d out of range (the plan has n)", "device
// index d challenged twice", "device 'SEL': label index g is outside its range [a, b)".
Status CheckRoundFitsOrder(WipeOrder::Reader order, ChallengeRound::Reader round,
                           std::vector<ChallengedLabel>* labels = nullptr);

// A proof round: every planned device, each with exactly its labelsPerRound indices. Holding rounds
// carry fewer (challenger/session/challenges.h), so a round's shape tells the two apart; the bound
// counts proof rounds only. REQUIRES: CheckRoundFitsOrder(order, round) is OK.
bool IsProofRound(WipeOrder::Reader order, ChallengeRound::Reader round);

// An occupancy round: every planned device, each with exactly its occupancyLabels indices (the
// order asks a window; validate.h keeps that shape apart from a proof round's).
// REQUIRES: CheckRoundFitsOrder(order, round) is OK.
bool IsOccupancyRound(WipeOrder::Reader order, ChallengeRound::Reader round);

// An answer fits its round: a well-formed message (proto/validate.h), the round's session and
// round index, and 32 bytes per label the round asks.
// Errors: INVALID_ARGUMENT naming the first that does not hold ("session id differs from the
// order's", "answers round 4, expected 3", "8160 label bytes, expected 8192", a shape problem).
Status CheckAnswerFitsRound(ChallengeRound::Reader round, RoundAnswer::Reader answer);

// A node's fill notice belongs to this order: its session, the order's digest (`order_digest`:
// BLAKE2b-256 of the signed payload), the order's node key id, and a planned device (its selector
// and first label); with `expected_device`, the notice of that device.
Status CheckNoticeFitsOrder(WipeOrder::Reader order, const Digest& order_digest, DeviceFillNotice::Reader notice,
                            std::optional<uint16_t> expected_device = std::nullopt);

// A node's fill report belongs to this order: its session, the order's digest and node key id,
// and the order's devices in the order's order (selector and first label of each).
Status CheckReportFitsOrder(WipeOrder::Reader order, const Digest& order_digest, FillReport::Reader report);

// A device's fill holds its plan: at least labelCount labels and labelCount * 32 bytes. The
// message says what it holds, what was needed (capacity less the allowed reserve, rounded down to
// whole chunks: the plan) and what other processes held, and quotes the agent's note.
Status CheckFillHoldsPlan(DevicePlan::Reader plan, DeviceFill::Reader fill);

// A round as answered, for ChunksChecked.
struct AnsweredRound {
  ChallengeRound::Reader round;  // fits the order (CheckRoundFitsOrder)
  bool all_correct = false;      // its answer fits it and every label is right
  bool in_time = false;          // answered within the round deadline
};

// N_d, per order device: the distinct chunks (label index / m) of the device challenged in the proof
// rounds among the leading rounds that were all correct and in time; counting stops at the first
// round that was not. The verdict's chunksChecked, and so its bound, rest on these.
std::vector<uint64_t> ChunksChecked(WipeOrder::Reader order, const std::vector<AnsweredRound>& rounds);

}  // namespace wipeproof::proto
