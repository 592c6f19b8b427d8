// The limit on locked (mlock'd, never swapped) memory: RLIMIT_MEMLOCK, which CAP_IPC_LOCK (held by
// root unless dropped) lifts. The host backend checks it before mapping anything, so a node that
// cannot pin its memory fails with a message naming the limit to raise instead of half-acquiring.
// Thread-safety: pure functions (ReadMemlockLimit reads process state).
#pragma once

#include <cstdint>

#include "common/status.h"

namespace wipeproof {

struct MemlockLimit {
  bool unlimited = false;     // RLIMIT_MEMLOCK soft limit is RLIM_INFINITY
  uint64_t limit_bytes = 0;   // the soft limit when !unlimited
  bool cap_ipc_lock = false;  // CAP_IPC_LOCK is effective: the limit does not apply
  uint64_t locked_bytes = 0;  // bytes this process has locked already (VmLck), counted against the limit
};

// The current process's limit (getrlimit, /proc/self/status CapEff and VmLck).
MemlockLimit ReadMemlockLimit();

// OK when `bytes` more can be locked. Errors: RESOURCE_EXHAUSTED naming the current limit in bytes
// and how to raise it (`ulimit -l unlimited`, systemd `LimitMEMLOCK=infinity`, or CAP_IPC_LOCK).
Status CheckMemlockLimit(uint64_t bytes, const MemlockLimit& limit);

// VmLck of this process in bytes (0 when unreadable).
uint64_t ProcessLockedBytes();

}  // namespace wipeproof
