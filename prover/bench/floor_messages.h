// The messages and the result every round floor shares (round_floor.h on kj's event loop,
// round_floor_blocking.h on blocking sockets): the client's round, the echo's answer, the client's
// check of it, and the path's result.
//
// Thread-safety: pure functions (the draw's generator is the caller's).
#pragma once

#include <capnp/message.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/wipe.capnp.h"
#include "prover/bench/round_bench.h"

namespace wipeproof {

// Round `r` of q indices drawn from `random` (below `session_labels`) as `message`'s root, for
// session id zero and device 0.
void BuildFloorRound(capnp::MessageBuilder& message, uint32_t r, uint32_t q, uint64_t session_labels,
                     std::mt19937_64& random);

// The echo's answer to `round` in `message`: its session id and round index, as many labels from
// `labels` (32 bytes each) as it asks (at most all of them).
void BuildFloorAnswer(proto::ChallengeRound::Reader round, const std::vector<uint8_t>& labels,
                      capnp::MallocMessageBuilder& message);
// The first segment's words BuildFloorAnswer needs for `round`.
unsigned FloorAnswerWords(proto::ChallengeRound::Reader round, const std::vector<uint8_t>& labels);

// INTERNAL naming what differs unless `answer` is of round `r` and carries q labels.
Status CheckFloorAnswer(proto::RoundAnswer::Reader answer, uint32_t r, uint32_t q);

// A floor path's result: its rounds' percentiles, all transport (no agent), and the client's CPU per
// round from `client_cpu_ns` over all of them.
RoundPathResult FloorResult(const std::string& path, const RoundBenchOptions& options, std::vector<int64_t> round_ns,
                            int64_t client_cpu_ns);

}  // namespace wipeproof
