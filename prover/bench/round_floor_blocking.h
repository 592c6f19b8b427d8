// The blocking floors of a round's transport, beside the event-loop floors (round_floor.h): the
// same two messages (a ChallengeRound of q label indices, a RoundAnswer of q labels, flat Cap'n
// Proto on the stream) between two threads that each **block in read** on their own socket, with
// no event loop, no RPC system and no agent (the echo answers from a fixed buffer; the client
// checks the answer's round index and size only). It is what a round channel served by a thread
// blocking on its socket (docs/benchmarks.md "Where the transport's time goes: the floors") could
// reach on this machine. Paths:
//   - floor-blocking-in-process: a socketpair, the echo on its own thread;
//   - floor-blocking-tcp-loopback-plaintext: TCP on 127.0.0.1 with TCP_NODELAY at both ends;
//   - floor-blocking-tcp-loopback-tls13: the same under mutual TLS 1.3 with OpenSSL 3 directly (the
//     library under KJ's TLS layer), each end presenting the certificate of its own Ed25519 key
//     (proto/tls_certificate.h) and trusting only the other's, the client checking the echo's
//     certificate name, TLS 1.3 only, OpenSSL's default TLS 1.3 suites as `wipe` negotiates them,
//     no session tickets.
// Nothing here is the product's round path: no session, no checks, no lookups, no transcript.
//
// Thread-safety: MeasureBlockingFloor runs in its calling thread plus the echo's thread, which it
// joins before returning; one at a time.
#pragma once

#include <string>

#include "common/status.h"
#include "proto/crypto.h"
#include "prover/bench/round_bench.h"

namespace wipeproof {

// Whether `path` is one of the blocking floor paths above.
bool IsBlockingFloorPath(const std::string& path);

// `options.rounds` rounds of `options.labels_per_round` indices on `path`. The TLS path's echo
// presents `echo_key`'s certificate and trusts only `client_key`'s; the client the reverse; the
// other paths ignore the keys. Returns the round percentiles, the client's build, the transport
// (= the round) and each thread's CPU per round (the echo's in `agent_cpu_us`); the agent's stages
// stay zero. Errors: INVALID_ARGUMENT for a path that is not a blocking floor; UNAVAILABLE for the
// socket's or the TLS handshake's errors (an echo that no client reaches within 30 s gives up);
// INTERNAL when an answer has the wrong round index or size.
StatusOr<RoundPathResult> MeasureBlockingFloor(const RoundBenchOptions& options, const std::string& path,
                                               const proto::KeyPair& echo_key, const proto::KeyPair& client_key);

}  // namespace wipeproof
