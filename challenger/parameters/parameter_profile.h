// Parameter profiles: the session parameters a wipe runs under (m, format, rounds, labels per
// round, deadlines) and the adversary class and confidence they are meant for. Profiles come from
// a JSON file (--profile) or, until `calibrate` exists, the built-in DefaultProfile(), which is
// marked uncalibrated: sessions under it pass or fail normally but never state a bound.
//
// JSON format (docs/operations.md "Parameter profiles"); units are in the field names:
//   {
//     "name": "rack-cpu-2^14",                 required, non-empty
//     "chunk_labels": 16384,                   required: m, a power of two in [1, 2^20]
//     "format": "posedb-blake3-c1",            default c1; or "posedb-blake3-192"
//     "rounds": 16,                            required: R in [1, 4096]
//     "labels_per_round": 64,                  required: q per device per round, in [1, 2^17]
//     "labels_per_round_by_model": {"NVIDIA H200": 256},   optional per-model override of q, same range
//     "round_deadline_us": 400,                required, in [1, 86400000000] (1 day)
//     "fill_deadline_ms": 0,                   0 (default): derived, see FillDeadlineUs; else <= 86400000
//     "fill_rate_mib_per_s": 8,                default 8: conservative fill rate for the derivation,
//                                              finite, in [0.001, 1e9]
//     "fill_slack_s": 60,                      default 60: added to the derived fill deadline, <= 86400
//     "adversary": {"class": "commodity-cpu",  required, non-empty
//                   "t_min_ps": 40000,         in [1, 2^32 - 1]
//                   "safety_factor": 2},       finite, in [1, 1e6]
//     "confidence": 0.99,                      required, in (0, 1)
//     "calibrated": true,                      required
//     "honest_round_p999_us": 180,             default 0 (not measured); <= 86400000000
//     "honest_fill_us": 0,                     default 0 (not measured): the fill calibrate measured
//                                              (order sent to report received); <= 86400000000. When
//                                              set with a fill_deadline_ms, the deadline must be at
//                                              least (1 + kFillDeadlineMargin) x it
//     "calibrated_at_unix_us": 0,              default 0; <= 2^63 - 1
//     "order_ttl_s": 300                       default 300: order expiry after issue, in [1, 86400]
//   }                                          (the agent refuses orders valid for longer than 24 h)
// A profile file may also be a signed document (proto/signed_document.h, type kParameterProfile)
// wrapping this text: authority_documents.h loads both kinds and records whether the authority
// signed it (Profile::endorsement); only a profile the authority signed can state a bound.
// Every range is checked when the profile is loaded, with an error naming the field and its range.
// The bounds keep every derived quantity in range: a verdict with R <= 4096 rounds fits its size
// limit, deadlines and wait limits fit kj's nanosecond durations, and the order's expiry its field.
// Derived fill deadlines (FillDeadlineUs) and the labels a plan asks per round and per session
// (challenger/fleet/plan_builder.h BuildPlan) are checked when a plan is built, since they depend on the inventory.
//
// Thread-safety: Profile is a value; functions are pure (LoadProfile reads a file).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "kernels/label_spec.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

struct AdversaryClass {
  std::string name;          // e.g. "commodity-cpu", "fpga-asic"
  uint64_t t_min_ps = 0;     // picoseconds: fastest sequential compression ruled out
  double safety_factor = 1;  // dimensionless, >= 1
};

struct Profile;

// Who vouches for a profile (authority_documents.h sets it; nothing else does). A verdict states a
// bound only when every part holds for the profile it ran under (ProfileEndorsementProblem).
struct ProfileEndorsement {
  // The profile exactly as the document the authority signed says, set only after its signature
  // verified under the authority's key; null otherwise. A profile changed after loading no longer
  // equals it (SameParameters), so it loses the endorsement.
  std::shared_ptr<const Profile> signed_parameters;
  proto::KeyId authority_key_id{};  // the key that signed it (set with signed_parameters)
  proto::Digest document_digest{};  // BLAKE2b-256 of the signed profile text (set with signed_parameters)
  std::string signature_problem;    // why signed_parameters is null ("not signed", "does not verify ...")
  // The authority's class of the profile's name, from a classes file that verified under the same
  // key; empty otherwise, with the reason in class_problem.
  std::optional<AdversaryClass> signed_class;
  std::string class_problem;
};

struct Profile {
  std::string name;
  uint32_t chunk_labels = 0;  // m
  LabelFormat format = LabelFormat::kC1;
  uint32_t rounds = 0;                                        // R
  uint32_t labels_per_round = 0;                              // q per device per round (capped at the device's chunks)
  std::map<std::string, uint32_t> labels_per_round_by_model;  // model -> q
  uint64_t round_deadline_us = 0;
  uint64_t fill_deadline_us = 0;  // 0: derived from the plan's bytes (FillDeadlineUs)
  double fill_rate_bytes_per_s = 0;
  uint64_t fill_slack_us = 0;
  AdversaryClass adversary;
  double confidence = 0;  // c in (0, 1)
  bool calibrated = false;
  uint64_t honest_round_p999_us = 0;  // 0: not measured
  uint64_t honest_fill_us = 0;        // 0: not measured; the fill calibrate measured
  int64_t calibrated_at_unix_us = 0;
  uint64_t order_ttl_us = 0;       // order expiry after issue
  ProfileEndorsement endorsement;  // not part of the parameters (SameParameters ignores it)
};

// Every parameter equal (all fields but `endorsement`; doubles compared exactly).
bool SameParameters(const Profile& a, const Profile& b);

// The smallest safety factor a verdict states a bound under (threat-model.md "The claim"): a class's
// t_min is an estimate, and below 1.5 a slightly faster adversary than estimated would go unnoticed.
inline constexpr double kMinStatedSafetyFactor = 1.5;

// The margin a calibrated fill deadline keeps over the measured honest fill: fill deadline >=
// (1 + kFillDeadlineMargin) x honest_fill_us (calibration_rule.h step 3).
inline constexpr double kFillDeadlineMargin = 0.2;

// "" when `profile` may state a bound as far as who vouches for it goes: signed by the authority
// and unchanged since (SameParameters with endorsement.signed_parameters), and its class name,
// t_min and safety factor equal to the authority's signed class of that name. Otherwise the first
// reason that fails, as a verdict states it after "no bound: ".
std::string ProfileEndorsementProblem(const Profile& profile);

// Name of the built-in profile.
inline constexpr char kDefaultProfileName[] = "default-uncalibrated";

// Ranges of profile fields (see the file comment).
inline constexpr uint32_t kMaxProfileRounds = 4096;
inline constexpr uint32_t kMaxLabelsPerRound = uint32_t{1} << 17;         // per device; also per round, all devices
inline constexpr uint64_t kMaxDeadlineUs = uint64_t{86'400} * 1'000'000;  // 1 day: round, fill, honest p99.9
inline constexpr uint64_t kMaxFillSlackUs = uint64_t{86'400} * 1'000'000;
inline constexpr uint64_t kMaxOrderTtlUs = uint64_t{86'400} * 1'000'000;  // the agent's limit: 24 h
inline constexpr double kMinFillRateMiBPerS = 0.001;
inline constexpr double kMaxFillRateMiBPerS = 1e9;
inline constexpr uint64_t kMaxTMinPs = UINT32_MAX;  // deadline_rule.h: exact below 2^32 ps
inline constexpr double kMaxSafetyFactor = 1e6;

// The built-in uncalibrated profile: m = 2^12, c1, R = 16, q = 64 per device, round deadline
// 50 ms (loopback), fill deadline derived at 8 MiB/s + 60 s, class commodity-cpu (t_min 25 ns,
// safety 2), c = 0.99, order TTL 300 s. Not signed: never states a bound.
Profile DefaultProfile();

// Checks the ranges listed in the file comment. Errors: INVALID_ARGUMENT naming the field (its JSON
// name) and the allowed range.
Status ValidateProfile(const Profile& profile);

// Parses and validates a profile document. `what` names it in errors (a path or "profile").
StatusOr<Profile> ParseProfileJson(const std::string& text, const std::string& what = "profile");
// Reads and parses a profile file. Errors: as ReadTextFile (json_fields.h) and ParseProfileJson.
StatusOr<Profile> LoadProfile(const std::string& path);

// q for a device of `model`: the per-model override, else labels_per_round. (The plan caps it at
// the device's chunk count.)
uint32_t LabelsPerRoundFor(const Profile& profile, const std::string& model);

// Fill deadline for a plan whose largest device holds `max_device_bytes` (devices fill
// concurrently): profile.fill_deadline_us when set, else bytes / fill rate + slack, microseconds,
// rounded up. Saturates at UINT64_MAX instead of overflowing (also for a profile that was not
// validated); BuildPlan refuses a result above kMaxDeadlineUs.
uint64_t FillDeadlineUs(const Profile& profile, uint64_t max_device_bytes);

// Writes the wire ParameterProfile, including recomputeFloorUs from the deadline rule, and
// authorityKeyId and documentDigest when the authority vouches for all of it (signed, unchanged, its
// class the authority's signed class: ProfileEndorsementProblem is ""; empty otherwise).
void WriteProfile(const Profile& profile, proto::ParameterProfile::Builder out);

}  // namespace wipeproof
