#include "common/numbers.h"

#include <cstdio>

namespace wipeproof {

std::string FormatFixed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

}  // namespace wipeproof
