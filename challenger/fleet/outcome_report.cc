#include "challenger/fleet/outcome_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "challenger/ledger/ledger_sessions.h"
#include "challenger/parameters/deadline_rule.h"
#include "common/hex.h"
#include "common/numbers.h"
#include "common/terminal_text.h"
#include "kernels/label_spec.h"
#include "proto/codec.h"

namespace wipeproof {

namespace {


std::string Seconds(uint64_t us) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3f s", static_cast<double>(us) / 1e6);
  return buf;
}

// `part` as a percentage of `whole` with one decimal, e.g. "57.8%"; "-" when whole is 0.
std::string Percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "-";
  return FormatFixed(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1) + "%";
}

// The session's times on the challenger's clock (outcome_report.h "times").
nlohmann::ordered_json SessionTimes(const SessionOutcome& outcome, int64_t order_issued_us, int64_t verdict_signed_us) {
  using json = nlohmann::ordered_json;
  const int64_t order_sent_us = outcome.order_sent_unix_us;
  int64_t fill_reported_us = 0, last_round_us = 0;
  if (order_sent_us != 0 && outcome.report.has_value()) {
    fill_reported_us = order_sent_us + static_cast<int64_t>(outcome.fill_us);
  }
  if (order_sent_us != 0) {
    for (const RoundRecord& r : outcome.rounds) {
      last_round_us =
          std::max(last_round_us, order_sent_us + static_cast<int64_t>(r.sent_after_order_us + r.elapsed_us));
    }
  }
  json times;
  auto add = [&times](const std::string& name, int64_t unix_us) {
    times[name] = RfcTimeOrNull(unix_us);
    times[name + "_unix_us"] = UnixMicrosOrNull(unix_us);
  };
  add("order_issued", order_issued_us);
  add("order_sent", order_sent_us);
  add("fill_reported", fill_reported_us);
  add("last_round", last_round_us);
  add("verdict_signed", verdict_signed_us);
  return times;
}

}  // namespace

bool IsBusyRefusal(const SessionOutcome& outcome) {
  return !outcome.pass && outcome.failure.reason == proto::FailureReason::NODE_BUSY;
}

const char* OutcomeName(const SessionOutcome& outcome) {
  if (outcome.pass) return "pass";
  return IsBusyRefusal(outcome) ? "busy" : "fail";
}

nlohmann::ordered_json OutcomeJson(const SessionOutcome& outcome, const std::string& ledger_path) {
  using json = nlohmann::ordered_json;
  auto parsed = proto::ParseMessage<proto::Verdict>(proto::AsView(outcome.verdict.payload));
  auto order = proto::ParseMessage<proto::WipeOrder>(proto::AsView(outcome.order.payload));
  const std::string wave = order.ok() ? order->root().getWaveName().cStr() : "";
  json j;
  j["session_id"] = HexEncode(outcome.session_id.data(), outcome.session_id.size());
  j["node"] = outcome.node_name;
  j["wave"] = wave.empty() ? json() : json(wave);
  j["pass"] = outcome.pass;
  j["outcome"] = OutcomeName(outcome);
  j["times"] = SessionTimes(outcome, order.ok() ? order->root().getIssuedAtUnixUs() : 0,
                            parsed.ok() ? parsed->root().getIssuedAtUnixUs() : 0);
  if (parsed.ok()) j["statement"] = parsed->root().getStatement().cStr();
  if (parsed.ok() && parsed->root().hasOccupancy()) {
    auto o = parsed->root().getOccupancy();
    j["occupancy"] = {{"stated", o.getStated()},
                      {"statement", o.getStatement().cStr()},
                      {"window_us", o.getWindowEndAfterOrderUs() - o.getWindowStartAfterOrderUs()},
                      {"rounds", o.getRounds()},
                      {"detection", o.getDetection()},
                      {"short_us", o.getShortUs()},
                      {"unprotected_us", o.getUnprotectedUs()}};
  }
  if (parsed.ok() && parsed->root().hasCompute()) {
    auto c = parsed->root().getCompute();
    j["compute"] = {{"stated", c.getStated()},
                    {"statement", c.getStatement().cStr()},
                    {"work_compressions", c.getWorkCompressions()},
                    {"rate_compressions_per_s", c.getRateCompressionsPerS()},
                    {"interval_us", c.getIntervalUs()},
                    {"min_compute_us", c.getMinComputeUs()}};
  }
  json failure = {{"reason", FailureReasonName(outcome.failure.reason)}, {"text", outcome.failure.text}};
  if (!outcome.failure.device.empty()) failure["device"] = outcome.failure.device;
  if (outcome.failure.has_round) failure["round"] = outcome.failure.round;
  if (outcome.failure.has_label) failure["label_index"] = outcome.failure.label_index;
  if (!outcome.failure.expected.empty()) failure["expected"] = HexEncode(outcome.failure.expected);
  if (!outcome.failure.received.empty()) failure["received"] = HexEncode(outcome.failure.received);
  j["failure"] = failure;
  if (!parsed.ok()) {
    j["verdict_error"] = parsed.status().ToString();
  } else {
    proto::Verdict::Reader v = parsed->root();
    j["bound_stated"] = v.getBoundStated();
    j["deadline_rule_satisfied"] = v.getDeadlineRuleSatisfied();
    j["confidence"] = v.getConfidence();
    // null without a stated bound: a 0 would read as "nothing unwiped" (as ledger show --json says).
    j["total_unwiped_bound_bytes"] = v.getBoundStated() ? json(v.getTotalUnwipedBoundBytes()) : json(nullptr);
    j["fill_us"] = v.getFillMicros();
    j["fill_deadline_us"] = v.getFillDeadlineUs();
    j["round_deadline_us"] = v.getRoundDeadlineUs();
    j["prepare_us"] = outcome.prepare_us;
    json rounds = json::array();
    for (auto r : v.getRounds()) {
      rounds.push_back({{"round", r.getRoundIndex()},
                        {"elapsed_us", r.getElapsedUs()},
                        {"labels_checked", r.getLabelsChecked()},
                        {"deadline_met", r.getDeadlineMet()},
                        {"all_correct", r.getAllCorrect()}});
    }
    j["rounds"] = rounds;
    json devices = json::array();
    for (auto d : v.getDevices()) {
      devices.push_back({{"selector", d.getSelector().cStr()},
                         {"planned_bytes", d.getPlannedBytes()},
                         {"bytes_held", d.getBytesHeld()},
                         {"capacity_bytes", d.getCapacityBytes()},
                         {"allowed_reserve_bytes", d.getAllowedReserveBytes()},
                         {"chunks_checked", d.getChunksChecked()},
                         {"diagnostic_confidence", d.getConfidence()},
                         {"diagnostic_unwiped_bound_bytes", d.getUnwipedBoundBytes()}});
    }
    j["devices"] = devices;
    auto p = v.getProfile();
    j["profile"] = {{"name", p.getName().cStr()},
                    {"calibrated", p.getCalibrated()},
                    {"adversary_class", p.getAdversaryClass().cStr()},
                    {"t_min_ps", p.getTMinPs()},
                    {"safety_factor", p.getSafetyFactor()},
                    {"confidence", p.getConfidence()},
                    {"honest_round_p999_us", p.getHonestRoundP999Us()},
                    {"recompute_floor_us", p.getRecomputeFloorUs()},
                    {"authority_key_id", Hex(p.getAuthorityKeyId())},
                    {"document_digest", Hex(p.getDocumentDigest())}};
    json assumptions = json::array();
    for (auto a : v.getAssumptions()) {
      assumptions.push_back({{"name", a.getName().cStr()}, {"held", a.getHeld()}, {"detail", a.getDetail().cStr()}});
    }
    j["assumptions"] = assumptions;
    j["order_digest"] = Hex(v.getOrderDigest());
    j["report_digest"] = Hex(v.getReportDigest());
  }
  const proto::Digest vd = proto::Blake2b256(proto::AsView(outcome.verdict.payload));
  j["verdict_digest"] = HexEncode(vd.data(), vd.size());
  j["transcript_verified"] = outcome.pass;
  j["superseded_verdict"] = outcome.superseded_verdict.has_value();
  json ledger = {{"path", ledger_path}};
  ledger["verdict_sequence"] = outcome.verdict_sequence ? json(*outcome.verdict_sequence) : json(nullptr);
  ledger["error"] = outcome.ledger.ok() ? json(nullptr) : json(outcome.ledger.ToString());
  j["ledger"] = ledger;
  return j;
}

std::string OutcomeSummary(const SessionOutcome& outcome, const std::string& ledger_path) {
  std::ostringstream s;
  s << "node " << TerminalSafe(outcome.node_name) << "  session "
    << HexEncode(outcome.session_id.data(), outcome.session_id.size()) << "  "
    << (outcome.pass             ? "PASS"
        : IsBusyRefusal(outcome) ? "BUSY"
                                 : "FAIL")
    << "\n";
  if (IsBusyRefusal(outcome)) {
    s << "busy: node " << TerminalSafe(outcome.node_name)
      << " refused the order, saying it runs another session; this challenger has none there, so nothing was "
         "wiped: counted as a failed wipe (its verdict records the refusal)\n";
  }
  auto parsed = proto::ParseMessage<proto::Verdict>(proto::AsView(outcome.verdict.payload));
  if (!parsed.ok()) {
    s << "verdict unreadable: " << parsed.status().ToString() << "\n";
    return s.str();
  }
  proto::Verdict::Reader v = parsed->root();
  auto p = v.getProfile();
  if (outcome.failure.failed()) s << "failure: " << TerminalSafe(outcome.failure.Describe()) << "\n";
  s << "profile " << TerminalSafe(p.getName().cStr()) << (p.getCalibrated() ? " (calibrated)" : " (uncalibrated)")
    << ", class " << TerminalSafe(p.getAdversaryClass().cStr()) << ", round deadline " << v.getRoundDeadlineUs()
    << " us, "
    << (p.getAuthorityKeyId().size() > 0 ? "signed by authority key " + Hex(p.getAuthorityKeyId())
                                         : std::string("not signed by the authority"))
    << "\n";
  // Why, in the challenger's own words (a file's signature, a class): not in the signed statement,
  // which says only what the order shows.
  if (!outcome.summary.endorsement_problem.empty()) {
    s << "profile not the authority's: " << TerminalSafe(outcome.summary.endorsement_problem) << "\n";
  }
  s << "deadline rule " << (v.getDeadlineRuleSatisfied() ? "met" : "not met") << ": "
    << outcome.summary.rule.explanation << "\n";
  bool fill_reported = false;  // a fill report states what each device holds
  for (auto d : v.getDevices()) fill_reported = fill_reported || d.getBytesHeld() > 0;
  if (fill_reported) {
    s << "fill: " << Seconds(v.getFillMicros()) << " (deadline " << Seconds(v.getFillDeadlineUs()) << ")";
  } else {
    s << "fill: none reported (deadline " << Seconds(v.getFillDeadlineUs()) << ")";
  }
  s << "; challenges and expected labels prepared in " << Seconds(outcome.prepare_us) << " before the order";
  s << "\n";
  std::vector<uint64_t> times;
  for (auto r : v.getRounds()) times.push_back(r.getElapsedUs());
  s << "rounds: " << times.size() << " run";
  if (!times.empty()) {
    std::vector<uint64_t> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    s << ", slowest " << sorted.back() << " us, median " << sorted[sorted.size() / 2] << " us";
  }
  s << " (deadline " << v.getRoundDeadlineUs() << " us)";
  const size_t on_channel = static_cast<size_t>(
      std::count_if(outcome.rounds.begin(), outcome.rounds.end(), [](const RoundRecord& r) { return r.on_channel; }));
  if (!outcome.rounds.empty()) {
    s << "; " << on_channel << " on the round channel, " << outcome.rounds.size() - on_channel << " over RPC";
  }
  s << "\n";
  for (auto d : v.getDevices()) {
    s << "device " << TerminalSafe(d.getSelector().cStr()) << ": " << d.getBytesHeld() << " bytes held of "
      << d.getPlannedBytes() << " planned (" << FormatBytesHuman(d.getBytesHeld()) << ", "
      << Percent(d.getBytesHeld(), d.getPlannedBytes()) << " of planned; capacity " << d.getCapacityBytes() << " = "
      << FormatBytesHuman(d.getCapacityBytes()) << ", allowed reserve " << d.getAllowedReserveBytes() << "), "
      << d.getChunksChecked() << " chunks checked";
    if (v.getBoundStated()) {
      s << ", diagnostic only (assumes no label left the device): at most " << d.getUnwipedBoundBytes()
        << " bytes not wiped (" << FormatBytesHuman(d.getUnwipedBoundBytes()) << ", "
        << Percent(d.getUnwipedBoundBytes(), d.getCapacityBytes()) << " of capacity)";
    }
    s << "\n";
  }
  s << "statement: " << TerminalSafe(v.getStatement().cStr()) << "\n";
  if (v.hasOccupancy()) s << "occupancy: " << TerminalSafe(v.getOccupancy().getStatement().cStr()) << "\n";
  if (v.hasCompute()) s << "compute: " << TerminalSafe(v.getCompute().getStatement().cStr()) << "\n";
  s << "assumptions:\n";
  for (auto a : v.getAssumptions()) {
    s << "  " << (a.getHeld() ? "held      " : "NOT HELD  ") << TerminalSafe(a.getName().cStr()) << ": "
      << TerminalSafe(a.getDetail().cStr()) << "\n";
  }
  if (outcome.superseded_verdict) s << "note: a first (pass) verdict was superseded after the transcript check\n";
  s << "ledger: " << ledger_path;
  if (outcome.verdict_sequence) s << ", verdict entry #" << *outcome.verdict_sequence;
  if (!outcome.ledger.ok()) s << "; NOT ALL RECORDED: " << TerminalSafe(outcome.ledger.ToString());
  s << "\n";
  return s.str();
}

}  // namespace wipeproof
