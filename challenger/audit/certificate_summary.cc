#include "challenger/audit/certificate_summary.h"

#include <capnp/compat/json.h>
#include <capnp/schema.h>

#include <optional>

#include "challenger/audit/certificate_text.h"
#include "common/clock.h"
#include "common/hex.h"
#include "proto/codec.h"
#include "proto/signing.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {
namespace {

using Json = nlohmann::ordered_json;
using proto::LedgerRecordKind;

// Unix microseconds: an order sent at or after this (year 38,000) is placed nowhere, nor an offset this long.
constexpr int64_t kTimeLimitUs = int64_t{1} << 60;

// The Verdict fields the summary names (wipe.capnp Verdict @0-@20); any other goes to "further".
constexpr const char* kNamedVerdictFields[] = {"sessionId",      "nodeName",
                                               "pass",           "failure",
                                               "fillMicros",     "fillDeadlineUs",
                                               "rounds",         "roundDeadlineUs",
                                               "devices",        "confidence",
                                               "profile",        "deadlineRuleSatisfied",
                                               "boundStated",    "totalUnwipedBoundBytes",
                                               "statement",      "assumptions",
                                               "orderDigest",    "reportDigest",
                                               "issuedAtUnixUs", "orderSentAtUnixUs",
                                               "occupancy"};

template <typename T>
StatusOr<proto::Parsed<T>> Payload(const proto::Bytes& record) {
  WP_ASSIGN_OR_RETURN(proto::SignedEnvelope envelope, proto::DecodeEnvelope(proto::AsView(record)));
  return proto::ParseMessage<T>(proto::AsView(envelope.payload));
}

std::string Text(capnp::Text::Reader text) { return std::string(text.begin(), text.size()); }

// `offset` microseconds after an order sent at `sent` (Unix us), or nothing (certificate_summary.h).
std::optional<int64_t> At(int64_t sent, uint64_t offset) {
  if (sent <= 0 || sent >= kTimeLimitUs || offset >= static_cast<uint64_t>(kTimeLimitUs)) return std::nullopt;
  return sent + static_cast<int64_t>(offset);
}

// "<name>_unix_us" and "<name>" (UTC text), or both null.
void PutTime(Json& out, const std::string& name, std::optional<int64_t> at) {
  out[name + "_unix_us"] = at ? Json(*at) : Json(nullptr);
  out[name] = at ? Json(FormatUnixMicrosUtc(*at)) : Json(nullptr);
}

// The verdict's fields kNamedVerdictFields leaves out, as capnp's JSON codec writes them.
StatusOr<Json> FurtherFields(const proto::Parsed<proto::Verdict>& verdict) {
  const proto::Held<proto::Verdict> held(verdict);  // no traversal budget: the whole message is walked
  Json all;
  try {
    capnp::JsonCodec codec;
    kj::String text = codec.encode(held.root());
    all = Json::parse(text.cStr());
  } catch (const kj::Exception& e) {
    return InvalidArgumentError(std::string("verdict: ") + e.getDescription().cStr());
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(std::string("verdict: its fields as JSON: ") + e.what());
  }
  for (const char* name : kNamedVerdictFields) all.erase(name);
  return FloatsAsText(all);
}

Json OccupancyJson(proto::OccupancyStatement::Reader o) {
  return {{"window_start_after_order_us", o.getWindowStartAfterOrderUs()},
          {"window_end_after_order_us", o.getWindowEndAfterOrderUs()},
          {"rounds", o.getRounds()},
          {"detection", FloatText(o.getDetection())},
          {"short_us", o.getShortUs()},
          {"stated", o.getStated()},
          {"statement", Text(o.getStatement())},
          {"unprotected_us", o.getUnprotectedUs()}};
}

Json TimesJson(proto::WipeOrder::Reader order, proto::Verdict::Reader v, const VerifiedEntry& verdict_entry) {
  const int64_t sent = v.getOrderSentAtUnixUs();
  Json times;
  PutTime(times, "order_issued_at", order.getIssuedAtUnixUs());
  PutTime(times, "order_sent_at", sent);
  times["fill_us"] = v.getFillMicros();
  PutTime(times, "fill_ended_at", v.getFillMicros() == 0 ? std::nullopt : At(sent, v.getFillMicros()));
  times["fill_deadline_us"] = v.getFillDeadlineUs();
  times["round_deadline_us"] = v.getRoundDeadlineUs();
  times["rounds"] = v.getRounds().size();
  if (v.hasOccupancy()) {
    auto o = v.getOccupancy();
    Json window = {{"start_after_order_us", o.getWindowStartAfterOrderUs()},
                   {"end_after_order_us", o.getWindowEndAfterOrderUs()}};
    PutTime(window, "start_at", At(sent, o.getWindowStartAfterOrderUs()));
    PutTime(window, "end_at", At(sent, o.getWindowEndAfterOrderUs()));
    times["occupancy_window"] = std::move(window);
  } else {
    times["occupancy_window"] = nullptr;
  }
  PutTime(times, "verdict_issued_at", v.getIssuedAtUnixUs());
  times["verdict_entry"] = verdict_entry.sequence;
  PutTime(times, "verdict_recorded_at", verdict_entry.recorded_at_unix_us);
  return times;
}

Json ProfileJson(proto::ParameterProfile::Reader p) {
  return {{"name", Text(p.getName())},
          {"calibrated", p.getCalibrated()},
          {"adversary_class", Text(p.getAdversaryClass())},
          {"t_min_ps", p.getTMinPs()},
          {"safety_factor", FloatText(p.getSafetyFactor())},
          {"confidence", FloatText(p.getConfidence())},
          {"honest_round_p999_us", p.getHonestRoundP999Us()},
          {"authority_key_id", Hex(p.getAuthorityKeyId())}};
}

// The inventory digest the order's delegation names (hex), or null.
StatusOr<Json> InventoryDigest(proto::WipeOrder::Reader order) {
  WP_ASSIGN_OR_RETURN(proto::SignedEnvelope envelope, proto::DecodeEnvelope(order.getDelegation()));
  WP_ASSIGN_OR_RETURN(auto delegation, proto::ParseMessage<proto::Delegation>(proto::AsView(envelope.payload)));
  const auto digest = delegation.root().getInventoryDigest();
  if (digest.size() != proto::kDigestBytes) return Json(nullptr);
  return Json(Hex(digest));
}

}  // namespace

std::string FailureReasonName(uint16_t reason) {
  auto enumerants = capnp::Schema::from<proto::FailureReason>().getEnumerants();
  if (reason < enumerants.size()) return enumerants[reason].getProto().getName().cStr();
  return "reason(" + std::to_string(reason) + ")";
}

StatusOr<Json> CertificateSessionJson(const std::vector<const VerifiedEntry*>& records) {
  if (records.empty() || records[0]->kind != LedgerRecordKind::ORDER) {
    return InvalidArgumentError("certificate: a session's records begin with its order");
  }
  std::vector<const VerifiedEntry*> verdicts;
  for (const VerifiedEntry* r : records) {
    if (r->kind == LedgerRecordKind::VERDICT) verdicts.push_back(r);
  }
  const std::string session = Hex(proto::AsView(records[0]->session_id));
  if (verdicts.empty()) {
    return FailedPreconditionError("session " + session +
                                   " has no verdict: it states nothing to certify (count it as a failed wipe)");
  }
  WP_ASSIGN_OR_RETURN(auto order_message, Payload<proto::WipeOrder>(records[0]->record));
  WP_ASSIGN_OR_RETURN(auto verdict_message, Payload<proto::Verdict>(verdicts.back()->record));
  const proto::WipeOrder::Reader order = order_message.root();
  const proto::Verdict::Reader v = verdict_message.root();

  Json devices = Json::array();
  for (auto d : v.getDevices()) {
    devices.push_back({{"selector", Text(d.getSelector())},
                       {"planned_bytes", d.getPlannedBytes()},
                       {"capacity_bytes", d.getCapacityBytes()},
                       {"allowed_reserve_bytes", d.getAllowedReserveBytes()},
                       {"bytes_held", d.getBytesHeld()},
                       {"chunks_checked", d.getChunksChecked()},
                       {"filled_after_us", d.getFilledAfterUs()}});
  }
  const uint16_t reason = static_cast<uint16_t>(v.getFailure().getReason());
  Json outcome = {{"pass", v.getPass()},
                  {"failure_reason", FailureReasonName(reason)},
                  {"failure_text", Text(v.getFailure().getText())},
                  {"superseded_pass", verdicts.size() > 1}};
  WP_ASSIGN_OR_RETURN(Json further, FurtherFields(verdict_message));
  Json statements = {{"bound",
                      {{"stated", v.getBoundStated()},
                       {"statement", Text(v.getStatement())},
                       {"confidence", FloatText(v.getConfidence())},
                       {"total_unwiped_bound_bytes", v.getTotalUnwipedBoundBytes()},
                       {"deadline_rule_satisfied", v.getDeadlineRuleSatisfied()}}},
                     {"occupancy", v.hasOccupancy() ? OccupancyJson(v.getOccupancy()) : Json(nullptr)},
                     {"further", std::move(further)}};
  Json assumptions = Json::array();
  for (auto a : v.getAssumptions()) {
    assumptions.push_back({{"name", Text(a.getName())}, {"held", a.getHeld()}, {"detail", Text(a.getDetail())}});
  }
  WP_ASSIGN_OR_RETURN(Json inventory, InventoryDigest(order));
  Json out;
  out["session_id"] = session;
  out["node"] = Text(order.getNodeName());
  out["node_key_id"] = Hex(order.getNodeKeyId());
  out["devices"] = std::move(devices);
  out["times"] = TimesJson(order, v, *verdicts.back());
  out["outcome"] = std::move(outcome);
  out["statements"] = std::move(statements);
  out["profile"] = ProfileJson(v.getProfile());
  out["assumptions"] = std::move(assumptions);
  out["declarations"] = {{"inventory_digest", std::move(inventory)},
                         {"host_memory_in_plan", order.getHostMemoryInPlan()},
                         {"wave", Text(order.getWaveName())},
                         {"wave_complete", order.getWaveComplete()}};
  return out;
}

StatusOr<Json> CertificateWaveJson(const VerifiedEntry& entry) {
  if (entry.kind != LedgerRecordKind::WAVE_VERDICT) {
    return InvalidArgumentError("certificate: ledger entry " + std::to_string(entry.sequence) + " is no wave verdict");
  }
  WP_ASSIGN_OR_RETURN(auto message, Payload<proto::WaveVerdict>(entry.record));
  const proto::WaveVerdict::Reader w = message.root();
  Json members = Json::array();
  const auto ids = w.getSessionIds();
  const auto nodes = w.getNodeNames();
  const auto digests = w.getVerdictDigests();
  for (unsigned i = 0; i < ids.size() && i < nodes.size() && i < digests.size(); ++i) {
    members.push_back({{"session_id", Hex(ids[i])}, {"node", Text(nodes[i])}, {"verdict_digest", Hex(digests[i])}});
  }
  Json sent = Json::array();
  for (uint64_t us : w.getOrderSentAfterWaveUs()) sent.push_back(us);
  Json out;
  out["name"] = Text(w.getWaveName());
  out["entry"] = entry.sequence;
  PutTime(out, "recorded_at", entry.recorded_at_unix_us);
  PutTime(out, "issued_at", w.getIssuedAtUnixUs());
  out["pass"] = w.getPass();
  out["complete"] = w.getComplete();
  out["bound_stated"] = w.getBoundStated();
  out["unwiped_bound_bytes"] = w.getUnwipedBoundBytes();
  out["confidence"] = FloatText(w.getConfidence());
  out["statement"] = Text(w.getStatement());
  out["members"] = std::move(members);
  out["order_sent_after_wave_us"] = std::move(sent);
  return out;
}

}  // namespace wipeproof
