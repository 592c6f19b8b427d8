// The authority's fleet inventory: nodes (address, node key, devices with model and declared
// capacity), waves (groups of nodes wiped together on a schedule) and the allowed reserve per
// device model. Read from a JSON file; every error names the field, e.g.
// "inventory.json: nodes[1].devices[0].capacity_bytes: missing".
//
// JSON format (docs/operations.md "Inventory"):
//   {
//     "nodes": [
//       {"name": "gpu-01",                        unique, 1 to 256 bytes of letters, digits, ., _, -
//                                                 (a host name; not first -)
//        "address": "10.0.0.11:7700",             host:port of its wipeproof-prover serve
//        "public_key": "<64 hex digits>",         the node key; or "public_key_file": "keys/gpu-01.pub"
//                                                 (relative to the inventory file's folder)
//        "certificate_file": "keys/gpu-01.crt",   the node key's TLS certificate (`wipeproof-prover
//                                                 keygen` writes it beside the .pub; relative to the
//                                                 inventory's folder), pinned: sessions connect only
//                                                 to an agent proving it holds that key. Checked
//                                                 against the node key when loaded. Optional here (an
//                                                 inventory for `plan` needs none); a session to a
//                                                 node without one fails to connect, naming the field
//        "no_nvme_in_reach": false,               optional: true only if the authority established
//                                                 that no NVMe drive is reachable (or it is wiped
//                                                 by other means); default false = unknown
//        "network_isolated_during_wipe": false,   optional: true only if the node is cut off from the
//                                                 network (but the challenger's link) during wipes;
//                                                 default false = not declared
//        "egress_bytes_per_s": 0,                 optional: the node's egress bandwidth, bytes/s, in
//                                                 [1, 2^50]; not with network_isolated_during_wipe
//                                                 true; absent = not declared (unknown)
//        "ingress_bytes_per_s": 0,                optional: the node's ingress bandwidth, bytes/s, as
//                                                 egress_bytes_per_s (the compute statement)
//        "cpu_compressions_per_s": 2.0e10,        optional: the node's CPUs' fastest BLAKE3 rate,
//                                                 compressions/s, in (0, 1e16]; absent = not declared
//        "host_physical_memory_bytes": 2199023255552,  optional: the node's physical host memory
//                                                 (DRAM), bytes, in [1, 2^50], as the authority
//                                                 established it (not the operator's word, not the
//                                                 agent's budget); host-memory-in-plan holds only
//                                                 when the host plan covers it; absent = not declared
//        "other_memory": [                        optional, at most 256: memory of the node no plan
//          {"kind": "dpu", "name": "BlueField-3",   covers; kind "dpu", "cxl" or "other", name 1 to
//           "bytes": 34359738368}],                 256 bytes, bytes in [1, 2^50]
//        "scheduler_name": "gpu-01.cluster",      optional: the node's name in its workload scheduler
//                                                 (Slurm, Kubernetes); default its name
//        "lifecycle": {"kind": "slurm"},          optional: how it is drained around a wipe and
//                                                 resumed after a pass (lifecycle_spec.h); overrides
//                                                 its wave's; {"kind": "none"} turns the wave's off
//        "devices": [                             1 to 256 devices
//          {"selector": "host", "model": "host-dram", "capacity_bytes": 2147483648},
//          {"selector": "GPU-8c6f...", "model": "NVIDIA H200", "capacity_bytes": 150754820096}]}
//     ],                                          selector, model: 1 to 256 bytes; capacity in
//                                                 [1, 2^50] bytes (1 PiB). A slice of a partitioned
//                                                 GPU (a MIG instance, a partition of an MI300) also
//                                                 names its physical device and how many slices it is
//                                                 split into, as the authority found them:
//                                                 "partition_of": "GPU-8c6f...", "partitions": 7
//                                                 (both or neither; partitions in [1, 256], equal on
//                                                 every slice of one device, no more slices listed)
//     "waves": [                                  optional
//       {"name": "rack-1", "nodes": ["gpu-01", "gpu-02"],
//        "period_s": 86400, "jitter_s": 21600,    seconds; 0 < period_s <= 31622400 (366 days),
//                                                 0 <= jitter_s <= period_s
//        "lifecycle": {"kind": "slurm", "grace_s": 600},   optional: its members' default
//        "hold": {"mean_gap_s": 1, "shortfall": 0.25, "labels_per_round": 8},   optional: idle nodes
//                                                 held between runs (serve): each session's occupancy
//                                                 window lasts to the wave's next run; mean_gap_s in
//                                                 [1e-6, period_s], shortfall in (0, 1) of the planned
//                                                 bytes, labels_per_round >= 1; period_s + jitter_s
//                                                 <= 31 days (the longest window an order may ask),
//                                                 and that window's pool of rounds (session_plan.h
//                                                 OccupancyPoolRounds) within a session's limits
//        "complete": true}                        true = every node that can reach a member's
//     ],                                          memory within a round deadline is in the wave
//     "reserves": {"host-dram": 0, "NVIDIA H200": 536870912}   bytes per device model, <= 2^50;
//                                                              required for every model the nodes use
//     "label_rates": {"NVIDIA H200": {"compressions_per_s": 4e11, "source": "..."}}   optional: per
//                   model, its fastest label rate in (0, 1e16] and where the figure comes from (1 to
//                   1024 bytes); with the node's cpu rate, the compute statement's R
//     "reach_round_deadline_us": 20000            optional, in [1, 2^40]: the longest round deadline,
//                                                 microseconds, for which the authority established
//                                                 what lies within reach (no_nvme_in_reach, every
//                                                 wave's complete): a longer deadline gives memory
//                                                 farther away time to answer, so a session whose
//                                                 round deadline exceeds it states neither
//                                                 assumption (assumptions.h); absent = no deadline
//                                                 stated, and each held one's detail says so
//   }
// No key may appear twice in one object (json_fields.h ParseJsonText).
//
// Thread-safety: Inventory is a value, immutable after loading.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "challenger/fleet/lifecycle_spec.h"
#include "challenger/session/declared_node.h"
#include "challenger/session/node_reach.h"
#include "common/status.h"
#include "proto/crypto.h"
#include "proto/tls_certificate.h"

namespace wipeproof {

// Selector of host memory (DevicePlan.selector, label of the host-memory assumption).
inline constexpr char kHostSelector[] = "host";

// Ranges (see the file comment): they keep every plan's order within its size limit and every
// label index, byte count and bound within 64 bits.
inline constexpr uint64_t kMaxDeviceCapacityBytes = uint64_t{1} << 50;
inline constexpr size_t kMaxDevicesPerNode = 256;
inline constexpr size_t kMaxInventoryNameBytes = 256;  // node, selector, model and wave names
inline constexpr double kMaxWavePeriodS = 366.0 * 86'400;
inline constexpr uint64_t kMaxEgressBytesPerS = uint64_t{1} << 50;
inline constexpr size_t kMaxOtherMemoryEntries = 256;
inline constexpr uint32_t kMaxPartitions = 256;
inline constexpr double kMaxLabelCompressionsPerS = 1e16;
inline constexpr size_t kMaxLabelRateSourceBytes = 1024;
inline constexpr uint64_t kMaxReachRoundDeadlineUs = uint64_t{1} << 40;

// A device model's fastest label rate, as the authority established it (label_rates).
struct LabelRate {
  double compressions_per_s = 0;  // BLAKE3 compressions per second at the hardware's limit
  std::string source;             // where the figure comes from (datasheet, measurement, derivation)
};

struct InventoryDevice {
  std::string selector;         // "host" or a GPU UUID as the runtime reports it
  std::string model;            // key into Inventory::reserve_bytes_by_model
  uint64_t capacity_bytes = 0;  // declared capacity, bytes
  std::string partition_of;     // a slice's physical device; "" = a whole device
  uint32_t partitions = 0;      // slices the physical device is split into; 0 = a whole device
};

struct InventoryNode {
  std::string name;
  std::string address;  // host:port
  proto::PublicKey public_key{};
  proto::PinnedCertificate certificate;  // of public_key; empty when the inventory gives none
  bool key_from_file = false;            // public_key_file: the document's digest does not cover the key
  bool no_nvme_in_reach = false;
  NodeReach reach;  // network isolation or egress bandwidth, memory no plan covers
  uint64_t host_physical_memory_bytes = 0;  // the authority's finding; 0 = not declared
  double cpu_compressions_per_s = 0;        // the node's CPUs' fastest label rate; 0 = not declared
  std::string scheduler_name;              // its name in the workload scheduler (default: name)
  std::optional<LifecycleSpec> lifecycle;  // its own drain/resume hook, overriding its wave's
  std::vector<InventoryDevice> devices;
  std::vector<std::string> files_read;  // public_key_file and certificate_file, as opened
};

// A wave of idle nodes held continuously (serve): the occupancy window each session asks, but for
// its length (the time to the wave's next run, drawn by the schedule). session_plan.h
// OccupancyRequest.
inline constexpr uint64_t kMaxHoldLabelsPerRound = uint64_t{1} << 17;  // parameter_profile.h kMaxLabelsPerRound
struct WaveHold {
  double mean_gap_s = 0;
  double shortfall = 0;  // b as a fraction of the node's planned bytes
  uint32_t labels_per_round = 0;
};

struct Wave {
  std::string name;
  std::vector<std::string> nodes;
  double period_s = 0;
  double jitter_s = 0;
  bool complete = false;
  std::optional<LifecycleSpec> lifecycle;  // the members' drain/resume hook, unless a node has its own
  std::optional<WaveHold> hold;            // idle nodes held between runs (serve); none: not held
};

struct Inventory {
  // The document exactly as read, and its BLAKE2b-256: what the authority's delegation names
  // (`delegate --inventory`), the challenger records in its ledger and the audits read back.
  // The digest is set only when every node key is inline (no public_key_file: a digest that does
  // not cover the keys names nothing); empty and nullopt for an inventory built in code.
  std::string text;
  std::optional<proto::Digest> digest;
  std::vector<InventoryNode> nodes;
  std::vector<Wave> waves;
  std::map<std::string, uint64_t> reserve_bytes_by_model;
  std::map<std::string, LabelRate> label_rates_by_model;  // optional table (label_rates)
  // reach_round_deadline_us, microseconds; 0 = not declared.
  uint64_t reach_round_deadline_us = 0;

  // nullptr when absent.
  const InventoryNode* FindNode(const std::string& name) const;
  const Wave* FindWave(const std::string& name) const;
  // The wave `node` belongs to (a node is in at most one), or nullptr.
  const Wave* WaveOf(const std::string& node) const;
  // The drain/resume hook of `node`: its own, else its wave's; nullopt when neither or kind none.
  std::optional<LifecycleSpec> LifecycleOf(const std::string& node) const;
  // Errors: NOT_FOUND naming the model when the table has no entry.
  StatusOr<uint64_t> ReserveFor(const std::string& model) const;
};

// How a document's files are read: kRead resolves public_key_file and certificate_file against the
// document's folder; kNone reads none, for a document read apart from its folder (a signed
// inventory: `delegate --inventory`, its copy in a ledger or an export): public_key_file is then
// refused (a signed inventory names each node key inline, so its digest covers the key) and
// certificate_file is not read (no certificate pinned).
enum class InventoryFiles { kRead, kNone };

// Parses and checks an inventory document, keeping its text and digest. Relative key-file paths
// are resolved against `base_dir` ("" = the working directory). `what` names the document in errors.
StatusOr<Inventory> ParseInventoryJson(const std::string& text, const std::string& base_dir,
                                       const std::string& what = "inventory", InventoryFiles files = InventoryFiles::kRead);

// `inventory` as a document ParseInventoryJson reads back to the same values (every node key
// inline, no certificate file, default fields left out), for an inventory built in code (the
// selftest's, tests').
std::string InventoryJson(const Inventory& inventory);
// Sets inventory->text to InventoryJson and digest to its BLAKE2b-256: an inventory built in code,
// made a document a delegation can name. Call it again after changing the inventory.
void SealInventory(Inventory* inventory);

// The node's fastest label rate: its CPUs' plus each non-host device's model rate; a problem
// naming what is missing when the inventory does not declare all of them.
DeclaredCompute NodeComputeRate(const Inventory& inventory, const InventoryNode& node);

// What the inventory declares of `node` (session/declared_node.h). Errors: NOT_FOUND for an unknown
// node or a model without a reserve.
StatusOr<NodeDeclarations> DeclarationsOf(const Inventory& inventory, const std::string& node);

// A signed inventory's text as an audit reads it (InventoryFiles::kNone): its digest and every
// node's declarations. Errors: as ParseInventoryJson.
StatusOr<SignedInventory> ReadSignedInventory(const std::string& text, const std::string& what);
// Reads `path` and parses it with base_dir = the file's folder.
StatusOr<Inventory> LoadInventory(const std::string& path);

// Splits "host:port" (or "[v6]:port"). Errors: INVALID_ARGUMENT when the port is missing or not
// in [1, 65535].
Status CheckAddress(const std::string& address);

}  // namespace wipeproof
