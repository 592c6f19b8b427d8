#include "common/numbers.h"

#include <cstdio>

namespace wipeproof {

std::string FormatFixed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

std::string FormatBytesHuman(uint64_t bytes) {
  if (bytes >= kGiB) return FormatFixed(static_cast<double>(bytes) / kGiB, 2) + " GiB";
  if (bytes >= kMiB) return FormatFixed(static_cast<double>(bytes) / kMiB, 2) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace wipeproof
