#include "common/json_fields.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <vector>

#include "common/json_nesting.h"

namespace wipeproof {

namespace {

std::string Shown(const nlohmann::json& value) {
  std::string s = value.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

Status TypeError(const std::string& path, const char* want, const nlohmann::json& got) {
  return InvalidArgumentError(path + ": want " + want + ", got " + Shown(got));
}

}  // namespace

StatusOr<JsonObject> JsonObject::Of(const nlohmann::json& value, std::string path) {
  if (!value.is_object()) return TypeError(path.empty() ? "document" : path, "an object", value);
  return JsonObject(&value, std::move(path));
}

std::string JsonObject::PathOf(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

Status JsonObject::CheckKnownKeys(std::initializer_list<const char*> known) const {
  for (auto it = json_->begin(); it != json_->end(); ++it) {
    bool found = false;
    for (const char* k : known) found = found || it.key() == k;
    if (found) continue;
    std::string list;
    for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return InvalidArgumentError((path_.empty() ? std::string("document") : path_) + ": unknown field '" + it.key() +
                                "' (known: " + list + ")");
  }
  return Status::Ok();
}

Status JsonObject::String(const std::string& key, std::string* out) const {
  if (!Has(key)) return InvalidArgumentError(PathOf(key) + ": missing");
  return OptionalString(key, out);
}
Status JsonObject::Uint64(const std::string& key, uint64_t* out) const {
  if (!Has(key)) return InvalidArgumentError(PathOf(key) + ": missing");
  return OptionalUint64(key, out);
}
Status JsonObject::Double(const std::string& key, double* out) const {
  if (!Has(key)) return InvalidArgumentError(PathOf(key) + ": missing");
  return OptionalDouble(key, out);
}
Status JsonObject::Bool(const std::string& key, bool* out) const {
  if (!Has(key)) return InvalidArgumentError(PathOf(key) + ": missing");
  return OptionalBool(key, out);
}

Status JsonObject::OptionalString(const std::string& key, std::string* out) const {
  if (!Has(key)) return Status::Ok();
  const nlohmann::json& v = Get(key);
  if (!v.is_string()) return TypeError(PathOf(key), "a string", v);
  *out = v.get<std::string>();
  return Status::Ok();
}

Status JsonObject::OptionalUint64(const std::string& key, uint64_t* out) const {
  if (!Has(key)) return Status::Ok();
  const nlohmann::json& v = Get(key);
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
  } else if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(v.get<int64_t>());
  } else {
    return TypeError(PathOf(key), "an unsigned integer", v);
  }
  return Status::Ok();
}

Status JsonObject::OptionalDouble(const std::string& key, double* out) const {
  if (!Has(key)) return Status::Ok();
  const nlohmann::json& v = Get(key);
  if (!v.is_number()) return TypeError(PathOf(key), "a number", v);
  *out = v.get<double>();
  return Status::Ok();
}

Status JsonObject::OptionalBool(const std::string& key, bool* out) const {
  if (!Has(key)) return Status::Ok();
  const nlohmann::json& v = Get(key);
  if (!v.is_boolean()) return TypeError(PathOf(key), "true or false", v);
  *out = v.get<bool>();
  return Status::Ok();
}

namespace {

// Follows the parser's events to name where it is ("nodes[1].devices[0]") and finds the first key
// that appears twice in one object (nlohmann keeps the last value silently). Each frame holds only its
// own path segment ("nodes", "[1]"), so memory is linear in the nesting depth; the full path is joined
// only for the error message.
class DuplicateKeyFinder {
 public:
  bool operator()(int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        frames_.push_back({event == Event::array_start, ChildSegment(), {}, 0, {}});
        break;
      case Event::object_end:
      case Event::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case Event::key:
        if (!frames_.empty() && parsed.is_string()) {
          Frame& f = frames_.back();
          f.key = parsed.get<std::string>();
          if (!f.keys.insert(f.key).second && duplicate_.empty()) {
            duplicate_ = Join(CurrentPath(), f.key) + ": duplicate key (a key may appear only once in an object)";
          }
        }
        break;
      case Event::value:
        if (!frames_.empty() && frames_.back().array) ++frames_.back().next_index;
        break;
    }
    return true;  // keep everything; only the first duplicate is reported
  }
  const std::string& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool array = false;
    std::string segment;         // this container's name in its parent: "key", "[3]", "" at the root
    std::set<std::string> keys;  // objects: keys seen so far
    size_t next_index = 0;       // arrays: index of the next element
    std::string key;             // objects: the key whose value comes next
  };
  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  std::string CurrentPath() const {
    std::string path;
    for (const Frame& f : frames_) {
      if (f.segment.empty() || f.segment[0] == '[') {
        path += f.segment;
      } else {
        path = Join(path, f.segment);
      }
    }
    return path;
  }
  // Segment of a container that starts now, inside the current frame.
  std::string ChildSegment() {
    if (frames_.empty()) return "";
    Frame& f = frames_.back();
    if (f.array) return "[" + std::to_string(f.next_index++) + "]";
    return f.key;
  }
  std::vector<Frame> frames_;
  std::string duplicate_;
};

}  // namespace

StatusOr<nlohmann::json> ParseJsonText(const std::string& text, const std::string& what) {
  // Before the parser: a deep document must not reach code that recurses per level.
  WP_RETURN_IF_ERROR(CheckJsonNesting(text, what));
  DuplicateKeyFinder finder;
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, std::ref(finder));
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and also out_of_range for a number beyond double's range ("1E400"), which
    // escaped here and aborted the challenger (found by tests/fuzz/fuzz_adversary_classes_json).
    return InvalidArgumentError(what + ": not valid JSON: " + e.what());
  }
  if (!finder.duplicate().empty()) {
    const std::string& where = finder.duplicate();
    return InvalidArgumentError(what + ": " + (where.rfind(':', 0) == 0 ? "document" + where : where));
  }
  return doc;
}

StatusOr<std::string> ReadTextFile(const std::string& path, uint64_t max_bytes, const std::string& why) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    const std::string message = path + ": " + std::strerror(err);
    if (err == ENOENT || err == ENOTDIR) return NotFoundError(message);
    if (err == EACCES) return PermissionDeniedError(message);
    return InternalError(message);
  }
  if (!S_ISREG(st.st_mode)) return InvalidArgumentError(path + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return InvalidArgumentError(path + ": " + std::to_string(st.st_size) + " bytes, over the limit of " +
                                (max_bytes >= (uint64_t{1} << 20) ? std::to_string(max_bytes >> 20) + " MiB"
                                                                   : std::to_string(max_bytes) + " bytes") +
                                (why.empty() ? "" : " (" + why + ")"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return PermissionDeniedError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return InternalError(path + ": read failed");
  return text.str();
}

}  // namespace wipeproof
