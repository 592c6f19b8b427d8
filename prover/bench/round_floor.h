// The floor of a round's transport, beside the round benchmark (round_bench.h; docs/benchmarks.md
// "Rounds"): the same two messages a round exchanges, a ChallengeRound of q label indices and a
// RoundAnswer of q labels (32 bytes each), serialized with Cap'n Proto and framed on the stream as
// flat messages (capnp/serialize-async.h), **without the RPC system and without the agent**: the
// echo side answers from a fixed buffer, and the client checks the answer's round index and size
// only. It is what a round transport other than Cap'n Proto RPC could reach on this machine over
// the same streams, and so splits a round's transport time into the machine's share (syscalls,
// wake-ups, TCP, TLS) and the RPC system's. Paths, named like the benchmark's:
//   - floor-raw-in-process: the two messages' byte counts written and read on a blocking
//     socketpair by one thread, with no event loop and no serialization: the system calls alone;
//   - floor-in-process: both ends on one event loop over a socketpair, as the in-process path;
//   - floor-tcp-loopback-plaintext: the echo on its own thread and event loop, TCP on 127.0.0.1;
//   - floor-tcp-loopback-tls13: the same over mutual TLS 1.3 (the channels the caller made).
// Nothing here is the product's round path: no session, no checks, no lookups, no transcript.
//
// Thread-safety: MeasureRoundFloor runs in its calling thread (plus the echo's thread for the TCP
// paths), one at a time.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "proto/tls_channel.h"
#include "prover/bench/round_bench.h"

namespace wipeproof {

// Whether `path` is one of the floor paths above.
bool IsRoundFloorPath(const std::string& path);

// `options.rounds` rounds of `options.labels_per_round` indices on `path`. The TLS path needs both
// channels (server: the echo's, client: the caller's, each pinning the other); the others ignore
// them. Returns the round percentiles, the client's build, the transport (= the round) and the CPU
// per round of each thread; the agent's stages stay zero. Errors: INVALID_ARGUMENT for a path that
// is not a floor path or a TLS path without channels; UNAVAILABLE for the stream's errors;
// INTERNAL when an answer has the wrong round index or size.
StatusOr<RoundPathResult> MeasureRoundFloor(const RoundBenchOptions& options, const std::string& path,
                                            std::shared_ptr<proto::TlsChannel> server_tls,
                                            std::unique_ptr<proto::TlsChannel> client_tls);

}  // namespace wipeproof
