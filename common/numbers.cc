#include "common/numbers.h"

#include <cstdio>

namespace wipeproof {

std::string FormatFixed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

std::string FormatBytesHuman(uint64_t bytes) {
  constexpr uint64_t kMiB = uint64_t{1} << 20, kGiB = uint64_t{1} << 30;
  if (bytes >= kGiB) return FormatFixed(static_cast<double>(bytes) / kGiB, 2) + " GiB";
  if (bytes >= kMiB) return FormatFixed(static_cast<double>(bytes) / kMiB, 2) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace wipeproof
