// Settings for what wants a core nothing else uses: round polling (round_polling.h) and the
// transcript's thread (session_transcript.h). Each helps only where such a core exists: on a machine
// with few hardware threads the extra busy thread and the others preempt each other, and a round
// then waits a scheduler tick (4 ms at HZ = 250) or a wake-up instead of getting faster
// (docs/benchmarks.md "Rounds": on the 2-core reference VM polling raised calibrate's honest p99.9 to
// about 4 ms, and the transcript's thread made rounds over TCP slower). `auto` turns either on only
// with at least kSpareCoreMinThreads hardware threads.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

namespace wipeproof {

inline constexpr unsigned kSpareCoreMinThreads = 8;

// on, off, or auto (on with at least kSpareCoreMinThreads hardware threads).
enum class SpareCoreMode { kAuto, kOn, kOff };
// "auto", "on", "off"; false for any other text.
bool SpareCoreModeFromName(const std::string& name, SpareCoreMode* mode);
// Whether `mode` is on for a machine with `hardware_threads` (UsableHardwareThreads()).
bool SpareCoreEnabled(SpareCoreMode mode, unsigned hardware_threads);

// The hardware threads this process may run on: its CPU affinity mask's count (sched_getaffinity:
// taskset, a systemd CPUAffinity=, a Kubernetes static CPU policy), else
// std::thread::hardware_concurrency(). A cgroup CPU quota (cpu.max) is not seen.
unsigned UsableHardwareThreads();

}  // namespace wipeproof
