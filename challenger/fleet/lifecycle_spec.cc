#include "challenger/fleet/lifecycle_spec.h"

#include <cstdio>

#include "common/json_fields.h"

namespace wipeproof {

namespace {

Status CheckRange(const JsonObject& obj, const std::string& key, double value, double low, double high) {
  if (!(value >= low && value <= high)) {
    char text[120];
    std::snprintf(text, sizeof(text), ": must be in [%g, %g], got %g", low, high, value);
    return InvalidArgumentError(obj.PathOf(key) + text);
  }
  return Status::Ok();
}

// A relative path against the inventory's folder; a bare program name (no '/') stays a PATH lookup
// when `program` is set.
std::string Resolved(const std::string& base_dir, const std::string& file, bool program) {
  if (file.empty() || file[0] == '/' || base_dir.empty()) return file;
  if (program && file.find('/') == std::string::npos) return file;
  return base_dir + "/" + file;
}

}  // namespace

const char* LifecycleKindName(LifecycleKind kind) {
  switch (kind) {
    case LifecycleKind::kNone:
      return "none";
    case LifecycleKind::kSlurm:
      return "slurm";
    case LifecycleKind::kKubernetes:
      return "kubernetes";
    case LifecycleKind::kCommand:
      return "command";
  }
  return "?";
}

StatusOr<LifecycleSpec> ParseLifecycleSpec(const nlohmann::json& value, const std::string& path,
                                           const std::string& base_dir) {
  WP_ASSIGN_OR_RETURN(JsonObject obj, JsonObject::Of(value, path));
  WP_RETURN_IF_ERROR(obj.CheckKnownKeys(
      {"kind", "grace_s", "poll_s", "command_timeout_s", "bin_dir", "kubeconfig", "command", "resume", "slurm_conf",
       "token_file"}));
  LifecycleSpec spec;
  std::string kind;
  WP_RETURN_IF_ERROR(obj.String("kind", &kind));
  if (kind == "none") {
    spec.kind = LifecycleKind::kNone;
  } else if (kind == "slurm") {
    spec.kind = LifecycleKind::kSlurm;
  } else if (kind == "kubernetes") {
    spec.kind = LifecycleKind::kKubernetes;
  } else if (kind == "command") {
    spec.kind = LifecycleKind::kCommand;
  } else {
    return InvalidArgumentError(obj.PathOf("kind") +
                                ": want \"slurm\", \"kubernetes\", \"command\" or \"none\", got '" + kind + "'");
  }
  WP_RETURN_IF_ERROR(obj.OptionalDouble("grace_s", &spec.grace_s));
  WP_RETURN_IF_ERROR(CheckRange(obj, "grace_s", spec.grace_s, 0, 86400));
  WP_RETURN_IF_ERROR(obj.OptionalDouble("poll_s", &spec.poll_s));
  WP_RETURN_IF_ERROR(CheckRange(obj, "poll_s", spec.poll_s, 0.1, 600));
  WP_RETURN_IF_ERROR(obj.OptionalDouble("command_timeout_s", &spec.command_timeout_s));
  WP_RETURN_IF_ERROR(CheckRange(obj, "command_timeout_s", spec.command_timeout_s, 1, 86400));
  WP_RETURN_IF_ERROR(obj.OptionalString("bin_dir", &spec.bin_dir));
  WP_RETURN_IF_ERROR(obj.OptionalString("kubeconfig", &spec.kubeconfig));
  WP_RETURN_IF_ERROR(obj.OptionalString("command", &spec.command));
  WP_RETURN_IF_ERROR(obj.OptionalString("slurm_conf", &spec.slurm_conf));
  WP_RETURN_IF_ERROR(obj.OptionalString("token_file", &spec.token_file));
  std::string resume = "on-bound";
  WP_RETURN_IF_ERROR(obj.OptionalString("resume", &resume));
  if (resume == "on-bound") {
    spec.resume = ResumePolicy::kOnBound;
  } else if (resume == "on-pass") {
    spec.resume = ResumePolicy::kOnPass;
  } else {
    return InvalidArgumentError(obj.PathOf("resume") + ": want \"on-bound\" or \"on-pass\", got '" + resume + "'");
  }
  // Each field only where its kind reads it: a field that would be ignored is a mistake.
  auto only_for = [&](const char* key, LifecycleKind a, LifecycleKind b) -> Status {
    if (obj.Has(key) && spec.kind != a && spec.kind != b) {
      return InvalidArgumentError(obj.PathOf(key) + ": not used by kind '" + kind + "'");
    }
    return Status::Ok();
  };
  WP_RETURN_IF_ERROR(only_for("poll_s", LifecycleKind::kSlurm, LifecycleKind::kSlurm));
  WP_RETURN_IF_ERROR(only_for("bin_dir", LifecycleKind::kSlurm, LifecycleKind::kKubernetes));
  WP_RETURN_IF_ERROR(only_for("kubeconfig", LifecycleKind::kKubernetes, LifecycleKind::kKubernetes));
  WP_RETURN_IF_ERROR(only_for("command", LifecycleKind::kCommand, LifecycleKind::kCommand));
  WP_RETURN_IF_ERROR(only_for("slurm_conf", LifecycleKind::kSlurm, LifecycleKind::kSlurm));
  WP_RETURN_IF_ERROR(only_for("token_file", LifecycleKind::kSlurm, LifecycleKind::kSlurm));
  if (spec.kind == LifecycleKind::kCommand && spec.command.empty()) {
    return InvalidArgumentError(obj.PathOf("command") + ": missing (the hook's executable)");
  }
  if (spec.kind == LifecycleKind::kNone && value.size() > 1) {
    return InvalidArgumentError(path + ": kind 'none' takes no other field");
  }
  spec.bin_dir = Resolved(base_dir, spec.bin_dir, false);
  spec.kubeconfig = Resolved(base_dir, spec.kubeconfig, false);
  spec.slurm_conf = Resolved(base_dir, spec.slurm_conf, false);
  spec.token_file = Resolved(base_dir, spec.token_file, false);
  spec.command = Resolved(base_dir, spec.command, true);
  return spec;
}

}  // namespace wipeproof
