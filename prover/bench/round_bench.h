// The round benchmark behind `wipeproof-prover bench --what=rounds` (docs/benchmarks.md "Rounds"):
// a challenger-side RPC client against the real agent (AgentCore + AgentRpcServer, host memory
// through the real CPU backend, keys made for the run), each round asking q labels in distinct
// random chunks, timed on the monotonic clock from send to a verified answer (every label compared
// with the reference labeler's: a wrong label ends the run with an error). Three paths:
//   - in-process: over an in-memory pipe on one event loop, the connection taken as authenticated;
//   - tcp-loopback-plaintext: TCP on 127.0.0.1, the agent on its own thread and event loop (as
//     `serve`), the connection taken as the challenger's (the baseline of what TLS adds);
//   - tcp-loopback-tls13: the same with the mutual TLS 1.3 handshake `wipe` does (each end pinning
//     the other's certificate);
// and each again as channel-<path>: the session started over RPC, its rounds on a round channel
// (prover/agent/round_channel.h) over a second pipe or connection of the same kind.
// Besides the round time it reports where the time went: the agent's own stages (round_stages.h:
// checks, lookups, the answer, the transcript hash after the answer), the client's (building the
// round, checking the answer), and the rest (RPC, the pipe or TCP, TLS, both event loops) as the
// round time minus the agent's answer time; and instructions per round of each thread where the
// machine counts them (perf_event_open; a virtual machine often cannot: then "unavailable" and why).
//
// Thread-safety: RunRoundBench runs one benchmark at a time in its calling thread (plus the agent's
// thread for the TCP paths).
#pragma once

#include <time.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "prover/agent/round_polling.h"

namespace wipeproof {

struct RoundBenchOptions {
  uint32_t rounds = 2000;             // timed rounds per path
  uint32_t labels_per_round = 256;    // q: labels asked per round (one device: host memory)
  uint64_t session_labels = 1 << 20;  // labels held (32 bytes each): 32 MiB by default
  uint32_t chunk_labels = 256;        // m of the session (the round time does not depend on it)
  std::vector<std::string> paths = {"in-process", "tcp-loopback-plaintext", "tcp-loopback-tls13"};
  RoundPollingOptions polling;  // the TCP paths' agent loop, as `serve --round_polling` runs it
  bool transcript_thread = true;  // the agent hashes rounds on a thread of their own (`serve --transcript_thread`)
};

// Percentiles of one quantity over the rounds, microseconds.
struct Percentiles {
  double p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
};

// The paths RunRoundBench measures, as a user names them: the three above and the floors
// (round_floor.h on kj's event loop, round_floor_blocking.h on blocking sockets), comma-separated in the order `bench --what=rounds` runs them by default.
inline constexpr char kRoundBenchPaths[] =
    "in-process,tcp-loopback-plaintext,tcp-loopback-tls13,channel-in-process,channel-tcp-loopback-plaintext,"
    "channel-tcp-loopback-tls13,floor-raw-in-process,floor-in-process,"
    "floor-tcp-loopback-plaintext,floor-tcp-loopback-tls13,floor-blocking-in-process,"
    "floor-blocking-tcp-loopback-plaintext,floor-blocking-tcp-loopback-tls13";
bool IsRoundBenchPath(const std::string& path);

// The monotonic clock, and a thread's CPU clock (CLOCK_THREAD_CPUTIME_ID or pthread_getcpuclockid's),
// in nanoseconds.
int64_t MonotonicNs();
int64_t CpuClockNs(clockid_t clock);

// Nearest-rank p50, p99, p99.9 and the maximum of durations in nanoseconds, as microseconds; all
// zero when `ns` is empty.
Percentiles PercentilesOf(std::vector<int64_t> ns);

struct RoundPathResult {
  std::string path;
  uint32_t rounds = 0;
  uint32_t labels_per_round = 0;
  Percentiles round;             // send to verified answer, the challenger's clock
  Percentiles agent_checks;      // RoundStages::checks_ns
  Percentiles agent_lookups;     // RoundStages::lookups_ns
  Percentiles agent_answer;      // RoundStages::answer_ns (the answer's agentMicros, finer)
  Percentiles agent_transcript;  // RoundStages::transcript_ns (after the answer went out)
  Percentiles client_build;      // drawing the indices and building the request
  Percentiles client_check;      // comparing every label with the expected one
  Percentiles transport;         // round minus agent_answer: RPC, pipe/TCP, TLS, event loops
  // Instructions per round (user space) of the client's thread and of the agent's event-loop
  // thread (in-process: one thread, both sides, in `client_instructions`); -1 when not counted.
  double client_instructions = -1, agent_instructions = -1;
  // CPU time per round (microseconds) of the same threads: stabler than times on a shared machine
  // where instructions are not counted. agent_cpu_us -1 in process (one thread: client_cpu_us).
  double client_cpu_us = -1, agent_cpu_us = -1;
  std::string instructions_unavailable;  // why they are not counted, or empty
  double tls_handshake_p50_us = -1;      // tcp-loopback-tls13: connect to a completed handshake, 20 times
  // The 1-, 5- and 15-minute load averages (getloadavg) read as this path started; -1 when unreadable.
  std::array<double, 3> load_average{-1, -1, -1};
};

// Runs the paths of `options` in order. Errors: INVALID_ARGUMENT for an unknown path or a size out
// of range (rounds in [1, 1e6], labels_per_round in [1, 4096] and at most the session's chunks,
// chunk_labels a power of two in [2, 2^20]), the agent's or the network's errors, INTERNAL when an
// answer carries a wrong label.
StatusOr<std::vector<RoundPathResult>> RunRoundBench(const RoundBenchOptions& options);

}  // namespace wipeproof
