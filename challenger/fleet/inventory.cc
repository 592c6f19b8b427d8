#include "challenger/fleet/inventory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "challenger/session/session_plan.h"
#include "common/hex.h"
#include "common/json_fields.h"
#include "proto/key_files.h"
#include "proto/validate.h"

namespace wipeproof {

namespace {

std::string Indexed(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

// A name: non-empty and at most kMaxInventoryNameBytes.
Status CheckName(const std::string& path, const std::string& value) {
  if (value.empty()) return InvalidArgumentError(path + ": empty");
  if (value.size() > kMaxInventoryNameBytes) {
    return InvalidArgumentError(path + ": " + std::to_string(value.size()) + " bytes, over the limit of " +
                                std::to_string(kMaxInventoryNameBytes));
  }
  return Status::Ok();
}

// A host name, as schedulers and DNS write one: letters, digits, '.', '_' and '-', not first '-'. A
// node's name is printed in tables and summaries and sent in orders; a scheduler's node name goes into
// scontrol/kubectl argv (one host, never a host list or an option). `what` says which in the error.
Status CheckHostName(const std::string& path, const std::string& value, const std::string& what) {
  for (char ch : value) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                    ch == '_' || ch == '-';
    if (!ok) {
      // The value itself is escaped where the error is printed (CliErrorText).
      return InvalidArgumentError(path + ": '" + value +
                                  "' has a character other than letters, digits, '.', '_' and '-' (" + what + ")");
    }
  }
  if (!value.empty() && value[0] == '-') return InvalidArgumentError(path + ": '" + value + "' starts with '-'");
  return Status::Ok();
}

std::string PiB() { return std::to_string(kMaxDeviceCapacityBytes) + " (1 PiB)"; }

StatusOr<InventoryDevice> ParseDevice(const nlohmann::json& value, const std::string& path) {
  WP_ASSIGN_OR_RETURN(JsonObject obj, JsonObject::Of(value, path));
  InventoryDevice d;
  WP_RETURN_IF_ERROR(
      obj.CheckKnownKeys({"selector", "model", "capacity_bytes", "partition_of", "partitions"}));
  WP_RETURN_IF_ERROR(obj.String("selector", &d.selector));
  WP_RETURN_IF_ERROR(obj.String("model", &d.model));
  WP_RETURN_IF_ERROR(obj.Uint64("capacity_bytes", &d.capacity_bytes));
  WP_RETURN_IF_ERROR(CheckName(obj.PathOf("selector"), d.selector));
  WP_RETURN_IF_ERROR(CheckName(obj.PathOf("model"), d.model));
  if (obj.Has("partition_of") != obj.Has("partitions")) {
    return InvalidArgumentError(path + ": give both partition_of and partitions (a slice of a partitioned GPU) or "
                                       "neither");
  }
  if (obj.Has("partition_of")) {
    WP_RETURN_IF_ERROR(obj.String("partition_of", &d.partition_of));
    WP_RETURN_IF_ERROR(CheckName(obj.PathOf("partition_of"), d.partition_of));
    uint64_t partitions = 0;
    WP_RETURN_IF_ERROR(obj.Uint64("partitions", &partitions));
    if (partitions == 0 || partitions > kMaxPartitions) {
      return InvalidArgumentError(obj.PathOf("partitions") + ": must be in [1, " + std::to_string(kMaxPartitions) +
                                  "], got " + std::to_string(partitions));
    }
    d.partitions = static_cast<uint32_t>(partitions);
  }
  if (d.capacity_bytes == 0 || d.capacity_bytes > kMaxDeviceCapacityBytes) {
    return InvalidArgumentError(obj.PathOf("capacity_bytes") + ": must be > 0 and <= " + PiB() + ", got " +
                                std::to_string(d.capacity_bytes));
  }
  return d;
}

StatusOr<DeclaredMemory> ParseOtherMemory(const nlohmann::json& value, const std::string& path) {
  WP_ASSIGN_OR_RETURN(JsonObject obj, JsonObject::Of(value, path));
  WP_RETURN_IF_ERROR(obj.CheckKnownKeys({"kind", "name", "bytes"}));
  DeclaredMemory m;
  WP_RETURN_IF_ERROR(obj.String("kind", &m.kind));
  WP_RETURN_IF_ERROR(obj.String("name", &m.name));
  WP_RETURN_IF_ERROR(obj.Uint64("bytes", &m.bytes));
  if (m.kind != "dpu" && m.kind != "cxl" && m.kind != "other") {
    return InvalidArgumentError(obj.PathOf("kind") + ": want \"dpu\", \"cxl\" or \"other\", got '" + m.kind + "'");
  }
  WP_RETURN_IF_ERROR(CheckName(obj.PathOf("name"), m.name));
  if (m.bytes == 0 || m.bytes > kMaxDeviceCapacityBytes) {
    return InvalidArgumentError(obj.PathOf("bytes") + ": must be > 0 and <= " + PiB() + ", got " +
                                std::to_string(m.bytes));
  }
  return m;
}

// A label rate: compressions per second, finite, in (0, kMaxLabelCompressionsPerS].
Status CheckLabelRate(const std::string& path, double rate) {
  if (!(rate > 0) || !(rate <= kMaxLabelCompressionsPerS)) {
    return InvalidArgumentError(path + ": must be > 0 and <= 1e16 compressions per second, got " + std::to_string(rate));
  }
  return Status::Ok();
}

// label_rates: {"<model>": {"compressions_per_s": R, "source": "..."}}.
Status ParseLabelRates(const JsonObject& root, Inventory* inv) {
  if (!root.Has("label_rates")) return Status::Ok();
  const nlohmann::json& table = root.Get("label_rates");
  if (!table.is_object()) return InvalidArgumentError("label_rates: want an object of device models");
  for (auto it = table.begin(); it != table.end(); ++it) {
    const std::string path = "label_rates." + it.key();
    WP_RETURN_IF_ERROR(CheckName(path, it.key()));
    WP_ASSIGN_OR_RETURN(JsonObject entry, JsonObject::Of(it.value(), path));
    WP_RETURN_IF_ERROR(entry.CheckKnownKeys({"compressions_per_s", "source"}));
    LabelRate rate;
    WP_RETURN_IF_ERROR(entry.Double("compressions_per_s", &rate.compressions_per_s));
    WP_RETURN_IF_ERROR(CheckLabelRate(entry.PathOf("compressions_per_s"), rate.compressions_per_s));
    WP_RETURN_IF_ERROR(entry.String("source", &rate.source));
    if (rate.source.empty() || rate.source.size() > kMaxLabelRateSourceBytes) {
      return InvalidArgumentError(entry.PathOf("source") + ": want 1 to " + std::to_string(kMaxLabelRateSourceBytes) +
                                  " bytes saying where the figure comes from, got " + std::to_string(rate.source.size()));
    }
    inv->label_rates_by_model[it.key()] = std::move(rate);
  }
  return Status::Ok();
}

// network_isolated_during_wipe, egress_bytes_per_s, ingress_bytes_per_s, other_memory of a node.
Status ParseReach(const JsonObject& obj, NodeReach* reach) {
  WP_RETURN_IF_ERROR(obj.OptionalBool("network_isolated_during_wipe", &reach->network_isolated));
  if (obj.Has("egress_bytes_per_s")) {
    WP_RETURN_IF_ERROR(obj.Uint64("egress_bytes_per_s", &reach->egress_bytes_per_s));
    if (reach->egress_bytes_per_s == 0 || reach->egress_bytes_per_s > kMaxEgressBytesPerS) {
      return InvalidArgumentError(obj.PathOf("egress_bytes_per_s") +
                                  ": must be > 0 and <= " + std::to_string(kMaxEgressBytesPerS) + " (2^50), got " +
                                  std::to_string(reach->egress_bytes_per_s));
    }
    if (reach->network_isolated) {
      return InvalidArgumentError(obj.PathOf("egress_bytes_per_s") +
                                  ": given with network_isolated_during_wipe true (an isolated node has no egress)");
    }
  }
  if (obj.Has("ingress_bytes_per_s")) {
    WP_RETURN_IF_ERROR(obj.Uint64("ingress_bytes_per_s", &reach->ingress_bytes_per_s));
    if (reach->ingress_bytes_per_s == 0 || reach->ingress_bytes_per_s > kMaxEgressBytesPerS) {
      return InvalidArgumentError(obj.PathOf("ingress_bytes_per_s") + ": must be > 0 and <= " +
                                  std::to_string(kMaxEgressBytesPerS) + " (2^50), got " +
                                  std::to_string(reach->ingress_bytes_per_s));
    }
    if (reach->network_isolated) {
      return InvalidArgumentError(obj.PathOf("ingress_bytes_per_s") +
                                  ": given with network_isolated_during_wipe true (an isolated node has no ingress)");
    }
  }
  if (obj.Has("other_memory")) {
    const nlohmann::json& list = obj.Get("other_memory");
    if (!list.is_array()) return InvalidArgumentError(obj.PathOf("other_memory") + ": want an array");
    if (list.size() > kMaxOtherMemoryEntries) {
      return InvalidArgumentError(obj.PathOf("other_memory") + ": " + std::to_string(list.size()) +
                                  " entries, over the limit of " + std::to_string(kMaxOtherMemoryEntries));
    }
    for (size_t i = 0; i < list.size(); ++i) {
      WP_ASSIGN_OR_RETURN(DeclaredMemory m, ParseOtherMemory(list[i], Indexed(obj.PathOf("other_memory"), i)));
      reach->other_memory.push_back(std::move(m));
    }
  }
  return Status::Ok();
}

std::string JoinPath(const std::string& dir, const std::string& file) {
  if (file.empty() || file[0] == '/' || dir.empty()) return file;
  return dir + "/" + file;
}

StatusOr<InventoryNode> ParseNode(const nlohmann::json& value, const std::string& path, const std::string& base_dir,
                                  InventoryFiles files) {
  WP_ASSIGN_OR_RETURN(JsonObject obj, JsonObject::Of(value, path));
  WP_RETURN_IF_ERROR(obj.CheckKnownKeys({"name", "address", "public_key", "public_key_file", "certificate_file",
                                         "no_nvme_in_reach", "network_isolated_during_wipe", "egress_bytes_per_s",
                                         "ingress_bytes_per_s", "other_memory", "host_physical_memory_bytes",
                                         "cpu_compressions_per_s", "scheduler_name", "lifecycle", "devices"}));
  InventoryNode n;
  WP_RETURN_IF_ERROR(obj.String("name", &n.name));
  WP_RETURN_IF_ERROR(CheckName(obj.PathOf("name"), n.name));
  WP_RETURN_IF_ERROR(CheckHostName(obj.PathOf("name"), n.name, "a node name is a host name"));
  WP_RETURN_IF_ERROR(obj.String("address", &n.address));
  WP_RETURN_IF_ERROR(CheckAddress(n.address).WithContext(obj.PathOf("address")));
  WP_RETURN_IF_ERROR(obj.OptionalBool("no_nvme_in_reach", &n.no_nvme_in_reach));
  WP_RETURN_IF_ERROR(ParseReach(obj, &n.reach));
  if (obj.Has("host_physical_memory_bytes")) {
    WP_RETURN_IF_ERROR(obj.Uint64("host_physical_memory_bytes", &n.host_physical_memory_bytes));
    if (n.host_physical_memory_bytes == 0 || n.host_physical_memory_bytes > kMaxDeviceCapacityBytes) {
      return InvalidArgumentError(obj.PathOf("host_physical_memory_bytes") + ": must be > 0 and <= " + PiB() +
                                  ", got " + std::to_string(n.host_physical_memory_bytes));
    }
  }
  if (obj.Has("cpu_compressions_per_s")) {
    WP_RETURN_IF_ERROR(obj.Double("cpu_compressions_per_s", &n.cpu_compressions_per_s));
    WP_RETURN_IF_ERROR(CheckLabelRate(obj.PathOf("cpu_compressions_per_s"), n.cpu_compressions_per_s));
  }
  n.scheduler_name = n.name;
  WP_RETURN_IF_ERROR(obj.OptionalString("scheduler_name", &n.scheduler_name));
  WP_RETURN_IF_ERROR(CheckName(obj.PathOf("scheduler_name"), n.scheduler_name));
  if (obj.Has("scheduler_name")) {
    WP_RETURN_IF_ERROR(
        CheckHostName(obj.PathOf("scheduler_name"), n.scheduler_name, "one scheduler node name, not a host list"));
  }
  if (obj.Has("lifecycle")) {
    WP_ASSIGN_OR_RETURN(LifecycleSpec spec,
                        ParseLifecycleSpec(obj.Get("lifecycle"), obj.PathOf("lifecycle"), base_dir));
    n.lifecycle = std::move(spec);
  }
  const bool inline_key = obj.Has("public_key"), key_file = obj.Has("public_key_file");
  if (inline_key == key_file) {
    return InvalidArgumentError(path + ": give exactly one of public_key (64 hex digits) and public_key_file");
  }
  if (inline_key) {
    std::string hex;
    WP_RETURN_IF_ERROR(obj.String("public_key", &hex));
    auto key = proto::ParsePublicKeyHex(hex);
    if (!key.ok()) return key.status().WithContext(obj.PathOf("public_key"));
    n.public_key = *key;
  } else {
    if (files == InventoryFiles::kNone) {
      return InvalidArgumentError(obj.PathOf("public_key_file") +
                                  ": a signed inventory names each node key inline (\"public_key\": 64 hex digits, "
                                  "the public-key line of the .pub file), so its digest covers the key");
    }
    std::string file;
    WP_RETURN_IF_ERROR(obj.String("public_key_file", &file));
    n.files_read.push_back(JoinPath(base_dir, file));
    auto key = proto::ReadPublicKeyFile(JoinPath(base_dir, file));
    if (!key.ok()) return key.status().WithContext(obj.PathOf("public_key_file"));
    n.public_key = *key;
    n.key_from_file = true;
  }
  if (obj.Has("certificate_file") && files == InventoryFiles::kRead) {
    std::string file;
    WP_RETURN_IF_ERROR(obj.String("certificate_file", &file));
    // Pinned only if it carries the node key: the TLS handshake then proves the agent holds it.
    n.files_read.push_back(JoinPath(base_dir, file));
    auto certificate = proto::ReadPinnedCertificate(JoinPath(base_dir, file), n.public_key);
    if (!certificate.ok()) return certificate.status().WithContext(obj.PathOf("certificate_file"));
    n.certificate = std::move(certificate).value();
  }
  if (!obj.Has("devices")) return InvalidArgumentError(obj.PathOf("devices") + ": missing");
  const nlohmann::json& devices = obj.Get("devices");
  if (!devices.is_array() || devices.empty()) {
    return InvalidArgumentError(obj.PathOf("devices") + ": want a non-empty array");
  }
  if (devices.size() > kMaxDevicesPerNode) {
    return InvalidArgumentError(obj.PathOf("devices") + ": " + std::to_string(devices.size()) +
                                " devices, over the limit of " + std::to_string(kMaxDevicesPerNode));
  }
  std::set<std::string> selectors;
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string dpath = Indexed(obj.PathOf("devices"), i);
    WP_ASSIGN_OR_RETURN(InventoryDevice d, ParseDevice(devices[i], dpath));
    if (!selectors.insert(d.selector).second) {
      return InvalidArgumentError(dpath + ".selector: '" + d.selector + "' appears twice in node " + n.name);
    }
    n.devices.push_back(std::move(d));
  }
  // Slices of one physical device agree on its slice count, and no more are listed than it has.
  std::map<std::string, std::pair<uint32_t, uint32_t>> slices;  // physical device: (partitions, listed)
  for (size_t i = 0; i < n.devices.size(); ++i) {
    const InventoryDevice& d = n.devices[i];
    if (d.partition_of.empty()) continue;
    const std::string dpath = Indexed(obj.PathOf("devices"), i);
    auto [it, fresh] = slices.emplace(d.partition_of, std::make_pair(d.partitions, 0u));
    if (!fresh && it->second.first != d.partitions) {
      return InvalidArgumentError(dpath + ".partitions: " + std::to_string(d.partitions) + " for device " +
                                  d.partition_of + ", which another slice says has " +
                                  std::to_string(it->second.first));
    }
    if (++it->second.second > d.partitions) {
      return InvalidArgumentError(dpath + ": more slices of device " + d.partition_of + " listed than its " +
                                  std::to_string(d.partitions) + " partitions");
    }
  }
  return n;
}

// A wave's "hold" (inventory.h), against the wave's period and jitter already parsed into `wave`.
StatusOr<WaveHold> ParseWaveHold(const nlohmann::json& value, const std::string& path, const Wave& wave) {
  WP_ASSIGN_OR_RETURN(JsonObject obj, JsonObject::Of(value, path));
  WP_RETURN_IF_ERROR(obj.CheckKnownKeys({"mean_gap_s", "shortfall", "labels_per_round"}));
  WaveHold hold;
  uint64_t labels = 0;
  WP_RETURN_IF_ERROR(obj.Double("mean_gap_s", &hold.mean_gap_s));
  WP_RETURN_IF_ERROR(obj.Double("shortfall", &hold.shortfall));
  WP_RETURN_IF_ERROR(obj.Uint64("labels_per_round", &labels));
  auto number = [](double x) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.10g", x);
    return std::string(buf);
  };
  if (!(hold.mean_gap_s >= 1e-6 && hold.mean_gap_s <= wave.period_s)) {
    return InvalidArgumentError(obj.PathOf("mean_gap_s") + ": must be in [0.000001, the wave's period_s " +
                                number(wave.period_s) + "] seconds, got " + number(hold.mean_gap_s));
  }
  if (!(hold.shortfall > 0 && hold.shortfall < 1)) {
    return InvalidArgumentError(obj.PathOf("shortfall") + ": must be a fraction in (0, 1) of the planned bytes, got " +
                                number(hold.shortfall));
  }
  if (labels == 0 || labels > kMaxHoldLabelsPerRound) {
    return InvalidArgumentError(obj.PathOf("labels_per_round") + ": must be in [1, " +
                                std::to_string(kMaxHoldLabelsPerRound) + "], got " + std::to_string(labels));
  }
  hold.labels_per_round = static_cast<uint32_t>(labels);
  if ((wave.period_s + wave.jitter_s) * 1e6 > static_cast<double>(proto::kMaxOccupancyWindowUs)) {
    return InvalidArgumentError(path + ": a held wave's window lasts up to period_s + jitter_s = " +
                                number(wave.period_s + wave.jitter_s) +
                                " s, beyond the 2678400 s (31 days) an order may ask: shorten the period");
  }
  // The pool of rounds a window of the longest gap plans (session_plan.h), checked here so that a
  // hold serve cannot plan never reaches a run.
  const uint64_t window_us = static_cast<uint64_t>(std::llround((wave.period_s + wave.jitter_s) * 1e6));
  const uint64_t gap_us = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(hold.mean_gap_s * 1e6)));
  const uint64_t pool = OccupancyPoolRounds(window_us, gap_us);
  const std::string window = "a window of up to " + number(wave.period_s + wave.jitter_s) + " s at a mean gap of " +
                             number(hold.mean_gap_s) + " s";
  if (pool > kMaxOccupancyRounds) {
    return InvalidArgumentError(path + ": " + window + " needs a pool of more than " +
                                std::to_string(kMaxOccupancyRounds) +
                                " occupancy rounds: lengthen mean_gap_s or shorten the period");
  }
  if (pool * hold.labels_per_round > kMaxLabelsPerSession) {
    return InvalidArgumentError(path + ": " + window + " plans " + std::to_string(pool) + " rounds of " +
                                std::to_string(hold.labels_per_round) + " labels, above the " +
                                std::to_string(kMaxLabelsPerSession) +
                                " a session may hold: ask fewer labels_per_round or lengthen mean_gap_s");
  }
  return hold;
}

StatusOr<Wave> ParseWave(const nlohmann::json& value, const std::string& path, const std::string& base_dir) {
  WP_ASSIGN_OR_RETURN(JsonObject obj, JsonObject::Of(value, path));
  WP_RETURN_IF_ERROR(obj.CheckKnownKeys({"name", "nodes", "period_s", "jitter_s", "complete", "lifecycle", "hold"}));
  Wave w;
  WP_RETURN_IF_ERROR(obj.String("name", &w.name));
  WP_RETURN_IF_ERROR(CheckName(obj.PathOf("name"), w.name));
  WP_RETURN_IF_ERROR(obj.Double("period_s", &w.period_s));
  WP_RETURN_IF_ERROR(obj.OptionalDouble("jitter_s", &w.jitter_s));
  WP_RETURN_IF_ERROR(obj.Bool("complete", &w.complete));
  if (obj.Has("lifecycle")) {
    WP_ASSIGN_OR_RETURN(LifecycleSpec spec,
                        ParseLifecycleSpec(obj.Get("lifecycle"), obj.PathOf("lifecycle"), base_dir));
    w.lifecycle = std::move(spec);
  }
  if (!(w.period_s > 0) || !(w.period_s <= kMaxWavePeriodS)) {
    char got[40];
    std::snprintf(got, sizeof(got), "%.10g", w.period_s);
    return InvalidArgumentError(obj.PathOf("period_s") + ": must be > 0 and <= " +
                                std::to_string(static_cast<uint64_t>(kMaxWavePeriodS)) + " (366 days), got " + got);
  }
  if (!(w.jitter_s >= 0 && w.jitter_s <= w.period_s)) {
    return InvalidArgumentError(obj.PathOf("jitter_s") + ": must be in [0, period_s]");
  }
  if (obj.Has("hold")) {
    WP_ASSIGN_OR_RETURN(WaveHold hold, ParseWaveHold(obj.Get("hold"), obj.PathOf("hold"), w));
    w.hold = hold;
  }
  if (!obj.Has("nodes")) return InvalidArgumentError(obj.PathOf("nodes") + ": missing");
  const nlohmann::json& nodes = obj.Get("nodes");
  if (!nodes.is_array() || nodes.empty()) return InvalidArgumentError(obj.PathOf("nodes") + ": want a non-empty array");
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i].is_string()) return InvalidArgumentError(Indexed(obj.PathOf("nodes"), i) + ": want a node name");
    w.nodes.push_back(nodes[i].get<std::string>());
  }
  return w;
}

Status ParseInventoryInto(const nlohmann::json& doc, const std::string& base_dir, InventoryFiles files, Inventory* inv) {
  WP_ASSIGN_OR_RETURN(JsonObject root, JsonObject::Of(doc, ""));
  WP_RETURN_IF_ERROR(root.CheckKnownKeys({"nodes", "waves", "reserves", "label_rates", "reach_round_deadline_us"}));
  WP_RETURN_IF_ERROR(ParseLabelRates(root, inv));
  WP_RETURN_IF_ERROR(root.OptionalUint64("reach_round_deadline_us", &inv->reach_round_deadline_us));
  if (root.Has("reach_round_deadline_us") &&
      (inv->reach_round_deadline_us == 0 || inv->reach_round_deadline_us > kMaxReachRoundDeadlineUs)) {
    return InvalidArgumentError("reach_round_deadline_us: want microseconds in [1, 2^40], got " +
                                std::to_string(inv->reach_round_deadline_us));
  }
  if (!root.Has("nodes")) return InvalidArgumentError("nodes: missing");
  const nlohmann::json& nodes = root.Get("nodes");
  if (!nodes.is_array() || nodes.empty()) return InvalidArgumentError("nodes: want a non-empty array");
  std::set<std::string> names, scheduler_names;
  for (size_t i = 0; i < nodes.size(); ++i) {
    WP_ASSIGN_OR_RETURN(InventoryNode n, ParseNode(nodes[i], Indexed("nodes", i), base_dir, files));
    if (!names.insert(n.name).second) {
      return InvalidArgumentError(Indexed("nodes", i) + ".name: '" + n.name + "' appears twice");
    }
    // Two nodes on one scheduler node: a pass of one would resume the other's failed wipe.
    if (!scheduler_names.insert(n.scheduler_name).second) {
      return InvalidArgumentError(Indexed("nodes", i) + ".scheduler_name: '" + n.scheduler_name +
                                  "' is another node's scheduler name (or name) too");
    }
    inv->nodes.push_back(std::move(n));
  }

  if (!root.Has("reserves")) return InvalidArgumentError("reserves: missing (allowed reserve bytes per device model)");
  WP_ASSIGN_OR_RETURN(JsonObject reserves, JsonObject::Of(root.Get("reserves"), "reserves"));
  for (auto it = root.Get("reserves").begin(); it != root.Get("reserves").end(); ++it) {
    uint64_t bytes = 0;
    WP_RETURN_IF_ERROR(reserves.Uint64(it.key(), &bytes));
    if (bytes > kMaxDeviceCapacityBytes) {
      return InvalidArgumentError(reserves.PathOf(it.key()) + ": must be <= " + PiB() + ", got " +
                                  std::to_string(bytes));
    }
    inv->reserve_bytes_by_model[it.key()] = bytes;
  }
  for (size_t i = 0; i < inv->nodes.size(); ++i) {
    for (size_t j = 0; j < inv->nodes[i].devices.size(); ++j) {
      const InventoryDevice& d = inv->nodes[i].devices[j];
      if (inv->reserve_bytes_by_model.count(d.model) == 0) {
        return InvalidArgumentError("reserves: no entry for model '" + d.model + "' (used by " +
                                    Indexed(Indexed("nodes", i) + ".devices", j) + ")");
      }
    }
  }

  if (root.Has("waves")) {
    const nlohmann::json& waves = root.Get("waves");
    if (!waves.is_array()) return InvalidArgumentError("waves: want an array");
    std::set<std::string> wave_names;
    std::map<std::string, std::string> wave_of;
    for (size_t i = 0; i < waves.size(); ++i) {
      const std::string path = Indexed("waves", i);
      WP_ASSIGN_OR_RETURN(Wave w, ParseWave(waves[i], path, base_dir));
      if (!wave_names.insert(w.name).second) {
        return InvalidArgumentError(path + ".name: '" + w.name + "' appears twice");
      }
      for (size_t j = 0; j < w.nodes.size(); ++j) {
        const std::string& node = w.nodes[j];
        if (names.count(node) == 0) {
          return InvalidArgumentError(Indexed(path + ".nodes", j) + ": no node named '" + node + "'");
        }
        auto [it, fresh] = wave_of.emplace(node, w.name);
        if (!fresh) {
          return InvalidArgumentError(Indexed(path + ".nodes", j) + ": node '" + node + "' is already in wave '" +
                                      it->second + "' (a node belongs to at most one wave)");
        }
      }
      inv->waves.push_back(std::move(w));
    }
  }
  return Status::Ok();
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

const InventoryNode* Inventory::FindNode(const std::string& name) const {
  for (const InventoryNode& n : nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

const Wave* Inventory::FindWave(const std::string& name) const {
  for (const Wave& w : waves) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

const Wave* Inventory::WaveOf(const std::string& node) const {
  for (const Wave& w : waves) {
    for (const std::string& n : w.nodes) {
      if (n == node) return &w;
    }
  }
  return nullptr;
}

std::optional<LifecycleSpec> Inventory::LifecycleOf(const std::string& node) const {
  std::optional<LifecycleSpec> spec;
  const Wave* wave = WaveOf(node);
  if (wave != nullptr) spec = wave->lifecycle;
  const InventoryNode* n = FindNode(node);
  if (n != nullptr && n->lifecycle) spec = n->lifecycle;
  if (spec && spec->kind == LifecycleKind::kNone) spec.reset();
  return spec;
}

StatusOr<uint64_t> Inventory::ReserveFor(const std::string& model) const {
  auto it = reserve_bytes_by_model.find(model);
  if (it == reserve_bytes_by_model.end()) return NotFoundError("no allowed reserve for device model '" + model + "'");
  return it->second;
}

Status CheckAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgumentError("'" + address + "' is not host:port");
  }
  const std::string port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) < 1 || std::stoul(port) > 65535) {
    return InvalidArgumentError("'" + address + "': port must be in [1, 65535]");
  }
  return Status::Ok();
}

StatusOr<Inventory> ParseInventoryJson(const std::string& text, const std::string& base_dir, const std::string& what,
                                       InventoryFiles files) {
  auto doc = ParseJsonText(text, what);
  if (!doc.ok()) return doc.status();
  Inventory inv;
  Status s = ParseInventoryInto(*doc, base_dir, files, &inv);
  if (!s.ok()) return s.WithContext(what);
  inv.text = text;
  const bool keys_inline =
      std::none_of(inv.nodes.begin(), inv.nodes.end(), [](const InventoryNode& n) { return n.key_from_file; });
  if (keys_inline) {
    inv.digest = proto::Blake2b256(proto::ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  }
  return inv;
}

namespace {

nlohmann::ordered_json LifecycleJson(const LifecycleSpec& spec) {
  const LifecycleSpec defaults;
  nlohmann::ordered_json j;
  j["kind"] = LifecycleKindName(spec.kind);
  if (spec.grace_s != defaults.grace_s) j["grace_s"] = spec.grace_s;
  if (spec.poll_s != defaults.poll_s) j["poll_s"] = spec.poll_s;
  if (spec.command_timeout_s != defaults.command_timeout_s) j["command_timeout_s"] = spec.command_timeout_s;
  if (!spec.bin_dir.empty()) j["bin_dir"] = spec.bin_dir;
  if (!spec.kubeconfig.empty()) j["kubeconfig"] = spec.kubeconfig;
  if (!spec.slurm_conf.empty()) j["slurm_conf"] = spec.slurm_conf;
  if (!spec.token_file.empty()) j["token_file"] = spec.token_file;
  if (!spec.command.empty()) j["command"] = spec.command;
  if (spec.resume != defaults.resume) j["resume"] = "on-pass";
  return j;
}

}  // namespace

std::string InventoryJson(const Inventory& inventory) {
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const InventoryNode& n : inventory.nodes) {
    nlohmann::ordered_json node;
    node["name"] = n.name;
    node["address"] = n.address;
    node["public_key"] = HexEncode(n.public_key.data(), n.public_key.size());
    if (n.no_nvme_in_reach) node["no_nvme_in_reach"] = true;
    if (n.reach.network_isolated) node["network_isolated_during_wipe"] = true;
    if (n.reach.egress_bytes_per_s != 0) node["egress_bytes_per_s"] = n.reach.egress_bytes_per_s;
    if (n.reach.ingress_bytes_per_s != 0) node["ingress_bytes_per_s"] = n.reach.ingress_bytes_per_s;
    if (n.cpu_compressions_per_s != 0) node["cpu_compressions_per_s"] = n.cpu_compressions_per_s;
    if (n.host_physical_memory_bytes != 0) node["host_physical_memory_bytes"] = n.host_physical_memory_bytes;
    if (!n.reach.other_memory.empty()) {
      nlohmann::ordered_json other = nlohmann::ordered_json::array();
      for (const DeclaredMemory& m : n.reach.other_memory) other.push_back({{"kind", m.kind}, {"name", m.name}, {"bytes", m.bytes}});
      node["other_memory"] = std::move(other);
    }
    if (!n.scheduler_name.empty() && n.scheduler_name != n.name) node["scheduler_name"] = n.scheduler_name;
    if (n.lifecycle) node["lifecycle"] = LifecycleJson(*n.lifecycle);
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (const InventoryDevice& d : n.devices) {
      nlohmann::ordered_json device = {{"selector", d.selector}, {"model", d.model}, {"capacity_bytes", d.capacity_bytes}};
      if (!d.partition_of.empty()) {
        device["partition_of"] = d.partition_of;
        device["partitions"] = d.partitions;
      }
      devices.push_back(std::move(device));
    }
    node["devices"] = std::move(devices);
    nodes.push_back(std::move(node));
  }
  nlohmann::ordered_json doc;
  doc["nodes"] = std::move(nodes);
  if (!inventory.waves.empty()) {
    nlohmann::ordered_json waves = nlohmann::ordered_json::array();
    for (const Wave& w : inventory.waves) {
      nlohmann::ordered_json wave = {{"name", w.name}, {"nodes", w.nodes}, {"period_s", w.period_s},
                                     {"jitter_s", w.jitter_s}, {"complete", w.complete}};
      if (w.lifecycle) wave["lifecycle"] = LifecycleJson(*w.lifecycle);
      if (w.hold) {
        wave["hold"] = {{"mean_gap_s", w.hold->mean_gap_s},
                        {"shortfall", w.hold->shortfall},
                        {"labels_per_round", w.hold->labels_per_round}};
      }
      waves.push_back(std::move(wave));
    }
    doc["waves"] = std::move(waves);
  }
  nlohmann::ordered_json reserves = nlohmann::ordered_json::object();
  for (const auto& [model, bytes] : inventory.reserve_bytes_by_model) reserves[model] = bytes;
  doc["reserves"] = std::move(reserves);
  if (!inventory.label_rates_by_model.empty()) {
    nlohmann::ordered_json rates = nlohmann::ordered_json::object();
    for (const auto& [model, rate] : inventory.label_rates_by_model) {
      rates[model] = {{"compressions_per_s", rate.compressions_per_s}, {"source", rate.source}};
    }
    doc["label_rates"] = std::move(rates);
  }
  if (inventory.reach_round_deadline_us != 0) doc["reach_round_deadline_us"] = inventory.reach_round_deadline_us;
  return doc.dump(1) + "\n";
}

void SealInventory(Inventory* inventory) {
  inventory->text = InventoryJson(*inventory);
  inventory->digest = proto::Blake2b256(
      proto::ByteView(reinterpret_cast<const uint8_t*>(inventory->text.data()), inventory->text.size()));
}

DeclaredCompute NodeComputeRate(const Inventory& inventory, const InventoryNode& node) {
  DeclaredCompute c;
  if (node.cpu_compressions_per_s == 0) {
    c.problem = "the inventory declares no CPU label rate (cpu_compressions_per_s) for node " + node.name;
    return c;
  }
  double total = node.cpu_compressions_per_s;
  for (const InventoryDevice& d : node.devices) {
    if (d.selector == kHostSelector) continue;  // host memory: its compute is the CPUs'
    auto it = inventory.label_rates_by_model.find(d.model);
    if (it == inventory.label_rates_by_model.end()) {
      c.problem = "the inventory's label_rates has no entry for model '" + d.model + "' (device " + d.selector + ")";
      return c;
    }
    total += it->second.compressions_per_s;
  }
  c.compressions_per_s = total;
  return c;
}

StatusOr<NodeDeclarations> DeclarationsOf(const Inventory& inventory, const std::string& node) {
  const InventoryNode* n = inventory.FindNode(node);
  if (n == nullptr) return NotFoundError("no node named '" + node + "' in the inventory");
  NodeDeclarations out;
  out.name = n->name;
  out.public_key = n->public_key;
  out.no_nvme_in_reach = n->no_nvme_in_reach;
  out.reach_round_deadline_us = inventory.reach_round_deadline_us;
  out.reach = n->reach;
  out.host_physical_memory_bytes = n->host_physical_memory_bytes;
  out.compute = NodeComputeRate(inventory, *n);
  for (const InventoryDevice& d : n->devices) {
    WP_ASSIGN_OR_RETURN(uint64_t reserve, inventory.ReserveFor(d.model));
    out.devices.push_back({d.selector, d.model, d.capacity_bytes, reserve, d.partition_of, d.partitions});
  }
  if (const Wave* w = inventory.WaveOf(node)) out.wave = {w->name, w->complete, w->nodes.size(), w->nodes};
  return out;
}

StatusOr<SignedInventory> ReadSignedInventory(const std::string& text, const std::string& what) {
  WP_ASSIGN_OR_RETURN(Inventory inventory, ParseInventoryJson(text, "", what, InventoryFiles::kNone));
  SignedInventory out;
  out.digest = *inventory.digest;  // set by ParseInventoryJson
  for (const InventoryNode& n : inventory.nodes) {
    WP_ASSIGN_OR_RETURN(out.nodes[n.name], DeclarationsOf(inventory, n.name));
  }
  return out;
}

StatusOr<Inventory> LoadInventory(const std::string& path) {
  WP_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseInventoryJson(text, DirOf(path), path);
}

}  // namespace wipeproof
