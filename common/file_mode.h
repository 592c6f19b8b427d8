// A file's permission bits as people read them in messages: "0644", "1777" (st_mode & 07777, in
// octal, four digits). Header-only; thread-safe.
#pragma once

#include <sys/stat.h>

#include <cstdio>
#include <string>

namespace wipeproof {

inline std::string FileModeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace wipeproof
