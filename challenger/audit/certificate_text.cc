#include "challenger/audit/certificate_text.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace wipeproof {
namespace {

using Json = nlohmann::json;

// A value for an error message: its compact JSON, shortened past 120 characters.
std::string Shown(const Json& value) {
  std::string text = value.dump(-1, ' ', true, Json::error_handler_t::replace);
  if (text.size() > 120) text = text.substr(0, 100) + "... (" + std::to_string(text.size()) + " characters)";
  return text;
}

std::string Child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

std::string Difference(const Json& given, const Json& want, const std::string& path) {
  const std::string where = path.empty() ? "the document" : path;
  if (given.type() != want.type()) {
    return where + " is " + Shown(given) + ", recomputed: " + Shown(want);
  }
  if (given.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!given.contains(it.key())) return Child(path, it.key()) + " is missing";
      const std::string d = Difference(given.at(it.key()), it.value(), Child(path, it.key()));
      if (!d.empty()) return d;
    }
    for (auto it = given.begin(); it != given.end(); ++it) {
      if (!want.contains(it.key())) return Child(path, it.key()) + " is not expected (" + Shown(it.value()) + ")";
    }
    return "";
  }
  if (given.is_array()) {
    for (size_t i = 0; i < given.size() && i < want.size(); ++i) {
      const std::string d = Difference(given[i], want[i], path + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    if (given.size() != want.size()) {
      return where + " lists " + std::to_string(given.size()) + " items, recomputed: " + std::to_string(want.size());
    }
    return "";
  }
  if (given != want) return where + " is " + Shown(given) + ", recomputed: " + Shown(want);
  return "";
}

}  // namespace

std::string CanonicalJsonText(const Json& value) {
  return value.dump(2, ' ', /*ensure_ascii=*/true, Json::error_handler_t::replace) + "\n";
}

std::string FloatText(double value) {
  if (std::isnan(value)) return "nan";  // C prints "-nan" for some NaNs, Python never
  char text[40];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

nlohmann::ordered_json FloatsAsText(const nlohmann::ordered_json& value) {
  if (value.is_number_float()) return FloatText(value.get<double>());
  if (!value.is_structured()) return value;
  nlohmann::ordered_json out = value.is_object() ? nlohmann::ordered_json::object() : nlohmann::ordered_json::array();
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) out[it.key()] = FloatsAsText(it.value());
  } else {
    for (const auto& item : value) out.push_back(FloatsAsText(item));
  }
  return out;
}

std::string FirstJsonDifference(const Json& given, const Json& want) { return Difference(given, want, ""); }

std::string FirstTextDifference(const std::string& given, const std::string& want) {
  size_t at = 0, line = 1, column = 1;
  while (at < given.size() && at < want.size() && given[at] == want[at]) {
    if (given[at] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    ++at;
  }
  if (at == given.size() && at == want.size()) return "";
  auto byte = [](const std::string& text, size_t i) {
    if (i >= text.size()) return std::string("the end");
    const auto c = static_cast<unsigned char>(text[i]);
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02x", c);
    if (c == '\t') return std::string("a tab (") + hex + ")";
    if (c == '\n') return std::string("a newline (") + hex + ")";
    if (c == '\r') return std::string("a carriage return (") + hex + ")";
    if (c == ' ') return std::string("a space (") + hex + ")";
    if (c > 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "' (" + hex + ")";
    return std::string(hex);
  };
  return "byte " + std::to_string(at) + " (line " + std::to_string(line) + ", column " + std::to_string(column) +
         "): " + byte(given, at) + ", canonical: " + byte(want, at);
}

}  // namespace wipeproof
