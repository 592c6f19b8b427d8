// A minimal JSON writer for wipeproof-gpu-check (the minimal GPU build has no JSON library):
// objects built field by field, in insertion order, numbers with 6 significant digits, non-finite
// numbers as null.
// Thread-safety: a Json is a value; no shared state.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace wipeproof {
namespace gpu {

inline std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

class Json {
 public:
  Json& Set(const std::string& key, const std::string& raw_json) {
    fields_.emplace_back(key, raw_json);
    return *this;
  }
  Json& Str(const std::string& key, const std::string& v) { return Set(key, Quote(v)); }
  Json& Num(const std::string& key, double v) {
    if (!std::isfinite(v)) return Set(key, "null");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return Set(key, buf);
  }
  Json& Int(const std::string& key, uint64_t v) { return Set(key, std::to_string(v)); }
  Json& Bool(const std::string& key, bool v) { return Set(key, v ? "true" : "false"); }
  Json& Obj(const std::string& key, const Json& v) { return Set(key, v.Dump()); }
  Json& Arr(const std::string& key, const std::vector<Json>& items) {
    std::string s = "[";
    for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i].Dump();
    return Set(key, s + "]");
  }
  std::string Dump() const {
    std::string s = "{";
    for (size_t i = 0; i < fields_.size(); ++i)
      s += (i ? ", " : "") + Quote(fields_[i].first) + ": " + fields_[i].second;
    return s + "}";
  }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

}  // namespace gpu
}  // namespace wipeproof
