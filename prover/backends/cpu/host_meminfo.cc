#include "prover/backends/cpu/host_meminfo.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace wipeproof {
namespace {

// Finds "<field>:" at the start of a line and returns its value in bytes.
StatusOr<uint64_t> FieldBytes(const std::string& text, const std::string& field) {
  const std::string key = field + ":";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    if (text.compare(pos, key.size(), key) == 0) {
      std::istringstream line(text.substr(pos + key.size(), eol - pos - key.size()));
      uint64_t value = 0;
      std::string unit;
      if (!(line >> value)) return InvalidArgumentError("meminfo: malformed " + field + " line");
      line >> unit;
      if (unit.empty()) return value;  // bytes (no such field today, but harmless)
      if (unit != "kB") return InvalidArgumentError("meminfo: unknown unit '" + unit + "' for " + field);
      return value * 1024;
    }
    pos = eol + 1;
  }
  return InvalidArgumentError("meminfo: no " + field + " field");
}

}  // namespace

StatusOr<HostMemInfo> ParseMemInfo(const std::string& text) {
  HostMemInfo info;
  WP_ASSIGN_OR_RETURN(info.total_bytes, FieldBytes(text, "MemTotal"));
  WP_ASSIGN_OR_RETURN(info.available_bytes, FieldBytes(text, "MemAvailable"));
  return info;
}

StatusOr<HostMemInfo> ReadMemInfo(const std::string& path) {
  std::ifstream in(path);
  if (!in) return UnavailableError("cannot read " + path + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return ParseMemInfo(text.str());
}

}  // namespace wipeproof
