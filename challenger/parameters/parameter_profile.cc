#include "challenger/parameters/parameter_profile.h"

#include <cmath>
#include <cstdio>

#include "challenger/parameters/deadline_rule.h"
#include "proto/label_wire.h"
#include "common/json_fields.h"
#include "common/numbers.h"

namespace wipeproof {

namespace {

constexpr uint64_t kMicrosPerSecond = 1'000'000;

std::string Number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.10g", x);
  return buf;
}

// "<field>: must be >= lo and <= hi<why>, got <value>" unless lo <= value <= hi.
Status InRange(const std::string& field, uint64_t value, uint64_t lo, uint64_t hi, const std::string& why = "") {
  if (value >= lo && value <= hi) return Status::Ok();
  return InvalidArgumentError(field + ": must be >= " + std::to_string(lo) + " and <= " + std::to_string(hi) + why +
                              ", got " + std::to_string(value));
}

Status CheckChunkLabels(uint64_t m) {
  if (!ChunkLabelsInRange(m) || !IsPowerOfTwo(m)) {
    return InvalidArgumentError("chunk_labels: " + std::to_string(m) +
                                " is not a power of two in [1, 2^20] (the deadline rule's depth 1.5*m is "
                                "established for powers of two)");
  }
  return Status::Ok();
}

Status CheckRounds(uint64_t rounds) {
  return InRange("rounds", rounds, 1, kMaxProfileRounds, " (the verdict lists every round)");
}

Status CheckLabelsPerRound(const std::string& field, uint64_t q) {
  return InRange(field, q, 1, kMaxLabelsPerRound, " (2^17)");
}

constexpr char kOneDay[] = " (1 day)";

}  // namespace

Profile DefaultProfile() {
  Profile p;
  p.name = kDefaultProfileName;
  p.chunk_labels = 4096;
  p.format = LabelFormat::kC1;
  p.rounds = 16;
  p.labels_per_round = 64;
  p.round_deadline_us = 50'000;
  p.fill_deadline_us = 0;
  p.fill_rate_bytes_per_s = 8 * kMiB;
  p.fill_slack_us = 60 * kMicrosPerSecond;
  p.adversary = {"commodity-cpu", 25'000, 2.0};  // adversary_classes.h kCommodityCpuTMinPs
  p.confidence = 0.99;
  p.calibrated = false;
  p.order_ttl_us = 300 * kMicrosPerSecond;
  return p;
}

Status ValidateProfile(const Profile& p) {
  if (p.name.empty()) return InvalidArgumentError("name: empty");
  WP_RETURN_IF_ERROR(CheckChunkLabels(p.chunk_labels));
  WP_RETURN_IF_ERROR(CheckRounds(p.rounds));
  WP_RETURN_IF_ERROR(CheckLabelsPerRound("labels_per_round", p.labels_per_round));
  for (const auto& [model, q] : p.labels_per_round_by_model) {
    WP_RETURN_IF_ERROR(CheckLabelsPerRound("labels_per_round_by_model." + model, q));
  }
  WP_RETURN_IF_ERROR(InRange("round_deadline_us", p.round_deadline_us, 1, kMaxDeadlineUs, kOneDay));
  if (p.fill_deadline_us > kMaxDeadlineUs) {
    return InvalidArgumentError("fill_deadline_ms: must be 0 (derived) or <= " + std::to_string(kMaxDeadlineUs / 1000) +
                                " (1 day), got " + Number(static_cast<double>(p.fill_deadline_us) / 1000));
  }
  const double rate_mib = p.fill_rate_bytes_per_s / kMiB;
  // Compared in bytes/s, as ParseProfileJson converts (MiB/s * kMiB), so the bounds themselves load.
  if (!std::isfinite(p.fill_rate_bytes_per_s) || !(p.fill_rate_bytes_per_s >= kMinFillRateMiBPerS * kMiB) ||
      !(p.fill_rate_bytes_per_s <= kMaxFillRateMiBPerS * kMiB)) {
    return InvalidArgumentError("fill_rate_mib_per_s: must be a finite number >= " + Number(kMinFillRateMiBPerS) +
                                " and <= " + Number(kMaxFillRateMiBPerS) + ", got " + Number(rate_mib));
  }
  if (p.fill_slack_us > kMaxFillSlackUs) {
    return InvalidArgumentError("fill_slack_s: must be <= " + std::to_string(kMaxFillSlackUs / kMicrosPerSecond) +
                                kOneDay + ", got " + Number(static_cast<double>(p.fill_slack_us) / 1e6));
  }
  if (p.adversary.name.empty()) return InvalidArgumentError("adversary.class: empty");
  WP_RETURN_IF_ERROR(InRange("adversary.t_min_ps", p.adversary.t_min_ps, 1, kMaxTMinPs, " (2^32 - 1)"));
  if (!(p.adversary.safety_factor >= 1.0) || !(p.adversary.safety_factor <= kMaxSafetyFactor) ||
      !std::isfinite(p.adversary.safety_factor)) {
    return InvalidArgumentError("adversary.safety_factor: must be a finite number >= 1 and <= " +
                                Number(kMaxSafetyFactor) + ", got " + Number(p.adversary.safety_factor));
  }
  if (!(p.confidence > 0 && p.confidence < 1)) return InvalidArgumentError("confidence: must be in (0, 1)");
  WP_RETURN_IF_ERROR(InRange("honest_round_p999_us", p.honest_round_p999_us, 0, kMaxDeadlineUs, kOneDay));
  WP_RETURN_IF_ERROR(InRange("honest_fill_us", p.honest_fill_us, 0, kMaxDeadlineUs, kOneDay));
  if (p.honest_fill_us > 0 && p.fill_deadline_us > 0 &&
      static_cast<long double>(p.fill_deadline_us) <
          (1.0L + kFillDeadlineMargin) * static_cast<long double>(p.honest_fill_us) - 1e-6L) {
    return InvalidArgumentError("fill_deadline_ms: " + Number(static_cast<double>(p.fill_deadline_us) / 1000) +
                                " ms is below " + Number(1 + kFillDeadlineMargin) + " x the measured honest fill " +
                                Number(static_cast<double>(p.honest_fill_us) / 1000) +
                                " ms (honest_fill_us): honest nodes would miss it");
  }
  if (p.calibrated_at_unix_us < 0) return InvalidArgumentError("calibrated_at_unix_us: must be >= 0");
  if (p.order_ttl_us < kMicrosPerSecond || p.order_ttl_us > kMaxOrderTtlUs) {
    return InvalidArgumentError(
        "order_ttl_s: must be >= 1 and <= " + std::to_string(kMaxOrderTtlUs / kMicrosPerSecond) +
        " (24 h: the agent refuses orders valid for longer), got " + Number(static_cast<double>(p.order_ttl_us) / 1e6));
  }
  return Status::Ok();
}

StatusOr<Profile> ParseProfileJson(const std::string& text, const std::string& what) {
  WP_ASSIGN_OR_RETURN(nlohmann::json doc, ParseJsonText(text, what));
  auto wrap = [&](const Status& s) { return s.WithContext(what); };
  auto root_or = JsonObject::Of(doc, "");
  if (!root_or.ok()) return wrap(root_or.status());
  const JsonObject& root = *root_or;
  Status s = root.CheckKnownKeys({"name", "chunk_labels", "format", "rounds", "labels_per_round",
                                  "labels_per_round_by_model", "round_deadline_us", "fill_deadline_ms",
                                  "fill_rate_mib_per_s", "fill_slack_s", "adversary", "confidence", "calibrated",
                                  "honest_round_p999_us", "honest_fill_us", "calibrated_at_unix_us", "order_ttl_s"});
  if (!s.ok()) return wrap(s);

  Profile p = DefaultProfile();
  uint64_t m = 0, rounds = 0, q = 0, fill_deadline_ms = 0, fill_slack_s = 60, order_ttl_s = 300;
  double fill_rate_mib = 8;
  std::string format = LabelFormatName(LabelFormat::kC1);
  uint64_t calibrated_at = 0;
  for (const Status& field : {
           root.String("name", &p.name),
           root.Uint64("chunk_labels", &m),
           root.OptionalString("format", &format),
           root.Uint64("rounds", &rounds),
           root.Uint64("labels_per_round", &q),
           root.Uint64("round_deadline_us", &p.round_deadline_us),
           root.OptionalUint64("fill_deadline_ms", &fill_deadline_ms),
           root.OptionalDouble("fill_rate_mib_per_s", &fill_rate_mib),
           root.OptionalUint64("fill_slack_s", &fill_slack_s),
           root.Double("confidence", &p.confidence),
           root.Bool("calibrated", &p.calibrated),
           root.OptionalUint64("honest_round_p999_us", &p.honest_round_p999_us),
           root.OptionalUint64("honest_fill_us", &p.honest_fill_us),
           root.OptionalUint64("calibrated_at_unix_us", &calibrated_at),
           root.OptionalUint64("order_ttl_s", &order_ttl_s),
       }) {
    if (!field.ok()) return wrap(field);
  }
  if (!ParseLabelFormat(format, &p.format)) {
    return wrap(InvalidArgumentError("format: want posedb-blake3-c1 or posedb-blake3-192, got '" + format + "'"));
  }
  // Ranges of the values as written, before any unit conversion could overflow (ValidateProfile
  // checks the converted ones again below).
  for (const Status& field : {
           CheckChunkLabels(m),
           CheckRounds(rounds),
           CheckLabelsPerRound("labels_per_round", q),
           InRange("fill_deadline_ms", fill_deadline_ms, 0, kMaxDeadlineUs / 1000, " (0: derived; 1 day)"),
           InRange("fill_slack_s", fill_slack_s, 0, kMaxFillSlackUs / kMicrosPerSecond, kOneDay),
           InRange("order_ttl_s", order_ttl_s, 1, kMaxOrderTtlUs / kMicrosPerSecond,
                   " (24 h: the agent refuses orders valid for longer)"),
           InRange("calibrated_at_unix_us", calibrated_at, 0, static_cast<uint64_t>(INT64_MAX)),
       }) {
    if (!field.ok()) return wrap(field);
  }
  p.chunk_labels = static_cast<uint32_t>(m);
  p.rounds = static_cast<uint32_t>(rounds);
  p.labels_per_round = static_cast<uint32_t>(q);
  p.fill_deadline_us = fill_deadline_ms * 1000;
  p.fill_rate_bytes_per_s = fill_rate_mib * kMiB;
  p.fill_slack_us = fill_slack_s * kMicrosPerSecond;
  p.order_ttl_us = order_ttl_s * kMicrosPerSecond;
  p.calibrated_at_unix_us = static_cast<int64_t>(calibrated_at);

  if (root.Has("labels_per_round_by_model")) {
    auto by_model = JsonObject::Of(root.Get("labels_per_round_by_model"), "labels_per_round_by_model");
    if (!by_model.ok()) return wrap(by_model.status());
    for (auto it = root.Get("labels_per_round_by_model").begin(); it != root.Get("labels_per_round_by_model").end();
         ++it) {
      uint64_t model_q = 0;
      s = by_model->Uint64(it.key(), &model_q);
      if (s.ok()) s = CheckLabelsPerRound(by_model->PathOf(it.key()), model_q);
      if (!s.ok()) return wrap(s);
      p.labels_per_round_by_model[it.key()] = static_cast<uint32_t>(model_q);
    }
  }
  if (!root.Has("adversary")) return wrap(InvalidArgumentError("adversary: missing"));
  auto adversary = JsonObject::Of(root.Get("adversary"), "adversary");
  if (!adversary.ok()) return wrap(adversary.status());
  for (const Status& field :
       {adversary->CheckKnownKeys({"class", "t_min_ps", "safety_factor"}),
        adversary->String("class", &p.adversary.name), adversary->Uint64("t_min_ps", &p.adversary.t_min_ps),
        adversary->Double("safety_factor", &p.adversary.safety_factor)}) {
    if (!field.ok()) return wrap(field);
  }
  s = ValidateProfile(p);
  if (!s.ok()) return wrap(s);
  return p;
}

StatusOr<Profile> LoadProfile(const std::string& path) {
  WP_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseProfileJson(text, path);
}

uint32_t LabelsPerRoundFor(const Profile& profile, const std::string& model) {
  auto it = profile.labels_per_round_by_model.find(model);
  return it != profile.labels_per_round_by_model.end() ? it->second : profile.labels_per_round;
}

uint64_t FillDeadlineUs(const Profile& profile, uint64_t max_device_bytes) {
  if (profile.fill_deadline_us > 0) return profile.fill_deadline_us;
  const double seconds = static_cast<double>(max_device_bytes) / profile.fill_rate_bytes_per_s;
  const double us = std::ceil(seconds * 1e6);
  // Not a number (a rate of 0 or NaN) or 2^64 and above: saturate rather than convert (UB).
  if (!(us >= 0) || !(us < 18446744073709551616.0)) return UINT64_MAX;
  const uint64_t derived = static_cast<uint64_t>(us);
  return derived > UINT64_MAX - profile.fill_slack_us ? UINT64_MAX : derived + profile.fill_slack_us;
}

bool SameParameters(const Profile& a, const Profile& b) {
  return a.name == b.name && a.chunk_labels == b.chunk_labels && a.format == b.format && a.rounds == b.rounds &&
         a.labels_per_round == b.labels_per_round && a.labels_per_round_by_model == b.labels_per_round_by_model &&
         a.round_deadline_us == b.round_deadline_us && a.fill_deadline_us == b.fill_deadline_us &&
         a.fill_rate_bytes_per_s == b.fill_rate_bytes_per_s && a.fill_slack_us == b.fill_slack_us &&
         a.adversary.name == b.adversary.name && a.adversary.t_min_ps == b.adversary.t_min_ps &&
         a.adversary.safety_factor == b.adversary.safety_factor && a.confidence == b.confidence &&
         a.calibrated == b.calibrated && a.honest_round_p999_us == b.honest_round_p999_us &&
         a.honest_fill_us == b.honest_fill_us && a.calibrated_at_unix_us == b.calibrated_at_unix_us &&
         a.order_ttl_us == b.order_ttl_us;
}

namespace {

std::string ClassFigures(const AdversaryClass& a) {
  return "t_min " + std::to_string(a.t_min_ps) + " ps, safety " + Number(a.safety_factor);
}

}  // namespace

std::string ProfileEndorsementProblem(const Profile& p) {
  const ProfileEndorsement& e = p.endorsement;
  if (e.signed_parameters == nullptr) {
    return "profile " + p.name + " is not signed by the authority (" +
           (e.signature_problem.empty() ? std::string("no signature") : e.signature_problem) + ")";
  }
  if (!SameParameters(p, *e.signed_parameters)) {
    return "profile " + p.name + " differs from the document the authority signed (key " +
           proto::KeyIdHex(e.authority_key_id) + ")";
  }
  if (!e.signed_class) {
    return "class " + p.adversary.name + " is not the authority's (" +
           (e.class_problem.empty() ? std::string("no signed adversary classes") : e.class_problem) + ")";
  }
  const AdversaryClass& c = *e.signed_class;
  if (c.name != p.adversary.name || c.t_min_ps != p.adversary.t_min_ps ||
      c.safety_factor != p.adversary.safety_factor) {
    return "class " + p.adversary.name + " of profile " + p.name + " (" + ClassFigures(p.adversary) +
           ") differs from the authority's signed class " + c.name + " (" + ClassFigures(c) + ")";
  }
  return "";
}

void WriteProfile(const Profile& profile, proto::ParameterProfile::Builder out) {
  out.setName(profile.name);
  out.setCalibrated(profile.calibrated);
  out.setAdversaryClass(profile.adversary.name);
  out.setTMinPs(profile.adversary.t_min_ps);
  out.setSafetyFactor(profile.adversary.safety_factor);
  out.setConfidence(profile.confidence);
  out.setHonestRoundP999Us(profile.honest_round_p999_us);
  const DeadlineRuleResult rule =
      CheckDeadlineRule(profile.chunk_labels, profile.format, profile.adversary.t_min_ps,
                        profile.adversary.safety_factor, profile.round_deadline_us, profile.adversary.name);
  out.setRecomputeFloorUs(rule.floor_us);
  out.setCalibratedAtUnixUs(profile.calibrated_at_unix_us);
  // The deadline rule's inputs, so a delegation that lists this profile binds them too.
  out.setChunkLabels(profile.chunk_labels);
  out.setFormat(proto::FormatToWire(profile.format));
  out.setRoundDeadlineUs(profile.round_deadline_us);
  // Named as the authority's only when the authority vouches for all of it, class included: the
  // profiles a delegation lists are written the same way (delegation_document.h).
  if (ProfileEndorsementProblem(profile).empty()) {
    const ProfileEndorsement& e = profile.endorsement;
    out.setAuthorityKeyId(capnp::Data::Reader(e.authority_key_id.data(), e.authority_key_id.size()));
    out.setDocumentDigest(capnp::Data::Reader(e.document_digest.data(), e.document_digest.size()));
  }
}

}  // namespace wipeproof
