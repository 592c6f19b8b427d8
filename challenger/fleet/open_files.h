// Open files for wave runs. Every session of a wave run has its own kj event loop (an epoll
// descriptor, an eventfd and a signalfd: kj::setupAsyncIo) and two TCP connections to its agent
// (RPC and the round channel), so a wave run of N nodes holds about kOpenFilesPerSession * N
// descriptors at once, on top of stdio and the ledger. At the usual soft limit of 1024 that stops
// near 190 nodes: the sessions beyond it
// fail as `disconnected` ("Too many open files") or do not start at all. So `serve` raises the
// soft limit at start (up to the hard one) to what all its waves need together, and refuses a wave
// that still cannot fit (docs/operations.md "Load test"). Members on shared event loops (serve
// --session_loops) hold only their two connections; the count stays the larger one.
//
// Thread-safety: RaiseOpenFileLimit changes process state; call it once at start, before threads.
// The others are pure.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace wipeproof {

inline constexpr uint64_t kOpenFilesPerSession = 5;  // epoll, eventfd, signalfd, RPC, the round channel
inline constexpr uint64_t kOpenFilesBase = 64;       // stdio, the ledger (file, WAL, shm), slack
inline constexpr uint64_t kUnlimitedOpenFiles = UINT64_MAX;

// Descriptors `sessions` concurrent sessions need: kOpenFilesBase + kOpenFilesPerSession * sessions.
uint64_t OpenFilesNeeded(uint64_t sessions);

// Raises the soft RLIMIT_NOFILE to `wanted`, or to the hard limit when that is lower; never lowers
// it (only as far as needed: a huge soft limit slows code that walks every descriptor). Returns the
// soft limit now in force (kUnlimitedOpenFiles for RLIM_INFINITY). Errors: INTERNAL naming
// getrlimit or setrlimit.
StatusOr<uint64_t> RaiseOpenFileLimit(uint64_t wanted);

// OK when `sessions` concurrent sessions fit under an open-file limit of `limit`. Errors:
// RESOURCE_EXHAUSTED "<what> needs about N open files, the limit is L; raise it (ulimit -n, or
// LimitNOFILE= for a systemd unit)".
Status CheckOpenFileRoom(uint64_t sessions, uint64_t limit, const std::string& what);

}  // namespace wipeproof
