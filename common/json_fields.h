// Typed reads of JSON configuration objects (the challenger's inventory, parameter profiles, adversary classes) with errors that name the
// field's path, e.g. "nodes[2].devices[0].capacity_bytes: want an unsigned integer, got \"16G\"".
// Unknown keys are errors too, so a misspelt optional field is never silently ignored; so are
// duplicate keys (ParseJsonText).
//
// Thread-safety: stateless helpers over the caller's objects.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace wipeproof {

// A JSON object and the path naming it in errors ("" for the document root).
class JsonObject {
 public:
  // Errors: INVALID_ARGUMENT "<path>: want an object" when `value` is not an object.
  static StatusOr<JsonObject> Of(const nlohmann::json& value, std::string path);

  const std::string& path() const { return path_; }
  // "nodes[0].name" for key "name" under path "nodes[0]".
  std::string PathOf(const std::string& key) const;
  bool Has(const std::string& key) const { return json_->contains(key); }
  const nlohmann::json& Get(const std::string& key) const { return (*json_)[key]; }

  // INVALID_ARGUMENT "<path>: unknown field 'x' (known: a, b, c)" for any key not in `known`.
  Status CheckKnownKeys(std::initializer_list<const char*> known) const;

  // Required fields: INVALID_ARGUMENT "<path>.key: missing" when absent, or naming the wrong type.
  Status String(const std::string& key, std::string* out) const;
  Status Uint64(const std::string& key, uint64_t* out) const;
  Status Double(const std::string& key, double* out) const;
  Status Bool(const std::string& key, bool* out) const;

  // Optional fields: leave *out unchanged when absent; type errors as above.
  Status OptionalString(const std::string& key, std::string* out) const;
  Status OptionalUint64(const std::string& key, uint64_t* out) const;
  Status OptionalDouble(const std::string& key, double* out) const;
  Status OptionalBool(const std::string& key, bool* out) const;

 private:
  JsonObject(const nlohmann::json* json, std::string path) : json_(json), path_(std::move(path)) {}
  const nlohmann::json* json_;
  std::string path_;
};

// Parses `text` as JSON. A key that appears twice in one object is refused (the parser would keep
// the last value silently, and a copy-paste slip would go unnoticed).
// Arrays and objects nested deeper than kMaxJsonNesting (common/json_nesting.h) are refused before
// parsing. Time and memory are linear in the size of `text`.
// Errors: INVALID_ARGUMENT "<what>: JSON nested deeper than 64 levels",
// "<what>: not valid JSON: <parser message>", or
// "<what>: nodes[0].devices[1].capacity_bytes: duplicate key (a key may appear only once in an object)".
StatusOr<nlohmann::json> ParseJsonText(const std::string& text, const std::string& what);

// Every file of both binaries read whole into memory (inventory, profiles, classes, authority
// documents, calibration claims, documents to sign) is read through ReadTextFile: configuration files
// are small, so one over kMaxConfigFileBytes (16 MiB) is refused at once, before any byte is read.
inline constexpr uint64_t kMaxConfigFileBytes = uint64_t{16} << 20;

// Reads a whole file, refusing a file over `max_bytes` (by its size, before reading) with
// INVALID_ARGUMENT "<path>: N bytes, over the limit of <max_bytes in MiB> (<why>)" (why: the limit's
// reason, or nothing), and anything but a regular file (a FIFO would block for ever).
// Errors: NOT_FOUND, PERMISSION_DENIED, INVALID_ARGUMENT (too large, not a regular file), INTERNAL,
// each naming `path`.
StatusOr<std::string> ReadTextFile(const std::string& path, uint64_t max_bytes = kMaxConfigFileBytes,
                                   const std::string& why = "");

}  // namespace wipeproof
