#include "challenger/calibration/node_profile_claims.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "common/json_fields.h"
#include "proto/node_profile.h"

namespace wipeproof {

namespace {

// Typed reads that ignore unknown fields (the profile may carry more than the challenger uses).
Status ReadString(const nlohmann::json& j, const std::string& path, const char* key, std::string* out, bool required) {
  auto it = j.find(key);
  if (it == j.end()) return required ? InvalidArgumentError(path + key + ": missing") : Status::Ok();
  if (!it->is_string()) return InvalidArgumentError(path + key + ": want a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

// A number in [0, max]: negative, NaN, infinite and larger figures are refused naming the field.
Status ReadNumber(const nlohmann::json& j, const std::string& path, const char* key, double* out, bool required,
                  double max) {
  auto it = j.find(key);
  if (it == j.end()) return required ? InvalidArgumentError(path + key + ": missing") : Status::Ok();
  if (!it->is_number()) return InvalidArgumentError(path + key + ": want a number");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0 || v > max) {
    char buf[160];
    std::snprintf(buf, sizeof buf, ": %g is out of range, want a finite number in [0, %g]", v, max);
    return InvalidArgumentError(path + key + buf);
  }
  *out = v;
  return Status::Ok();
}

template <typename T>
Status ReadUnsigned(const nlohmann::json& j, const std::string& path, const char* key, T* out, bool required,
                    uint64_t max = std::numeric_limits<T>::max()) {
  auto it = j.find(key);
  if (it == j.end()) return required ? InvalidArgumentError(path + key + ": missing") : Status::Ok();
  if (!it->is_number_unsigned()) return InvalidArgumentError(path + key + ": want an unsigned integer");
  const uint64_t v = it->get<uint64_t>();
  if (v > max || v > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
    return InvalidArgumentError(path + key + ": " + std::to_string(v) + " is above the maximum " +
                                std::to_string(std::min<uint64_t>(max, std::numeric_limits<T>::max())));
  }
  *out = static_cast<T>(v);
  return Status::Ok();
}

StatusOr<NodeDeviceProfile> ParseDevice(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) return InvalidArgumentError(path + ": want an object");
  NodeDeviceProfile d;
  const std::string p = path + ".";
  WP_RETURN_IF_ERROR(ReadString(j, p, "kind", &d.kind, true));
  WP_RETURN_IF_ERROR(ReadString(j, p, "id", &d.id, true));
  WP_RETURN_IF_ERROR(ReadString(j, p, "name", &d.name, false));
  WP_RETURN_IF_ERROR(ReadUnsigned(j, p, "total_bytes", &d.total_bytes, false, kMaxNodeProfileBytes));
  if (j.contains("fill")) {
    const auto& fills = j["fill"];
    if (!fills.is_array()) return InvalidArgumentError(p + "fill: want an array");
    for (size_t i = 0; i < fills.size(); ++i) {
      const std::string fp = p + "fill[" + std::to_string(i) + "].";
      if (!fills[i].is_object()) return InvalidArgumentError(fp + ": want an object");
      NodeFillFigure f;
      std::string format = LabelFormatName(LabelFormat::kC1);
      WP_RETURN_IF_ERROR(ReadString(fills[i], fp, "format", &format, false));
      if (!ParseLabelFormat(format, &f.format)) return InvalidArgumentError(fp + "format: unknown '" + format + "'");
      WP_RETURN_IF_ERROR(ReadUnsigned(fills[i], fp, "chunk_labels", &f.chunk_labels, true));
      WP_RETURN_IF_ERROR(ReadUnsigned(fills[i], fp, "bytes", &f.bytes, true, kMaxNodeProfileBytes));
      WP_RETURN_IF_ERROR(ReadNumber(fills[i], fp, "acquire_s", &f.acquire_s, false, kMaxNodeProfileSeconds));
      WP_RETURN_IF_ERROR(ReadNumber(fills[i], fp, "fill_s", &f.fill_s, true, kMaxNodeProfileSeconds));
      WP_RETURN_IF_ERROR(ReadNumber(fills[i], fp, "bytes_per_s", &f.bytes_per_s, true, kMaxNodeProfileBytesPerS));
      if (f.chunk_labels == 0 || f.chunk_labels > kMaxChunkLabels || f.bytes == 0 || !(f.bytes_per_s > 0)) {
        return InvalidArgumentError(fp + ": chunk_labels, bytes and bytes_per_s must be positive (m <= 2^20)");
      }
      d.fills.push_back(f);
    }
  }
  if (j.contains("lookup")) {
    const auto& l = j["lookup"];
    const std::string lp = p + "lookup.";
    if (!l.is_object()) return InvalidArgumentError(p + "lookup: want an object");
    WP_RETURN_IF_ERROR(ReadUnsigned(l, lp, "labels_per_lookup", &d.lookup.labels_per_lookup, false));
    WP_RETURN_IF_ERROR(ReadUnsigned(l, lp, "samples", &d.lookup.samples, false));
    WP_RETURN_IF_ERROR(ReadNumber(l, lp, "p50_us", &d.lookup.p50_us, false, kMaxNodeProfileMicros));
    WP_RETURN_IF_ERROR(ReadNumber(l, lp, "p90_us", &d.lookup.p90_us, false, kMaxNodeProfileMicros));
    WP_RETURN_IF_ERROR(ReadNumber(l, lp, "p99_us", &d.lookup.p99_us, false, kMaxNodeProfileMicros));
    WP_RETURN_IF_ERROR(ReadNumber(l, lp, "p999_us", &d.lookup.p999_us, false, kMaxNodeProfileMicros));
    WP_RETURN_IF_ERROR(ReadNumber(l, lp, "max_us", &d.lookup.max_us, false, kMaxNodeProfileMicros));
  }
  if (j.contains("one_chunk")) {
    const auto& o = j["one_chunk"];
    const std::string op = p + "one_chunk.";
    if (!o.is_object()) return InvalidArgumentError(p + "one_chunk: want an object");
    WP_RETURN_IF_ERROR(ReadUnsigned(o, op, "chunk_labels", &d.one_chunk_labels, false));
    WP_RETURN_IF_ERROR(ReadNumber(o, op, "fill_us", &d.one_chunk_fill_us, false, kMaxNodeProfileMicros));
    WP_RETURN_IF_ERROR(ReadNumber(o, op, "step_ps", &d.step_ps, false, kMaxNodeProfilePicos));
  }
  return d;
}

}  // namespace

const NodeDeviceProfile* NodeProfile::FindDevice(const std::string& id) const {
  for (const auto& d : devices) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

StatusOr<NodeProfile> ParseNodeProfileJson(const std::string& text) {
  WP_ASSIGN_OR_RETURN(nlohmann::json doc, ParseJsonText(text, "node profile"));
  if (!doc.is_object()) return InvalidArgumentError("node profile: want a JSON object");
  NodeProfile n;
  std::string format;
  const std::string p = "node profile: ";
  WP_RETURN_IF_ERROR(ReadString(doc, p, "format", &format, true));
  if (format != kNodeProfileFormat) {
    return InvalidArgumentError(p + "format '" + format + "', want '" + kNodeProfileFormat + "'");
  }
  WP_RETURN_IF_ERROR(ReadString(doc, p, "node_key_id", &n.node_key_id, false));
  WP_RETURN_IF_ERROR(ReadString(doc, p, "software_version", &n.software_version, false));
  WP_RETURN_IF_ERROR(ReadString(doc, p, "created_at", &n.created_at, false));
  uint64_t created = 0;
  WP_RETURN_IF_ERROR(ReadUnsigned(doc, p, "created_at_unix_us", &created, false,
                                  static_cast<uint64_t>(std::numeric_limits<int64_t>::max())));
  n.created_at_unix_us = static_cast<int64_t>(created);
  if (doc.contains("machine") && doc["machine"].is_object()) {
    WP_RETURN_IF_ERROR(ReadString(doc["machine"], p + "machine.", "hostname", &n.hostname, false));
    WP_RETURN_IF_ERROR(ReadString(doc["machine"], p + "machine.", "cpu_model", &n.cpu_model, false));
  }
  if (doc.contains("host_sequential_compression")) {
    const auto& s = doc["host_sequential_compression"];
    if (!s.is_object()) return InvalidArgumentError(p + "host_sequential_compression: want an object");
    WP_RETURN_IF_ERROR(ReadNumber(s, p + "host_sequential_compression.", "ps_per_compression",
                                  &n.host_sequential_compression_ps, false, kMaxNodeProfilePicos));
  }
  if (!doc.contains("devices") || !doc["devices"].is_array()) return InvalidArgumentError(p + "devices: want an array");
  for (size_t i = 0; i < doc["devices"].size(); ++i) {
    WP_ASSIGN_OR_RETURN(NodeDeviceProfile d, ParseDevice(doc["devices"][i], p + "devices[" + std::to_string(i) + "]"));
    n.devices.push_back(std::move(d));
  }
  return n;
}

StatusOr<NodeProfile> LoadSignedNodeProfile(const std::string& path, const proto::PublicKey& node_key,
                                            const std::string& key_source) {
  WP_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  auto verified = proto::VerifyNodeProfile(text, node_key);
  if (!verified.ok()) {
    // proto/node_profile.cc says the key is "(from the inventory)"; name where it really came from.
    std::string message = verified.status().message();
    const std::string inventory = "(from the inventory)";
    const size_t at = message.find(inventory);
    if (at != std::string::npos) message.replace(at, inventory.size(), "(from " + key_source + ")");
    return Status(verified.status().code(), message).WithContext(path);
  }
  auto parsed = ParseNodeProfileJson(*verified);
  if (!parsed.ok()) return parsed.status().WithContext(path);
  if (!parsed->node_key_id.empty() && parsed->node_key_id != proto::KeyIdHex(proto::KeyIdOf(node_key))) {
    return InvalidArgumentError(path + ": node_key_id " + parsed->node_key_id +
                                " inside the profile is not the signing key's id");
  }
  return parsed;
}

uint64_t NodeFillEstimateUs(const NodeDeviceProfile& device, LabelFormat format, uint32_t chunk_labels,
                            uint64_t planned_bytes) {
  // Only a figure the node measured at this very m and format: the cost of a label does not scale
  // with m by the graph alone (a CPU's lanes each hold a chunk of m labels, so a larger m leaves
  // the caches sooner), and a claim the node never made must not be held against it.
  const NodeFillFigure* figure = nullptr;
  for (const auto& f : device.fills) {
    if (f.format == format && f.chunk_labels == chunk_labels) figure = &f;
  }
  if (figure == nullptr || planned_bytes == 0) return 0;
  const double bytes = static_cast<double>(planned_bytes);
  const double seconds = figure->acquire_s * bytes / static_cast<double>(figure->bytes) + bytes / figure->bytes_per_s;
  const double us = std::ceil(seconds * 1e6);
  // A claim too large for 64 bits saturates: a longer claim never tightens anything (the fill
  // deadline takes the shorter of claim and measurement).
  if (!(us < 18446744073709551616.0)) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(us);
}

NodeClaims ClaimsFromNodeProfile(const NodeProfile& profile, const std::vector<PlannedDeviceRef>& devices,
                                 LabelFormat format, uint32_t chunk_labels) {
  NodeClaims c;
  uint64_t estimate = 0;
  bool complete = true;
  for (const auto& planned : devices) {
    const NodeDeviceProfile* d = profile.FindDevice(planned.selector);
    if (d == nullptr) {
      c.notes.push_back("the node profile has no device '" + planned.selector +
                        "': its fill claims are not used (the measured fill alone sets the fill deadline)");
      complete = false;
      continue;
    }
    if (d->total_bytes > planned.declared_capacity_bytes) {
      c.notes.push_back("the node profile reports " + std::to_string(d->total_bytes) + " bytes on '" +
                        planned.selector + "', more than the " + std::to_string(planned.declared_capacity_bytes) +
                        " declared in the inventory: memory outside the plan (verdicts will say "
                        "device-capacity-as-declared did not hold)");
    }
    const uint64_t e = NodeFillEstimateUs(*d, format, chunk_labels, planned.planned_bytes);
    if (e == 0) {
      c.notes.push_back("the node profile has no " + std::string(LabelFormatName(format)) +
                        " fill figure at m = " + std::to_string(chunk_labels) + " for '" + planned.selector +
                        "': its fill claims are not used (bench --what=all --fill_chunk_labels=" +
                        std::to_string(chunk_labels) + " measures one)");
      complete = false;
    }
    estimate = std::max(estimate, e);
  }
  c.fill_estimate_us = complete ? estimate : 0;
  // Kept as doubles: a sub-picosecond figure is a measurement (floor() would read it as "none").
  if (profile.host_sequential_compression_ps > 0) {
    c.sequential_compression_ps = profile.host_sequential_compression_ps;
    c.sequential_where = "host core";
  }
  for (const auto& d : profile.devices) {
    if (d.kind == "host" || !(d.step_ps > 0)) continue;
    const double ps = d.step_ps;
    if (c.sequential_compression_ps == 0 || ps < c.sequential_compression_ps) {
      c.sequential_compression_ps = ps;
      c.sequential_where = d.name + " (" + d.id + ", one-chunk fill step)";
    }
  }
  return c;
}

}  // namespace wipeproof
