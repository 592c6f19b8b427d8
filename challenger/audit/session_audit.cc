#include "challenger/audit/session_audit.h"

#include <capnp/schema.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "challenger/audit/verdict_recheck.h"
#include "challenger/session/assumptions.h"
#include "challenger/session/occupancy_bound.h"
#include "challenger/ledger/ledger_records.h"
#include "common/hex.h"
#include "kernels/chunk_verifier.h"
#include "proto/codec.h"
#include "proto/delegation.h"
#include "proto/label_wire.h"
#include "proto/session_rules.h"
#include "proto/signing.h"
#include "proto/transcript.h"

namespace wipeproof {
namespace {

using proto::ByteView;
using proto::FailureReason;
using proto::LedgerRecordKind;


template <size_t N>
bool Same(ByteView data, const std::array<uint8_t, N>& want) {
  return data.size() == N && std::memcmp(data.begin(), want.data(), N) == 0;
}
bool Same(ByteView a, ByteView b) { return a.size() == b.size() && std::memcmp(a.begin(), b.begin(), a.size()) == 0; }

std::string ReasonName(FailureReason reason) {
  auto enumerants = capnp::Schema::from<FailureReason>().getEnumerants();
  const auto index = static_cast<uint16_t>(reason);
  if (index < enumerants.size()) return enumerants[index].getProto().getName().cStr();
  return "reason(" + std::to_string(index) + ")";
}

// A record of an envelope kind: verified under its signer's key, then parsed.
template <typename T>
struct Signed {
  const VerifiedEntry* entry;
  proto::SignedEnvelope envelope;
  proto::Parsed<T> message;
  proto::Digest payload_digest;
};

// One logged round, recomputed.
struct Round {
  const VerifiedEntry* entry = nullptr;  // the RoundLog record holding it
  proto::RoundTiming::Reader timing;
  proto::ChallengeRound::Reader round;
  bool has_answer = false;
  proto::RoundAnswer::Reader answer;
  std::vector<proto::ChallengedLabel> labels;         // answer order
  bool answer_usable = false;                         // session, round index and size as the round asks
  bool all_correct = false;                           // usable and every label equals the recomputed one
  bool in_time = false;                               // elapsedUs <= roundDeadlineUs
  bool proof = false;                                 // a proof round (proto::IsProofRound), decided once
  // The first label that differs (when usable and not all correct).
  size_t wrong_at = 0;
  std::vector<uint8_t> expected;  // every label, recomputed, answer order (32 bytes each)
};

class Auditor {
 public:
  Auditor(const std::vector<const VerifiedEntry*>& entries, const AuditKeys& keys, const SessionAuditOptions& options,
          SessionAudit* out)
      : entries_(entries), keys_(keys), options_(options), out_(out) {}

  Status Run() {
    WP_RETURN_IF_ERROR(SortRecords());
    WP_RETURN_IF_ERROR(CheckOrder());
    WP_RETURN_IF_ERROR(CheckReport());
    CheckNotices();
    WP_RETURN_IF_ERROR(OpenVerdicts());
    WP_RETURN_IF_ERROR(CheckRounds());
    if (verdict_entries_.empty()) {
      out_->outcome = "no verdict";
      return Status::Ok();
    }
    WP_RETURN_IF_ERROR(CheckVerdicts());
    WP_RETURN_IF_ERROR(final_verdict().getPass() ? CheckPass() : ConfirmFailure());
    WP_RETURN_IF_ERROR(CheckRoundSendTimes());
    WP_RETURN_IF_ERROR(CheckBound());
    out_->first_verdict_pass = verdicts_.front().message.root().getPass();
    for (auto a : final_verdict().getAssumptions()) {
      if (a.getName() == kWaveComplete) out_->claims_wave_complete = a.getHeld();
    }
    if (declared_.has_value()) out_->declared_wave_members = declared_->wave.members;
    return CheckReceipt();
  }

 private:
  std::string At(const VerifiedEntry* entry, const std::string& what) const {
    return what + " (ledger entry " + std::to_string(entry->sequence) + ")";
  }
  Status Wrong(const VerifiedEntry* entry, const std::string& what, const std::string& detail) const {
    return DataLossError(At(entry, what) + ": " + detail);
  }

  template <typename T>
  StatusOr<Signed<T>> Open(const VerifiedEntry* entry, const proto::PublicKey& key, const std::string& what,
                           const std::string& key_name) const {
    auto envelope = proto::DecodeEnvelope(proto::AsView(entry->record));
    if (!envelope.ok()) return Wrong(entry, what, envelope.status().message());
    auto parsed = proto::VerifyAndParse<T>(*envelope, key);
    if (!parsed.ok()) {
      return Wrong(entry, what,
                   "does not verify under the " + key_name + " " + proto::KeyIdHex(proto::KeyIdOf(key)) + ": " +
                       parsed.status().message());
    }
    const proto::Digest digest = proto::Blake2b256(proto::AsView(envelope->payload));
    return Signed<T>{entry, std::move(envelope).value(), std::move(parsed).value(), digest};
  }

  proto::Verdict::Reader final_verdict() const { return verdicts_.back().message.root(); }
  const std::string& node_name() const { return out_->node_name; }

  Status SortRecords() {
    for (const VerifiedEntry* entry : entries_) {
      auto once = [&](const VerifiedEntry** slot, const char* what) -> Status {
        if (*slot != nullptr) {
          return Wrong(entry, what,
                       "a second " + std::string(what) + " of the session (the first is ledger entry " +
                           std::to_string((*slot)->sequence) + ")");
        }
        *slot = entry;
        return Status::Ok();
      };
      switch (entry->kind) {
        case LedgerRecordKind::ORDER:
          WP_RETURN_IF_ERROR(once(&order_entry_, "order"));
          break;
        case LedgerRecordKind::FILL_REPORT:
          WP_RETURN_IF_ERROR(once(&report_entry_, "fill report"));
          break;
        case LedgerRecordKind::ROUND_LOG:
          round_log_entries_.push_back(entry);
          break;
        case LedgerRecordKind::DEVICE_FILL_NOTICE:
          notice_entries_.push_back(entry);
          break;
        case LedgerRecordKind::VERDICT:
          verdict_entries_.push_back(entry);
          break;
        case LedgerRecordKind::TRANSCRIPT:
          WP_RETURN_IF_ERROR(once(&transcript_entry_, "transcript"));
          break;
        case LedgerRecordKind::RECEIPT:
          WP_RETURN_IF_ERROR(once(&receipt_entry_, "receipt"));
          break;
        default:
          // Fail closed: a record nobody checks could carry a statement nobody verified.
          return FailedPreconditionError(At(entry, LedgerRecordKindName(entry->kind) + " record") +
                                         ": this auditor does not check records of this kind");
      }
    }
    if (order_entry_ == nullptr) return DataLossError("the session has no order in the ledger");
    if (entries_.front() != order_entry_) {
      return Wrong(
          entries_.front(), "records",
          "the order (ledger entry " + std::to_string(order_entry_->sequence) + ") is not the session's first record");
    }
    if (verdict_entries_.size() > 2) {
      return Wrong(verdict_entries_[2], "verdict",
                   "a third verdict; a session has one, or a pass and the failure "
                   "that superseded it");
    }
    if (!verdict_entries_.empty() && receipt_entry_ == nullptr) {
      return Wrong(verdict_entries_.back(), "records", "the session's verdict has no receipt");
    }
    if (receipt_entry_ != nullptr && entries_.back() != receipt_entry_) {
      return Wrong(entries_.back(), "records", "a record after the session's receipt");
    }
    if (receipt_entry_ != nullptr && verdict_entries_.empty()) {
      return Wrong(receipt_entry_, "receipt", "the session has a receipt but no verdict");
    }
    return Status::Ok();
  }

  Status CheckOrder() {
    WP_ASSIGN_OR_RETURN(auto order, Open<proto::WipeOrder>(order_entry_, keys_.challenger, "order", "challenger key"));
    order_.emplace(std::move(order));
    proto::WipeOrder::Reader o = order_->message.root();
    // The challenger signed it; the authority vouches for it only through the delegation it carries,
    // checked as the agent checks it, at the order's own issue time (proto/delegation.h). The class,
    // t_min and safety the bound is recomputed under are thus the authority's signed word.
    auto delegated = proto::CheckOrderDelegation(o, keys_.authority, keys_.challenger, o.getIssuedAtUnixUs(), 0);
    if (!delegated.ok()) return Wrong(order_entry_, "order", "does not stand under the authority's delegation: " +
                                                               delegated.status().message());
    out_->node_name = o.getNodeName().cStr();
    WP_RETURN_IF_ERROR(CheckDeclarations(o, delegated->root()));
    const proto::KeyId challenger_id = proto::KeyIdOf(keys_.challenger);
    if (!Same(o.getChallengerKeyId(), challenger_id)) {
      return Wrong(order_entry_, "order",
                   "names challenger key " + Hex(o.getChallengerKeyId()) + ", not the pinned challenger key " +
                       proto::KeyIdHex(challenger_id));
    }
    if (declared_.has_value()) {
      node_key_ = declared_->public_key;  // the authority's word; CheckDeclarations matched its id
      return Status::Ok();
    }
    const NodeKey* match = nullptr;
    for (const NodeKey& node : keys_.nodes) {
      if (!Same(o.getNodeKeyId(), proto::KeyIdOf(node.public_key))) continue;
      if (node.name != node_name()) {
        return Wrong(order_entry_, "order",
                     "is for node " + node_name() + " with key id " + Hex(o.getNodeKeyId()) +
                         ", which the export lists for node " + node.name);
      }
      match = &node;
    }
    if (match == nullptr) {
      return Wrong(order_entry_, "order",
                   "names node " + node_name() + " with key id " + Hex(o.getNodeKeyId()) +
                       ", and the export lists no key with that id (export with --inventory)");
    }
    node_key_ = match->public_key;
    return Status::Ok();
  }

  // When the order's delegation names an inventory: the export carries it, it reads, lists the
  // order's node, and the order restates its declarations (CheckOrderDeclarations); declared_ then
  // holds them, for the node key and the verdict's recheck.
  Status CheckDeclarations(proto::WipeOrder::Reader o, proto::Delegation::Reader delegation) {
    const std::optional<proto::Digest> named = proto::NamedInventory(delegation);
    if (!named) return Status::Ok();
    const std::string which = "inventory " + Hex(proto::AsView(*named));
    auto it = keys_.inventories.find(*named);
    if (it == keys_.inventories.end()) {
      return Wrong(order_entry_, "order",
                   "stands under a delegation that names " + which +
                       ", which the export does not carry (the challenger records it in its ledger when it starts)");
    }
    if (!it->second.ok()) return Wrong(order_entry_, "order", "names " + which + ": " + it->second.status().message());
    auto node = it->second->nodes.find(node_name());
    if (node == it->second->nodes.end()) {
      return Wrong(order_entry_, "order", "is for node " + node_name() + ", which the signed " + which + " does not list");
    }
    Status restated = CheckOrderDeclarations(o, node->second);
    if (!restated.ok()) return Wrong(order_entry_, "order", restated.message() + " (" + which + ")");
    declared_ = node->second;
    return Status::Ok();
  }

  // The fill report, verified and checked against the order. A report that fails is a fact of the
  // session, not yet an audit failure: it fails the audit of a pass (CheckPass) and confirms a
  // failure that names it (ConfirmFailure). report_ holds it only when it verified and matched.
  Status CheckReport() {
    if (report_entry_ == nullptr) return Status::Ok();
    auto report = Open<proto::FillReport>(report_entry_, node_key_, "fill report", "node key of " + node_name());
    auto envelope = proto::DecodeEnvelope(proto::AsView(report_entry_->record));
    if (envelope.ok()) report_payload_digest_ = proto::Blake2b256(proto::AsView(envelope->payload));
    if (!report.ok()) {
      report_problem_ = report.status().message();
      return Status::Ok();
    }
    Status fits =
        proto::CheckReportFitsOrder(order_->message.root(), order_->payload_digest, report->message.root());
    if (!fits.ok()) {
      report_problem_ = At(report_entry_, "fill report") + ": " + fits.message();
      return Status::Ok();
    }
    report_.emplace(std::move(report).value());
    return Status::Ok();
  }

  // The node-signed fill notices (one per device at most), verified and checked against the order
  // like the report: a notice that fails is a fact that fails the audit of a pass. notices_[d] holds
  // device d's notice when it verified and matched.
  void CheckNotices() {
    proto::WipeOrder::Reader o = order_->message.root();
    notices_.resize(o.getDevices().size());
    for (const VerifiedEntry* entry : notice_entries_) {
      auto notice = Open<proto::DeviceFillNotice>(entry, node_key_, "fill notice", "node key of " + node_name());
      auto problem = [&](const std::string& detail) {
        if (notice_problem_.empty()) notice_problem_ = At(entry, "fill notice") + ": " + detail;
      };
      if (!notice.ok()) {
        if (notice_problem_.empty()) notice_problem_ = notice.status().message();
        continue;
      }
      proto::DeviceFillNotice::Reader n = notice->message.root();
      const unsigned d = n.getDeviceIndex();
      Status fits = proto::CheckNoticeFitsOrder(o, order_->payload_digest, n);
      if (!fits.ok()) {
        problem(fits.message());
      } else if (notices_[d].has_value()) {
        problem("a second notice for device " + std::string(o.getDevices()[d].getSelector().cStr()));
      } else {
        notices_[d].emplace(std::move(notice).value());
      }
    }
  }

  Status CheckRounds() {
    proto::WipeOrder::Reader o = order_->message.root();
    for (const VerifiedEntry* entry : round_log_entries_) {
      auto log = proto::ParseMessage<proto::RoundLog>(proto::AsView(entry->record));
      if (!log.ok()) return Wrong(entry, "round log", log.status().message());
      proto::RoundLog::Reader l = log->root();
      if (l.getFirstRound() != rounds_.size()) {
        return Wrong(entry, "round log",
                     "starts at round " + std::to_string(l.getFirstRound()) + ", but " +
                         std::to_string(rounds_.size()) + " rounds were logged before it");
      }
      if (l.getRounds().size() != l.getExchanges().size()) {
        return Wrong(entry, "round log",
                     std::to_string(l.getRounds().size()) + " timing rows but " +
                         std::to_string(l.getExchanges().size()) + " exchanges");
      }
      // Each list read once: every get of a list counts its whole size against the reader's
      // traversal limit, so a read per row would grow with the square of the rounds.
      const auto timings = l.getRounds();
      const auto exchanges = l.getExchanges();
      for (unsigned i = 0; i < timings.size(); ++i) {
        Round round;
        round.entry = entry;
        round.timing = timings[i];
        const auto exchange = exchanges[i];
        round.round = exchange.getRound();
        round.has_answer = exchange.hasAnswer();
        if (round.has_answer) round.answer = exchange.getAnswer();
        WP_RETURN_IF_ERROR(CheckRoundShape(static_cast<uint32_t>(rounds_.size()), &round));
        // Once per round: every read of the order's device list counts against its traversal limit.
        round.proof = proto::IsProofRound(order_->message.root(), round.round);
        rounds_.push_back(std::move(round));
      }
      logs_.push_back(std::move(log).value());
    }
    out_->rounds = static_cast<uint32_t>(rounds_.size());
    WP_RETURN_IF_ERROR(RecomputeAnsweredLabels());
    const uint64_t deadline = o.getRoundDeadlineUs();
    for (size_t r = 0; r < rounds_.size(); ++r) {
      Round& round = rounds_[r];
      round.in_time = round.timing.getElapsedUs() <= deadline;
      const std::string what = "round " + std::to_string(r);
      if (round.timing.getDeadlineMet() != round.in_time) {
        return Wrong(round.entry, what,
                     "elapsedUs " + std::to_string(round.timing.getElapsedUs()) + " against the round deadline " +
                         std::to_string(deadline) + " us, but its timing row says deadlineMet=" +
                         (round.timing.getDeadlineMet() ? "true" : "false"));
      }
      if (round.timing.getAllCorrect() != round.all_correct) {
        return Wrong(
            round.entry, what,
            std::string("its timing row says allCorrect=") + (round.timing.getAllCorrect() ? "true" : "false") +
                " but the logged answer recomputed from the seed says " + (round.all_correct ? "true" : "false") +
                (round.answer_usable && !round.all_correct ? ": " + WrongLabelText(round) : ""));
      }
      const uint64_t checked = round.all_correct ? round.labels.size() : 0;
      if (round.timing.getLabelsChecked() != checked) {
        return Wrong(round.entry, what,
                     "its timing row says " + std::to_string(round.timing.getLabelsChecked()) +
                         " labels checked, the log holds " + std::to_string(checked) + " correct ones");
      }
    }
    return Status::Ok();
  }

  // The round's place, devices and indices, and whether its answer fits it.
  Status CheckRoundShape(uint32_t r, Round* round) {
    const std::string what = "round " + std::to_string(r);
    if (round->timing.getRoundIndex() != r || round->round.getRoundIndex() != r) {
      return Wrong(round->entry, what,
                   "is logged as round " + std::to_string(round->round.getRoundIndex()) + " with timing row " +
                       std::to_string(round->timing.getRoundIndex()));
    }
    if (!Same(round->round.getSessionId(), proto::AsView(order_entry_->session_id))) {
      return Wrong(round->entry, what, "names session " + Hex(round->round.getSessionId()));
    }
    Status fits = proto::CheckRoundFitsOrder(order_->message.root(), round->round, &round->labels);
    if (!fits.ok()) return Wrong(round->entry, what, fits.message());
    round->answer_usable = round->has_answer && proto::CheckAnswerFitsRound(round->round, round->answer).ok();
    return Status::Ok();
  }

  // Every label of every usable answer, recomputed from the order's seed, device by device.
  Status RecomputeAnsweredLabels() {
    proto::WipeOrder::Reader o = order_->message.root();
    std::vector<std::vector<uint64_t>> indices(o.getDevices().size());
    for (const Round& round : rounds_) {
      if (!round.answer_usable) continue;
      for (const auto& [d, g] : round.labels) indices[d].push_back(g);
    }
    std::vector<std::vector<uint8_t>> expected(indices.size());
    for (size_t d = 0; d < indices.size(); ++d) {
      if (indices[d].empty()) continue;
      expected[d].resize(indices[d].size() * proto::kLabelBytes);
      Status recomputed = RecomputeLabels(proto::DeviceRegion(o, o.getDevices()[static_cast<unsigned>(d)]),
                                          indices[d].data(), indices[d].size(), expected[d].data(), options_.threads);
      if (!recomputed.ok()) return recomputed.WithContext("recomputing device " + std::to_string(d) + "'s labels");
    }
    std::vector<size_t> next(indices.size(), 0);
    for (Round& round : rounds_) {
      if (!round.answer_usable) continue;
      round.expected.resize(round.labels.size() * proto::kLabelBytes);
      round.all_correct = true;
      const uint8_t* answered = round.answer.getLabels().begin();
      for (size_t k = 0; k < round.labels.size(); ++k) {
        const uint16_t d = round.labels[k].device;
        const uint8_t* want = expected[d].data() + next[d]++ * proto::kLabelBytes;
        std::memcpy(round.expected.data() + k * proto::kLabelBytes, want, proto::kLabelBytes);
        if (round.all_correct && std::memcmp(answered + k * proto::kLabelBytes, want, proto::kLabelBytes) != 0) {
          round.all_correct = false;
          round.wrong_at = k;
        }
      }
      out_->labels_recomputed += round.labels.size();
    }
    return Status::Ok();
  }

  bool IsProofRound(const Round& round) const { return round.proof; }

  // N_d (proto/session_rules.h ChunksChecked): the rule the live check applies.
  std::vector<uint64_t> ChunksChecked() const {
    std::vector<proto::AnsweredRound> answered;
    for (const Round& round : rounds_) answered.push_back({round.round, round.all_correct, round.in_time});
    return proto::ChunksChecked(order_->message.root(), answered);
  }

  // The verdicts, verified; the final one says what the session's outcome was.
  Status OpenVerdicts() {
    for (const VerifiedEntry* entry : verdict_entries_) {
      WP_ASSIGN_OR_RETURN(auto verdict, Open<proto::Verdict>(entry, keys_.challenger, "verdict", "challenger key"));
      verdicts_.push_back(std::move(verdict));
    }
    if (verdicts_.empty()) return Status::Ok();
    proto::Verdict::Reader v = final_verdict();
    out_->outcome = v.getPass() ? "pass" : "fail (" + ReasonName(v.getFailure().getReason()) + ")";
    out_->bound_stated = v.getBoundStated();
    out_->statement = v.getStatement().cStr();
    if (verdicts_.size() == 2 && (!verdicts_[0].message.root().getPass() || verdicts_[1].message.root().getPass())) {
      return Wrong(verdict_entries_[1], "verdict", "a second verdict may only supersede a pass with a failure");
    }
    return Status::Ok();
  }

  Status CheckVerdicts() {
    proto::Verdict::Reader v = final_verdict();
    const VerifiedEntry* entry = verdict_entries_.back();
    auto wrong = [&](const std::string& detail) { return Wrong(entry, "verdict", detail); };
    proto::WipeOrder::Reader o = order_->message.root();
    if (v.getNodeName() != o.getNodeName()) return wrong("names node " + std::string(v.getNodeName().cStr()));
    if (!Same(v.getOrderDigest(), order_->payload_digest)) return wrong("orderDigest is not the recorded order's");
    // A failed session may name a report the ledger could not take (another session's); a pass may not.
    if (v.getReportDigest().size() > 0 && (report_payload_digest_.has_value() || v.getPass()) &&
        !(report_payload_digest_.has_value() && Same(v.getReportDigest(), *report_payload_digest_))) {
      return wrong("reportDigest " + Hex(v.getReportDigest()) + " is not the recorded fill report's");
    }
    if (v.getFillDeadlineUs() != o.getFillDeadlineUs() || v.getRoundDeadlineUs() != o.getRoundDeadlineUs()) {
      return wrong("its deadlines are not the order's");
    }
    auto verdict_profile = proto::EncodeCanonical(v.getProfile());
    auto order_profile = proto::EncodeCanonical(o.getProfile());
    if (!verdict_profile.ok() || !order_profile.ok() || *verdict_profile != *order_profile) {
      return wrong("its parameter profile is not the order's");
    }
    if (v.getConfidence() != o.getProfile().getConfidence()) return wrong("its confidence is not the profile's");
    WP_RETURN_IF_ERROR(CheckVerdictRounds(v, entry));
    WP_RETURN_IF_ERROR(CheckVerdictDevices(v, entry));
    return Status::Ok();
  }

  Status CheckVerdictRounds(proto::Verdict::Reader v, const VerifiedEntry* entry) {
    if (v.getRounds().size() != rounds_.size()) {
      return Wrong(
          entry, "verdict",
          "lists " + std::to_string(v.getRounds().size()) + " rounds, the round log " + std::to_string(rounds_.size()));
    }
    const auto timings = v.getRounds();  // read once (see CheckRounds)
    for (unsigned r = 0; r < rounds_.size(); ++r) {
      auto a = timings[r];
      auto b = rounds_[r].timing;
      if (a.getRoundIndex() != b.getRoundIndex() || a.getElapsedUs() != b.getElapsedUs() ||
          a.getSentAfterOrderUs() != b.getSentAfterOrderUs() ||
          a.getLabelsChecked() != b.getLabelsChecked() || a.getDeadlineMet() != b.getDeadlineMet() ||
          a.getAllCorrect() != b.getAllCorrect()) {
        return Wrong(entry, "verdict", "round " + std::to_string(r) + "'s timing differs from the round log's");
      }
    }
    return Status::Ok();
  }

  Status CheckVerdictDevices(proto::Verdict::Reader v, const VerifiedEntry* entry) {
    proto::WipeOrder::Reader o = order_->message.root();
    if (v.getDevices().size() != o.getDevices().size()) {
      return Wrong(
          entry, "verdict",
          std::to_string(v.getDevices().size()) + " devices, the order plans " + std::to_string(o.getDevices().size()));
    }
    chunks_checked_ = ChunksChecked();
    for (unsigned d = 0; d < o.getDevices().size(); ++d) {
      auto got = v.getDevices()[d];
      auto plan = o.getDevices()[d];
      const std::string what = "device " + std::string(plan.getSelector().cStr());
      auto wrong = [&](const std::string& detail) { return Wrong(entry, "verdict", what + ": " + detail); };
      if (got.getSelector() != plan.getSelector() ||
          got.getPlannedBytes() != plan.getLabelCount() * proto::kLabelBytes ||
          got.getCapacityBytes() != plan.getCapacityBytes() ||
          got.getAllowedReserveBytes() != plan.getAllowedReserveBytes()) {
        return wrong("its plan (selector, planned bytes, capacity, reserve) is not the order's");
      }
      // A report that did not verify or match gives no figure to compare (the session failed on it).
      const uint64_t held = report_.has_value() ? report_->message.root().getDevices()[d].getBytesHeld() : 0;
      if (report_problem_.empty() && got.getBytesHeld() != held) {
        return wrong("bytesHeld " + std::to_string(got.getBytesHeld()) + ", the fill report says " +
                     std::to_string(held));
      }
      if (got.getChunksChecked() != chunks_checked_[d]) {
        return wrong("chunksChecked " + std::to_string(got.getChunksChecked()) + ", the round log shows " +
                     std::to_string(chunks_checked_[d]) + " distinct chunks answered right and in time");
      }
    }
    return Status::Ok();
  }

  // Each round's send time (sentAfterOrderUs, the challenger's monotonic clock from the order) fits
  // the session: a round leaves only once the one before was answered (one in flight), a device is
  // challenged only from its fill notice on, and a proof round only once the report and every notice
  // were in. The wave audit (wave_audit.h) lines members up with them.
  Status CheckRoundSendTimes() {
    if (rounds_.empty()) return Status::Ok();
    if (final_verdict().getOrderSentAtUnixUs() == 0) {
      return Wrong(verdict_entries_.back(), "verdict",
                   "states no orderSentAtUnixUs: the round send times cannot be placed (records written before "
                   "they were kept)");
    }
    // Sent after the authority signed the order and before it expired (the agent refuses it then).
    proto::WipeOrder::Reader o = order_->message.root();
    const int64_t sent_at = final_verdict().getOrderSentAtUnixUs();
    if (sent_at < o.getIssuedAtUnixUs() || sent_at >= o.getExpiresAtUnixUs()) {
      return Wrong(verdict_entries_.back(), "verdict",
                   "orderSentAtUnixUs " + std::to_string(sent_at) + " is outside the order's lifetime [" +
                       std::to_string(o.getIssuedAtUnixUs()) + ", " + std::to_string(o.getExpiresAtUnixUs()) + ")");
    }
    const std::vector<uint64_t> filled = DeviceFillTimes();
    uint64_t all_filled = final_verdict().getFillMicros();
    for (uint64_t at : filled) all_filled = std::max(all_filled, at);
    for (size_t r = 0; r < rounds_.size(); ++r) {
      const Round& round = rounds_[r];
      const uint64_t sent = round.timing.getSentAfterOrderUs();
      const std::string what = "round " + std::to_string(r);
      if (r > 0) {
        const proto::RoundTiming::Reader before = rounds_[r - 1].timing;
        const uint64_t answered = before.getSentAfterOrderUs() + before.getElapsedUs();
        if (sent < answered) {
          return Wrong(round.entry, what,
                       "sent " + std::to_string(sent) + " us after the order, before round " + std::to_string(r - 1) +
                           " was answered (" + std::to_string(answered) + " us): one round is in flight at a time");
        }
      }
      for (const auto& [d, g] : round.labels) {
        if (d < filled.size() && sent < filled[d]) {
          return Wrong(round.entry, what,
                       "challenges device " + std::to_string(d) + " at " + std::to_string(sent) +
                           " us after the order, before its fill notice (" + std::to_string(filled[d]) + " us)");
        }
      }
      if (IsProofRound(round) && sent < all_filled) {
        return Wrong(round.entry, what,
                     "a proof round sent " + std::to_string(sent) + " us after the order, before the node's report "
                         "and every notice were in (" + std::to_string(all_filled) + " us)");
      }
    }
    return Status::Ok();
  }

  // When each device was known filled, on the challenger's clock (microseconds from sending the
  // order): its fill notice's time as the verdict states it (DeviceBound.filledAfterUs); the
  // report's time for a device the verdict gives none.
  std::vector<uint64_t> DeviceFillTimes() const {
    std::vector<uint64_t> out;
    auto devices = final_verdict().getDevices();
    for (unsigned d = 0; d < order_->message.root().getDevices().size(); ++d) {
      const uint64_t at = d < devices.size() ? devices[d].getFilledAfterUs() : 0;
      out.push_back(at > 0 ? at : final_verdict().getFillMicros());
    }
    return out;
  }

  Status CheckPass() {
    const VerifiedEntry* entry = verdict_entries_.back();
    auto unproven = [&](const std::string& detail) { return Wrong(entry, "verdict", "says pass, but " + detail); };
    proto::WipeOrder::Reader o = order_->message.root();
    if (!report_problem_.empty()) return unproven(report_problem_);
    if (!report_.has_value()) return unproven("the ledger holds no fill report");
    if (!notice_problem_.empty()) return unproven(notice_problem_);
    for (unsigned d = 0; d < o.getDevices().size(); ++d) {
      if (!notices_[d].has_value()) {
        return unproven("the ledger holds no fill notice of device " +
                        std::string(o.getDevices()[d].getSelector().cStr()));
      }
      Status holds = proto::CheckFillHoldsPlan(o.getDevices()[d], notices_[d]->message.root().getFill());
      if (!holds.ok()) {
        return unproven("device " + std::string(o.getDevices()[d].getSelector().cStr()) + "'s fill notice " +
                        holds.message());
      }
    }
    for (unsigned d = 0; d < o.getDevices().size(); ++d) {
      Status holds = proto::CheckFillHoldsPlan(o.getDevices()[d], report_->message.root().getDevices()[d]);
      if (!holds.ok()) {
        return unproven("device " + std::string(o.getDevices()[d].getSelector().cStr()) + " " + holds.message());
      }
    }
    const uint64_t fill_us = final_verdict().getFillMicros();
    if (fill_us > o.getFillDeadlineUs()) {
      return unproven("the fill took " + std::to_string(fill_us) + " us, the order's fill deadline is " +
                      std::to_string(o.getFillDeadlineUs()) + " us");
    }
    const std::vector<uint64_t> device_fill = DeviceFillTimes();
    for (unsigned d = 0; d < o.getDevices().size(); ++d) {
      if (device_fill[d] > o.getDevices()[d].getFillDeadlineUs()) {
        return unproven("device " + std::string(o.getDevices()[d].getSelector().cStr()) + " was filled after " +
                        std::to_string(device_fill[d]) + " us, its fill deadline is " +
                        std::to_string(o.getDevices()[d].getFillDeadlineUs()) + " us");
      }
    }
    if (rounds_.empty()) return unproven("no round was run");
    for (size_t r = 0; r < rounds_.size(); ++r) {
      const Round& round = rounds_[r];
      const std::string what =
          "round " + std::to_string(r) + " (ledger entry " + std::to_string(round.entry->sequence) + ")";
      if (!round.answer_usable) return unproven(what + " has no usable answer in the round log");
      if (!round.all_correct) return unproven(what + ": " + WrongLabelText(round));
      if (!round.in_time) {
        return unproven(what + " took " + std::to_string(round.timing.getElapsedUs()) + " us, the deadline is " +
                        std::to_string(o.getRoundDeadlineUs()) + " us");
      }
    }
    for (unsigned d = 0; d < o.getDevices().size(); ++d) {
      if (chunks_checked_[d] == 0) {
        return unproven("device " + std::string(o.getDevices()[d].getSelector().cStr()) +
                        " was never challenged in a proof round (every device at its labelsPerRound)");
      }
    }
    return CheckTranscript();
  }

  std::string WrongLabelText(const Round& round) const {
    proto::WipeOrder::Reader o = order_->message.root();
    const auto& [d, g] = round.labels[round.wrong_at];
    const uint8_t* got = round.answer.getLabels().begin() + round.wrong_at * proto::kLabelBytes;
    return "device " + std::string(o.getDevices()[d].getSelector().cStr()) + ", label " + std::to_string(g) +
           ": the logged answer " + HexEncode(got, proto::kLabelBytes) + " is not the label recomputed from the seed " +
           HexEncode(round.expected.data() + round.wrong_at * proto::kLabelBytes, proto::kLabelBytes);
  }

  // The node-signed digest must be the one recomputed over the recorded order, report and rounds.
  Status CheckTranscript() {
    const VerifiedEntry* verdict_entry = verdict_entries_.back();
    if (transcript_entry_ == nullptr) {
      return Wrong(verdict_entry, "verdict", "says pass, but the ledger holds no node-signed transcript");
    }
    WP_ASSIGN_OR_RETURN(auto transcript, Open<proto::TranscriptDigest>(transcript_entry_, node_key_, "transcript",
                                                                       "node key of " + node_name()));
    proto::TranscriptDigest::Reader t = transcript.message.root();
    auto wrong = [&](const std::string& detail) { return Wrong(transcript_entry_, "transcript", detail); };
    if (!Same(t.getNodeKeyId(), order_->message.root().getNodeKeyId())) return wrong("nodeKeyId is not the order's");
    proto::TranscriptHasher hasher;
    WP_RETURN_IF_ERROR(hasher.AddOrder(proto::AsView(order_->envelope.payload)));
    for (size_t d = 0; d < notices_.size(); ++d) {
      if (notices_[d]) {
        WP_RETURN_IF_ERROR(hasher.AddNotice(static_cast<uint16_t>(d), proto::AsView(notices_[d]->envelope.payload)));
      }
    }
    WP_RETURN_IF_ERROR(hasher.AddReport(proto::AsView(report_->envelope.payload)));
    for (const Round& round : rounds_) WP_RETURN_IF_ERROR(hasher.AddRound(round.round, round.answer));
    WP_ASSIGN_OR_RETURN(proto::Digest digest, hasher.Finish());
    if (t.getRoundCount() != rounds_.size()) {
      return wrong("the node signed " + std::to_string(t.getRoundCount()) + " rounds, the round log holds " +
                   std::to_string(rounds_.size()));
    }
    if (!Same(t.getDigest(), digest)) {
      return wrong("the digest recomputed over the recorded order, fill notices, fill report and " +
                   std::to_string(rounds_.size()) + " logged rounds is " + Hex(digest) + ", the node signed " +
                   Hex(t.getDigest()) + ": a logged round or answer is not what the node answered");
    }
    if (!Same(t.getVerdictDigest(), verdicts_.front().payload_digest)) {
      return wrong("verdictDigest " + Hex(t.getVerdictDigest()) + " is not the digest of the verdict sent in finish");
    }
    transcript_.emplace(std::move(transcript));
    out_->transcript_checked = true;
    return Status::Ok();
  }

  // A failing verdict's reason, borne out by the records where they hold the facts.
  Status ConfirmFailure() {
    proto::Verdict::Reader v = final_verdict();
    proto::Failure::Reader f = v.getFailure();
    proto::WipeOrder::Reader o = order_->message.root();
    const VerifiedEntry* entry = verdict_entries_.back();
    const std::string reason = ReasonName(f.getReason());
    auto contradicted = [&](const std::string& detail) {
      return Wrong(entry, "verdict", "fails with " + reason + ", but " + detail);
    };
    auto round_of = [&]() -> const Round* {
      return f.getRoundIndex() < rounds_.size() ? &rounds_[f.getRoundIndex()] : nullptr;
    };
    switch (f.getReason()) {
      case FailureReason::WRONG_LABEL: {
        const Round* round = round_of();
        if (round == nullptr || !round->answer_usable) {
          return contradicted("round " + std::to_string(f.getRoundIndex()) + " has no usable answer in the round log");
        }
        for (size_t k = 0; k < round->labels.size(); ++k) {
          const auto& [d, g] = round->labels[k];
          if (g != f.getLabelIndex() || o.getDevices()[d].getSelector() != f.getDevice()) continue;
          const ByteView got(round->answer.getLabels().begin() + k * proto::kLabelBytes, proto::kLabelBytes);
          const ByteView want(round->expected.data() + k * proto::kLabelBytes, proto::kLabelBytes);
          if (Same(got, want)) {
            return contradicted("label " + std::to_string(g) + " of round " + std::to_string(f.getRoundIndex()) +
                                " was answered right (recomputed from the seed)");
          }
          if (!Same(f.getExpected(), want) || !Same(f.getReceived(), got)) {
            return contradicted("the expected and received labels it names are not the recomputed and logged ones");
          }
          out_->failure_confirmation = "confirmed: round " + std::to_string(f.getRoundIndex()) + ", label " +
                                       std::to_string(g) + " differs from the label recomputed from the seed";
          return Status::Ok();
        }
        return contradicted("round " + std::to_string(f.getRoundIndex()) + " did not challenge label " +
                            std::to_string(f.getLabelIndex()) + " of device " + f.getDevice().cStr());
      }
      case FailureReason::LATE_ROUND: {
        const Round* round = round_of();
        if (round == nullptr) return contradicted("the round log has no round " + std::to_string(f.getRoundIndex()));
        if (round->in_time && round->has_answer) {
          return contradicted("round " + std::to_string(f.getRoundIndex()) + " was answered in " +
                              std::to_string(round->timing.getElapsedUs()) + " us, within the deadline");
        }
        out_->failure_confirmation = "confirmed: round " + std::to_string(f.getRoundIndex()) + " took " +
                                     std::to_string(round->timing.getElapsedUs()) + " us (deadline " +
                                     std::to_string(o.getRoundDeadlineUs()) + " us)" +
                                     (round->has_answer ? "" : ", no answer");
        return Status::Ok();
      }
      case FailureReason::LATE_FILL:
        if (report_.has_value() && v.getFillMicros() <= o.getFillDeadlineUs()) {
          return contradicted("the fill took " + std::to_string(v.getFillMicros()) + " us, within the deadline " +
                              std::to_string(o.getFillDeadlineUs()) + " us");
        }
        out_->failure_confirmation = "confirmed: fill " + std::to_string(v.getFillMicros()) + " us, deadline " +
                                     std::to_string(o.getFillDeadlineUs()) + " us" +
                                     (report_.has_value() ? "" : ", no fill report");
        return Status::Ok();
      case FailureReason::SHORT_CAPACITY: {
        if (!report_.has_value()) return contradicted("the ledger holds no fill report");
        for (unsigned d = 0; d < o.getDevices().size(); ++d) {
          auto plan = o.getDevices()[d];
          auto fill = report_->message.root().getDevices()[d];
          if (plan.getSelector() != f.getDevice()) continue;
          if (proto::CheckFillHoldsPlan(plan, fill).ok()) {
            return contradicted("the node-signed fill report shows device " + std::string(f.getDevice().cStr()) +
                                " holding its plan");
          }
          out_->failure_confirmation = "confirmed: the node-signed fill report shows device " +
                                       std::string(f.getDevice().cStr()) + " short of its plan";
          return Status::Ok();
        }
        return contradicted("the order plans no device " + std::string(f.getDevice().cStr()));
      }
      case FailureReason::BAD_SIGNATURE:
      case FailureReason::PROTOCOL_ERROR:
        // A report that does not verify or match the order bears these out; other causes (a
        // transcript, a round's shape) the records show only in part.
        if (!report_problem_.empty()) {
          out_->failure_confirmation = "confirmed: " + report_problem_;
          return Status::Ok();
        }
        [[fallthrough]];
      default:
        out_->failure_confirmation = "not re-checkable from the records: " + reason + " rests on the challenger's word";
        return Status::Ok();
    }
  }

  Status CheckBound() {
    RecomputedFacts facts;
    facts.order = order_->message.root();
    facts.authority_key_id = proto::KeyIdOf(keys_.authority);
    facts.verdict = final_verdict();
    facts.chunks_checked = chunks_checked_;
    WP_RETURN_IF_ERROR(RecomputeOccupancy(&facts.occupancy));
    for (const Round& r : rounds_) {
      if (IsProofRound(r)) {
        facts.proof_rounds_end_after_order_us = std::max(facts.proof_rounds_end_after_order_us,
                                                         r.timing.getSentAfterOrderUs() + r.timing.getElapsedUs());
      }
    }
    if (declared_.has_value()) facts.declared = &*declared_;
    facts.have_report = report_.has_value();
    if (report_.has_value()) {
      for (auto d : report_->message.root().getDevices()) facts.device_total_bytes.push_back(d.getTotalBytes());
    }
    Status rechecked = RecheckVerdictBound(facts);
    if (!rechecked.ok()) return Wrong(verdict_entries_.back(), "verdict", rechecked.message());
    return Status::Ok();
  }

  // The occupancy window as the records show it (verdict_recheck.h): its bounds are the verdict's,
  // which must open at the last proof round's answer; every round after that one sent before the
  // window's end must have the occupancy shape, and K counts those answered right and in time. A passing session whose order
  // asked a window must state it; an order that asked none has no window.
  Status RecomputeOccupancy(OccupancyFacts* out) {
    proto::Verdict::Reader v = final_verdict();
    proto::WipeOrder::Reader o = order_->message.root();
    const VerifiedEntry* entry = verdict_entries_.back();
    if (!v.hasOccupancy()) {
      if (o.getOccupancyWindowUs() != 0 && v.getPass()) {
        return Wrong(entry, "verdict", "passed without the occupancy statement its order's window asks for");
      }
      return Status::Ok();
    }
    if (o.getOccupancyWindowUs() == 0) {
      return Wrong(entry, "verdict", "states an occupancy window its order did not ask for");
    }
    auto w = v.getOccupancy();
    out->ran = true;
    out->start_after_order_us = w.getWindowStartAfterOrderUs();
    out->end_after_order_us = w.getWindowEndAfterOrderUs();
    if (out->end_after_order_us < out->start_after_order_us) {
      return Wrong(entry, "verdict", "its occupancy window ends before it starts");
    }
    size_t last_proof = rounds_.size();
    for (size_t i = 0; i < rounds_.size(); ++i) {
      if (IsProofRound(rounds_[i])) last_proof = i;
    }
    if (last_proof == rounds_.size() || rounds_[last_proof].timing.getSentAfterOrderUs() +
                                                rounds_[last_proof].timing.getElapsedUs() !=
                                            out->start_after_order_us) {
      return Wrong(entry, "verdict", "its occupancy window does not open at the last proof round's answer");
    }
    // The rounds after the last proof round and sent before the window's end.
    uint64_t in_flight = 0;
    for (size_t i = last_proof + 1; i < rounds_.size(); ++i) {
      const Round& round = rounds_[i];
      const uint64_t sent = round.timing.getSentAfterOrderUs();
      if (sent >= out->end_after_order_us) break;
      if (!proto::IsOccupancyRound(o, round.round)) {
        return Wrong(entry, "verdict",
                     "round " + std::to_string(round.round.getRoundIndex()) +
                         ", sent inside the occupancy window, is not an occupancy round (every device at its "
                         "occupancyLabels)");
      }
      out->rounds += round.all_correct && round.in_time;
      // Its time in flight inside the window (the window may end while it is on the wire).
      in_flight += std::min(round.timing.getElapsedUs(), out->end_after_order_us - sent);
    }
    // U is the challenger's measurement: at least the rounds' time in flight, at most the window.
    out->unprotected_us = w.getUnprotectedUs();
    if (out->unprotected_us < in_flight || out->unprotected_us > out->end_after_order_us - out->start_after_order_us) {
      return Wrong(entry, "verdict",
                   "occupancy unprotectedUs " + std::to_string(out->unprotected_us) +
                       " is not in [the occupancy rounds' time in flight " + std::to_string(in_flight) +
                       " us, the window's length]");
    }
    // Too few rounds for the gaps' running time: a window stretched, or rounds left out.
    const double expected = static_cast<double>(out->end_after_order_us - out->start_after_order_us -
                                                out->unprotected_us) /
                            static_cast<double>(std::max<uint64_t>(1, o.getOccupancyMeanGapUs()));
    if (OccupancyRoundsLogLowerTail(out->rounds, expected) < std::log(kOccupancyRoundsImplausible)) {
      return Wrong(entry, "verdict",
                   "its occupancy window shows " + std::to_string(out->rounds) + " rounds where its gaps' running time " +
                       "asks about " + std::to_string(static_cast<uint64_t>(expected)) +
                       ": fewer has a chance below 1e-9 (a window stretched, or rounds left out)");
    }
    // No longer than the order allows (a round deadline and the timer's slack over): a stretch too
    // small for the count of rounds to show is still one.
    const uint64_t length = out->end_after_order_us - out->start_after_order_us;
    const uint64_t longest = o.getOccupancyWindowUs() + o.getRoundDeadlineUs() + kOccupancyOverrunSlackUs;
    if (length > longest) {
      return Wrong(entry, "verdict",
                   "its occupancy window ran " + std::to_string(length) + " us, longer than its order's " +
                       std::to_string(o.getOccupancyWindowUs()) + " us allow (with a round deadline and " +
                       std::to_string(kOccupancyOverrunSlackUs) + " us of the timer's slack: " +
                       std::to_string(longest) + " us)");
    }
    if (w.getRounds() != out->rounds) {
      return Wrong(entry, "verdict",
                   "occupancy rounds " + std::to_string(w.getRounds()) + ", the round log shows " +
                       std::to_string(out->rounds) + " answered right and in time inside the window");
    }
    return Status::Ok();
  }

  Status CheckReceipt() {
    WP_ASSIGN_OR_RETURN(auto receipt,
                        Open<proto::Receipt>(receipt_entry_, keys_.challenger, "receipt", "challenger key"));
    proto::Receipt::Reader r = receipt.message.root();
    proto::Verdict::Reader v = final_verdict();
    auto wrong = [&](const std::string& detail) { return Wrong(receipt_entry_, "receipt", detail); };
    if (r.getPass() != v.getPass()) return wrong("its pass flag is not the final verdict's");
    if (r.getNodeName() != v.getNodeName()) return wrong("names node " + std::string(r.getNodeName().cStr()));
    if (!Same(r.getOrderDigest(), order_->payload_digest)) return wrong("orderDigest is not the recorded order's");
    if (report_payload_digest_.has_value() && !Same(r.getReportDigest(), *report_payload_digest_)) {
      return wrong(r.getReportDigest().size() == 0 ? "states no reportDigest, the ledger records a fill report"
                                                   : "reportDigest is not the recorded fill report's");
    }
    if (!Same(r.getVerdictDigest(), verdicts_.back().payload_digest)) {
      return wrong("verdictDigest is not the final verdict's (ledger entry " +
                   std::to_string(verdict_entries_.back()->sequence) + ")");
    }
    if (r.getLedgerSequence() != verdict_entries_.back()->sequence) {
      return wrong("names ledger entry " + std::to_string(r.getLedgerSequence()) + " as the verdict, it is entry " +
                   std::to_string(verdict_entries_.back()->sequence));
    }
    if (r.hasTranscript()) {
      auto embedded = proto::DecodeEnvelope(r.getTranscript());
      if (transcript_entry_ == nullptr || !embedded.ok() ||
          proto::EncodeEnvelope(*embedded) != transcript_entry_->record) {
        return wrong("the transcript it embeds is not the recorded one");
      }
    }
    return Status::Ok();
  }

  const std::vector<const VerifiedEntry*>& entries_;
  const AuditKeys& keys_;
  const SessionAuditOptions& options_;
  SessionAudit* out_;

  const VerifiedEntry* order_entry_ = nullptr;
  const VerifiedEntry* report_entry_ = nullptr;
  const VerifiedEntry* transcript_entry_ = nullptr;
  const VerifiedEntry* receipt_entry_ = nullptr;
  std::vector<const VerifiedEntry*> round_log_entries_;
  std::vector<const VerifiedEntry*> notice_entries_;
  std::vector<const VerifiedEntry*> verdict_entries_;

  std::optional<Signed<proto::WipeOrder>> order_;
  std::optional<NodeDeclarations> declared_;  // the signed inventory's, when the delegation names one
  proto::PublicKey node_key_{};
  std::optional<Signed<proto::FillReport>> report_;  // verified and matching the order
  std::optional<proto::Digest> report_payload_digest_;
  std::string report_problem_;  // why the recorded report did not verify or match; "" when it did
  std::vector<std::optional<Signed<proto::DeviceFillNotice>>> notices_;  // per device: verified, matching
  std::string notice_problem_;                        // the first notice that did not verify or match; "" when all did
  std::vector<proto::Parsed<proto::RoundLog>> logs_;  // own the readers in rounds_
  std::vector<Round> rounds_;
  std::vector<Signed<proto::Verdict>> verdicts_;
  std::optional<Signed<proto::TranscriptDigest>> transcript_;
  std::vector<uint64_t> chunks_checked_;
};

}  // namespace

SessionAudit AuditSession(const std::vector<const VerifiedEntry*>& entries, const AuditKeys& keys,
                          const SessionAuditOptions& options) {
  SessionAudit out;
  out.records = entries.size();
  if (entries.empty()) {
    out.status = InvalidArgumentError("no records");
    return out;
  }
  out.session_id = entries.front()->session_id;
  Auditor auditor(entries, keys, options, &out);
  Status status = auditor.Run();
  if (!status.ok()) out.status = status.WithContext("session " + Hex(out.session_id));
  return out;
}

}  // namespace wipeproof
