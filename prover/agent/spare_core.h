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
// Whether `mode` is on for a machine with `hardware_threads` (std::thread::hardware_concurrency()).
bool SpareCoreEnabled(SpareCoreMode mode, unsigned hardware_threads);

}  // namespace wipeproof
