// The node profile `wipeproof-prover bench --what=all` writes, as the challenger reads it: loaded
// from the signed document (proto/node_profile.h), verified under the node key from the
// *inventory* (never a key the document names), then parsed, then reduced to the claims the
// calibration rule may use to tighten parameters (calibration_rule.h NodeClaims).
//
// Profile JSON (fields the challenger reads; others are informational and ignored):
//   {"format": "wipeproof-node-profile-v1",
//    "node_key_id": "<16 hex>",  "software_version": "wipeproof-prover 0.1.0",
//    "created_at_unix_us": 1700000000000000, "created_at": "2025-01-01T00:00:00Z",
//    "machine": {"hostname": "...", "cpu_model": "...", "hardware_threads": 16, ...},
//    "host_sequential_compression": {"ps_per_compression": 61000, ...},
//    "devices": [
//      {"kind": "host" | "cuda" | "hip", "id": "host" | "GPU-...", "name": "...", "total_bytes": N,
//       "fill": [{"format": "posedb-blake3-c1", "chunk_labels": 16384, "bytes": N,
//                 "acquire_s": 0.1, "fill_s": 1.5, "bytes_per_s": 1.7e8}, ...],
//       "lookup": {"labels_per_lookup": 256, "samples": 2000, "p50_us": 20, "p90_us": 25,
//                  "p99_us": 40, "p999_us": 90, "max_us": 200},
//       "one_chunk": {"chunk_labels": 65536, "fill_us": 90000, "sequential_depth": 98304,
//                     "step_ps": 915000}}]}
//
// Thread-safety: pure functions (LoadSignedNodeProfile reads a file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "challenger/calibration/calibration_rule.h"
#include "common/status.h"
#include "kernels/label_spec.h"
#include "proto/crypto.h"

namespace wipeproof {

inline constexpr char kNodeProfileFormat[] = "wipeproof-node-profile-v1";

// Upper bounds on a node profile's figures (every number must also be finite and >= 0). A signed
// profile is the node's word, not the truth: a figure beyond these is refused, naming the field,
// before any arithmetic could overflow with it.
inline constexpr double kMaxNodeProfileMicros = 1e9;        // lookup p50..max_us, one_chunk.fill_us: 1000 s
inline constexpr double kMaxNodeProfileSeconds = 1e6;       // fill[].acquire_s, fill[].fill_s
inline constexpr double kMaxNodeProfileBytesPerS = 1e15;    // fill[].bytes_per_s: 1 PB/s
inline constexpr double kMaxNodeProfilePicos = 1e12;        // ps_per_compression, one_chunk.step_ps: 1 s
inline constexpr uint64_t kMaxNodeProfileBytes = uint64_t{1} << 50;  // total_bytes, fill[].bytes: 1 PiB

struct NodeFillFigure {
  LabelFormat format = LabelFormat::kC1;
  uint32_t chunk_labels = 0;  // m
  uint64_t bytes = 0;         // bytes filled
  double acquire_s = 0;       // taking the memory (mmap + mlock, cudaMalloc)
  double fill_s = 0;          // labelling it
  double bytes_per_s = 0;     // bytes / fill_s
};

struct NodeLookupFigure {
  uint32_t labels_per_lookup = 0;
  uint32_t samples = 0;
  double p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
};

struct NodeDeviceProfile {
  std::string kind;  // host, cuda, hip
  std::string id;    // the selector: "host", "GPU-<uuid>"
  std::string name;
  uint64_t total_bytes = 0;
  std::vector<NodeFillFigure> fills;
  NodeLookupFigure lookup;
  uint32_t one_chunk_labels = 0;  // m of the one-chunk fill; 0: not measured
  double one_chunk_fill_us = 0;   // one chunk alone: the device's own recompute latency
  double step_ps = 0;             // one_chunk_fill_us / (1.5 m c_node): per sequential node step;
                                  // any positive value is a measurement (0.5 ps included)
};

struct NodeProfile {
  std::string node_key_id;
  std::string software_version;
  int64_t created_at_unix_us = 0;
  std::string created_at;
  std::string hostname;
  std::string cpu_model;
  double host_sequential_compression_ps = 0;  // 0: not measured
  std::vector<NodeDeviceProfile> devices;

  const NodeDeviceProfile* FindDevice(const std::string& id) const;
};

// Errors: INVALID_ARGUMENT naming the field (missing, wrong type, negative, not finite, above its
// kMaxNodeProfile* bound).
StatusOr<NodeProfile> ParseNodeProfileJson(const std::string& text);
// Reads `path`, verifies it under `node_key` (proto::VerifyNodeProfile: PERMISSION_DENIED for a
// document not signed by that key or altered after signing), then parses the profile.
// `key_source` names where node_key came from, for the errors ("the inventory", "--node_pub FILE").
StatusOr<NodeProfile> LoadSignedNodeProfile(const std::string& path, const proto::PublicKey& node_key,
                                            const std::string& key_source = "the inventory");

// The node's own estimate of filling `planned_bytes` of `device` at m in `format`, from the figure
// it measured at exactly that m and format (acquire time and fill time scaled by bytes). 0 when it
// has none: a figure at another m is not extrapolated (label cost is not the graph's alone: cache
// effects grow with m), so a node is never held to a claim it did not make.
uint64_t NodeFillEstimateUs(const NodeDeviceProfile& device, LabelFormat format, uint32_t chunk_labels,
                            uint64_t planned_bytes);

struct PlannedDeviceRef {
  std::string selector;
  uint64_t planned_bytes = 0;  // labels * 32 at the chosen m
  uint64_t declared_capacity_bytes = 0;
};
// Reduces the profile to claims for a plan at m: the fill estimate is the largest device's
// estimate (devices fill concurrently), or 0 (no claim, with a note) when a planned device is
// missing from the profile; the sequential time is the fastest of the host core and every
// device's step. Devices larger than declared are noted.
NodeClaims ClaimsFromNodeProfile(const NodeProfile& profile, const std::vector<PlannedDeviceRef>& devices,
                                 LabelFormat format, uint32_t chunk_labels);

}  // namespace wipeproof
