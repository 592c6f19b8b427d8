#include "challenger/parameters/profile_json_writer.h"
#include "common/numbers.h"

namespace wipeproof {

nlohmann::ordered_json ProfileToJson(const Profile& p) {
  nlohmann::ordered_json j;
  j["name"] = p.name;
  j["chunk_labels"] = p.chunk_labels;
  j["format"] = LabelFormatName(p.format);
  j["rounds"] = p.rounds;
  j["labels_per_round"] = p.labels_per_round;
  if (!p.labels_per_round_by_model.empty()) {
    nlohmann::ordered_json by_model = nlohmann::ordered_json::object();
    for (const auto& [model, q] : p.labels_per_round_by_model) by_model[model] = q;
    j["labels_per_round_by_model"] = by_model;
  }
  j["round_deadline_us"] = p.round_deadline_us;
  j["fill_deadline_ms"] = (p.fill_deadline_us + 999) / 1000;
  j["fill_rate_mib_per_s"] = p.fill_rate_bytes_per_s / kMiB;
  j["fill_slack_s"] = p.fill_slack_us / 1'000'000;
  j["adversary"] = {
      {"class", p.adversary.name}, {"t_min_ps", p.adversary.t_min_ps}, {"safety_factor", p.adversary.safety_factor}};
  j["confidence"] = p.confidence;
  j["calibrated"] = p.calibrated;
  j["honest_round_p999_us"] = p.honest_round_p999_us;
  if (p.honest_fill_us > 0) j["honest_fill_us"] = p.honest_fill_us;
  j["calibrated_at_unix_us"] = p.calibrated_at_unix_us > 0 ? static_cast<uint64_t>(p.calibrated_at_unix_us) : 0;
  j["order_ttl_s"] = p.order_ttl_us / 1'000'000;
  return j;
}

}  // namespace wipeproof
