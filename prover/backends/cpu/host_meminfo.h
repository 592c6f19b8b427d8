// Host memory figures from /proc/meminfo: MemTotal and MemAvailable (the kernel's estimate of
// memory that can be allocated without swapping). Parsed from text so tests can fake a machine.
// Thread-safety: pure functions (ReadMemInfo reads a file).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace wipeproof {

constexpr char kProcMeminfoPath[] = "/proc/meminfo";

struct HostMemInfo {
  uint64_t total_bytes = 0;      // MemTotal
  uint64_t available_bytes = 0;  // MemAvailable
};

// Parses /proc/meminfo text ("MemTotal:  24683620 kB" lines; kB means KiB).
// Errors: INVALID_ARGUMENT naming the missing or malformed field (MemAvailable needs Linux >= 3.14).
StatusOr<HostMemInfo> ParseMemInfo(const std::string& text);

// Reads and parses `path`. Errors: UNAVAILABLE when it cannot be read; ParseMemInfo's errors.
StatusOr<HostMemInfo> ReadMemInfo(const std::string& path = kProcMeminfoPath);

}  // namespace wipeproof
