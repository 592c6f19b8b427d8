#include "challenger/parameters/adversary_classes.h"

#include <cmath>
#include <set>

#include "common/json_fields.h"

namespace wipeproof {

namespace {

bool ValidClassName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

StatusOr<AdversaryClass> AdversaryClasses::Find(const std::string& name) const {
  std::string known;
  for (const auto& c : classes) {
    if (c.adversary.name == name) return c.adversary;
    known += (known.empty() ? "" : ", ") + c.adversary.name;
  }
  return NotFoundError("adversary class '" + name + "' is not in " + source + " (known: " + known + ")");
}

AdversaryClasses DefaultAdversaryClasses() {
  AdversaryClasses set;
  set.source = "built-in";
  set.signature_problem = "the built-in adversary classes are not signed by the authority";
  set.classes.push_back({{"commodity-cpu", kCommodityCpuTMinPs, kDefaultSafetyFactor},
                         "one fast commodity CPU core computing BLAKE3 compressions back to back (t_min 25 ns: "
                         "a 5.7-6 GHz desktop core takes ~28-30 ns, ~170 dependent cycles, per compression)"});
  set.classes.push_back(
      {{"fpga-asic", kFpgaAsicTMinPs, kDefaultSafetyFactor}, "a dedicated FPGA or ASIC BLAKE3 pipeline"});
  return set;
}

StatusOr<AdversaryClasses> ParseAdversaryClassesJson(const std::string& text, const std::string& what) {
  WP_ASSIGN_OR_RETURN(nlohmann::json doc, ParseJsonText(text, what));
  auto wrap = [&](const Status& s) { return s.WithContext(what); };
  auto root = JsonObject::Of(doc, "");
  if (!root.ok()) return wrap(root.status());
  Status s = root->CheckKnownKeys({"classes"});
  if (!s.ok()) return wrap(s);
  if (!root->Has("classes") || !root->Get("classes").is_array() || root->Get("classes").empty()) {
    return wrap(InvalidArgumentError("classes: want a non-empty array"));
  }
  AdversaryClasses set;
  set.source = what;
  set.signature_problem = what + " is not signed by the authority";
  std::set<std::string> names;
  const nlohmann::json& list = root->Get("classes");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = "classes[" + std::to_string(i) + "]";
    auto entry = JsonObject::Of(list[i], path);
    if (!entry.ok()) return wrap(entry.status());
    AdversaryClassEntry c;
    c.adversary.safety_factor = kDefaultSafetyFactor;
    for (const Status& field :
         {entry->CheckKnownKeys({"name", "t_min_ps", "safety_factor", "description"}),
          entry->String("name", &c.adversary.name), entry->Uint64("t_min_ps", &c.adversary.t_min_ps),
          entry->OptionalDouble("safety_factor", &c.adversary.safety_factor),
          entry->OptionalString("description", &c.description)}) {
      if (!field.ok()) return wrap(field);
    }
    if (!ValidClassName(c.adversary.name)) {
      return wrap(InvalidArgumentError(path + ".name: '" + c.adversary.name +
                                       "' is not 1-64 characters of a-z, 0-9, '.', '_', '-'"));
    }
    if (!names.insert(c.adversary.name).second) {
      return wrap(InvalidArgumentError(path + ".name: '" + c.adversary.name + "' appears twice"));
    }
    if (c.adversary.t_min_ps < 1 || c.adversary.t_min_ps > kMaxTMinPs) {
      return wrap(InvalidArgumentError(path + ".t_min_ps: must be in [1, " + std::to_string(kMaxTMinPs) + "]"));
    }
    if (c.adversary.safety_factor > kMaxSafetyFactor) {
      return wrap(InvalidArgumentError(path + ".safety_factor: must be <= 1e6"));
    }
    if (!(c.adversary.safety_factor >= 1.0) || !std::isfinite(c.adversary.safety_factor)) {
      return wrap(InvalidArgumentError(path + ".safety_factor: must be a finite number >= 1"));
    }
    set.classes.push_back(std::move(c));
  }
  return set;
}

StatusOr<AdversaryClasses> LoadAdversaryClasses(const std::string& path) {
  if (path.empty()) return DefaultAdversaryClasses();
  WP_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseAdversaryClassesJson(text, path);
}

}  // namespace wipeproof
