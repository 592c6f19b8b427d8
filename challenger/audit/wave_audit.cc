#include "challenger/audit/wave_audit.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "challenger/session/wave_verdict.h"
#include "common/hex.h"
#include "proto/codec.h"
#include "proto/delegation.h"
#include "proto/signing.h"

namespace wipeproof {

namespace {

bool Same(proto::ByteView a, proto::ByteView b) {
  return a.size() == b.size() && std::memcmp(a.begin(), b.begin(), a.size()) == 0;
}

// Times this audit adds (microseconds: Unix times, offsets) lie within +-2^60 (36,000 years), so
// that sums of three of them cannot overflow; a record with a time outside it is not placed.
constexpr int64_t kTimeLimitUs = int64_t{1} << 60;
bool Placeable(int64_t us) { return us > -kTimeLimitUs && us < kTimeLimitUs; }
bool Placeable(uint64_t us) { return us < static_cast<uint64_t>(kTimeLimitUs); }

// The verdict's times that place its member in the wave are all Placeable.
bool Placeable(const proto::Verdict::Reader& v) {
  if (!Placeable(v.getOrderSentAtUnixUs()) || !Placeable(v.getFillMicros())) return false;
  for (auto d : v.getDevices()) {
    if (!Placeable(d.getFilledAfterUs())) return false;
  }
  for (auto r : v.getRounds()) {
    if (!Placeable(r.getSentAfterOrderUs())) return false;
  }
  return true;
}

// Each member's first proof round (a passing round whose labelsChecked is proof_labels[i]: every
// device at its labelsPerRound; holding rounds carry fewer) was sent after the last fill of every
// member (its report or a device's notice, whichever came last), with each member's order at
// order_at[i] on `clock` (kWaveClockName: tolerance kWaveClockToleranceUs; kWallClockName:
// kWaveSendToleranceUs + 0.1% of the span from the member's order to that fill).
Status PlaceProofRounds(const std::vector<proto::Verdict::Reader>& members, const std::vector<uint64_t>& proof_labels,
                        const std::vector<int64_t>& order_at, const std::string& clock) {
  const bool wave_clock = clock == kWaveClockName;
  int64_t last_fill = INT64_MIN;
  std::string last_filled;
  for (size_t i = 0; i < members.size(); ++i) {
    const proto::Verdict::Reader& v = members[i];
    uint64_t filled = v.getFillMicros();
    for (auto d : v.getDevices()) filled = std::max(filled, d.getFilledAfterUs());
    const int64_t at = order_at[i] + static_cast<int64_t>(filled);
    if (at > last_fill) {
      last_fill = at;
      last_filled = v.getNodeName().cStr();
    }
  }
  for (size_t i = 0; i < members.size(); ++i) {
    const proto::Verdict::Reader& v = members[i];
    const std::string name = "member " + std::string(v.getNodeName().cStr());
    bool found = false;
    for (auto r : v.getRounds()) {
      if (r.getLabelsChecked() != proof_labels[i]) continue;
      found = true;
      const int64_t sent = order_at[i] + static_cast<int64_t>(r.getSentAfterOrderUs());
      const int64_t span = std::max<int64_t>(0, last_fill - order_at[i]);
      const int64_t tolerance = wave_clock ? kWaveClockToleranceUs : kWaveSendToleranceUs + span / 1000;
      if (sent + tolerance < last_fill) {
        return DataLossError(name + ": its first proof round (round " + std::to_string(r.getRoundIndex()) +
                             ") was sent " + std::to_string(last_fill - sent) + " us before member " + last_filled +
                             " was filled on the " + clock + " (allowed: " + std::to_string(tolerance) +
                             " us): the wave's proof rounds must follow every member's fill");
      }
      break;
    }
    if (!found) return DataLossError(name + ": passed without a proof round");
  }
  return Status::Ok();
}

// When every member passed: the proof rounds follow every fill (PlaceProofRounds) on the wall clock
// (each verdict's orderSentAtUnixUs: the node-signed transcript names the verdict, and the order it
// also covers bounds it); and, when the wave verdict states `origins` (orderSentAfterWaveUs,
// signed by the challenger alone), the two clocks agree on every member's order relative to the
// first member's within kWaveSendToleranceUs, and the proof rounds follow every fill on the wave
// clock too (kWaveClockToleranceUs). *clock: the finest clock checked (left as it is when a member
// failed: nothing is placed).
Status CheckProofsFollowEveryFill(const std::vector<proto::Verdict::Reader>& members,
                                  const std::vector<uint64_t>& proof_labels, const std::vector<int64_t>& origins,
                                  std::string* clock) {
  for (const proto::Verdict::Reader& v : members) {
    if (!v.getPass()) return Status::Ok();  // a failed member fails the wave; nothing to place
  }
  *clock = origins.empty() ? kWallClockName : kWaveClockName;
  std::vector<int64_t> wall;
  for (const proto::Verdict::Reader& v : members) {
    if (!Placeable(v)) {
      return DataLossError("member " + std::string(v.getNodeName().cStr()) +
                           ": its verdict states a time beyond 2^60 us: its rounds cannot be placed in the wave");
    }
    if (v.getOrderSentAtUnixUs() == 0) {
      return DataLossError("member " + std::string(v.getNodeName().cStr()) +
                           ": its verdict states no orderSentAtUnixUs: its rounds cannot be placed in the wave");
    }
    wall.push_back(v.getOrderSentAtUnixUs());
  }
  WP_RETURN_IF_ERROR(PlaceProofRounds(members, proof_labels, wall, kWallClockName));
  if (origins.empty()) return Status::Ok();
  for (size_t i = 1; i < members.size(); ++i) {
    const int64_t on_wave = origins[i] - origins[0], on_wall = wall[i] - wall[0];
    if (std::abs(on_wave - on_wall) > kWaveSendToleranceUs) {
      return DataLossError(
          "member " + std::string(members[i].getNodeName().cStr()) + ": its order was sent " + std::to_string(on_wave) +
          " us after member " + members[0].getNodeName().cStr() + "'s on the wave clock (orderSentAfterWaveUs), " +
          std::to_string(on_wall) + " us on the wall clock (orderSentAtUnixUs): the clocks disagree by " +
          std::to_string(std::abs(on_wave - on_wall)) + " us (allowed: " + std::to_string(kWaveSendToleranceUs) +
          " us): the members were not ordered together");
    }
  }
  return PlaceProofRounds(members, proof_labels, origins, kWaveClockName);
}

// The node-signed fill end of a session (FillReport.finishedAtUnixUs, Unix us), or 0 without a
// report that decodes. Its signature is the session audit's to verify.
int64_t SignedFillEnd(const std::vector<const VerifiedEntry*>& session) {
  for (const VerifiedEntry* e : session) {
    if (e->kind != proto::LedgerRecordKind::FILL_REPORT) continue;
    auto envelope = proto::DecodeEnvelope(proto::AsView(e->record));
    if (!envelope.ok()) return 0;
    auto report = proto::ParseMessage<proto::FillReport>(proto::AsView(envelope->payload));
    return report.ok() ? report->root().getFinishedAtUnixUs() : 0;
  }
  return 0;
}

// WaveAudit::fill_end_lag_us and fill_end_spread_us (see there); reported whatever the checks find.
void ReportFillEnds(const std::vector<proto::Verdict::Reader>& members, const std::vector<int64_t>& signed_ends,
                    const std::vector<int64_t>& origins, WaveAudit* out) {
  int64_t low = INT64_MAX, high = INT64_MIN;
  for (size_t i = 0; i < members.size(); ++i) {
    const proto::Verdict::Reader& v = members[i];
    if (signed_ends[i] == 0 || v.getOrderSentAtUnixUs() == 0 || !Placeable(v) || !Placeable(signed_ends[i])) continue;
    if (v.getFillMicros() == 0) {  // a session that failed before its report reached the challenger
      out->no_fill_time.emplace_back(v.getNodeName().cStr());
      continue;
    }
    const int64_t fill = static_cast<int64_t>(v.getFillMicros());
    out->fill_end_lag_us.emplace_back(v.getNodeName().cStr(), v.getOrderSentAtUnixUs() + fill - signed_ends[i]);
    const int64_t placed = (origins.empty() ? v.getOrderSentAtUnixUs() : origins[i]) + fill - signed_ends[i];
    low = std::min(low, placed);
    high = std::max(high, placed);
  }
  if (out->fill_end_lag_us.size() >= 2) {
    out->fill_end_spread_us = high - low;
    out->fill_end_spread_clock = origins.empty() ? kWallClockName : kWaveClockName;
  }
}

// The nodes the signed inventory `order`'s delegation names declares for its node's wave; nullopt
// when it names none, or one the export does not carry or that does not read, or that does not list
// the node (the member's session audit fails those).
std::optional<std::vector<std::string>> DeclaredWaveNodes(
    proto::WipeOrder::Reader order, const std::map<proto::Digest, StatusOr<SignedInventory>>& inventories) {
  auto envelope = proto::DecodeEnvelope(order.getDelegation());
  if (!envelope.ok()) return std::nullopt;
  auto delegation = proto::ParseMessage<proto::Delegation>(proto::AsView(envelope->payload));
  if (!delegation.ok()) return std::nullopt;
  const std::optional<proto::Digest> named = proto::NamedInventory(delegation->root());
  if (!named) return std::nullopt;
  auto it = inventories.find(*named);
  if (it == inventories.end() || !it->second.ok()) return std::nullopt;
  auto node = it->second->nodes.find(order.getNodeName().cStr());
  if (node == it->second->nodes.end()) return std::nullopt;
  return node->second.wave.members;
}

std::string Joined(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Status Check(const VerifiedEntry& entry, const std::map<proto::Bytes, std::vector<const VerifiedEntry*>>& sessions,
             const proto::PublicKey& challenger, const std::map<proto::Digest, StatusOr<SignedInventory>>* inventories,
             WaveAudit* out) {
  auto envelope = proto::DecodeEnvelope(proto::AsView(entry.record));
  if (!envelope.ok()) return DataLossError(envelope.status().message());
  auto wave = proto::VerifyAndParse<proto::WaveVerdict>(*envelope, challenger);
  if (!wave.ok()) return DataLossError("does not verify under the challenger key: " + wave.status().message());
  proto::WaveVerdict::Reader w = wave->root();
  out->wave = w.getWaveName().cStr();
  out->pass = w.getPass();
  out->bound_stated = w.getBoundStated();
  out->statement = w.getStatement().cStr();
  out->members = w.getSessionIds().size();
  for (const proto::ByteView id : w.getSessionIds()) out->member_sessions.emplace_back(id.begin(), id.end());
  if (w.getNodeNames().size() != w.getSessionIds().size() || w.getVerdictDigests().size() != w.getSessionIds().size()) {
    return DataLossError("sessionIds, nodeNames and verdictDigests differ in length");
  }
  std::vector<proto::Parsed<proto::Verdict>> verdicts;
  std::vector<uint64_t> proof_labels;  // per member: labels of a proof round, every device at its q_d
  std::vector<int64_t> signed_ends;    // per member: its node-signed fill end, Unix us (0: none)
  for (unsigned i = 0; i < w.getSessionIds().size(); ++i) {
    const proto::ByteView id = w.getSessionIds()[i];
    const std::string name =
        "member " + std::string(w.getNodeNames()[i].cStr()) + " (session " + HexEncode(id.begin(), id.size()) + ")";
    auto session = sessions.find(proto::Bytes(id.begin(), id.end()));
    if (session == sessions.end()) return NotFoundError(name + ": the export holds no record of it");
    const VerifiedEntry* final_verdict = nullptr;
    const VerifiedEntry* order_entry = nullptr;
    for (const VerifiedEntry* e : session->second) {
      if (e->kind == proto::LedgerRecordKind::VERDICT) final_verdict = e;
      if (e->kind == proto::LedgerRecordKind::ORDER && order_entry == nullptr) order_entry = e;
    }
    // The member's order (authority-signed; its session audit verifies that) must say it was wiped in
    // this wave, and in a run the challenger declared complete when the wave verdict says complete.
    if (order_entry == nullptr) return DataLossError(name + ": the session has no order");
    auto order_envelope = proto::DecodeEnvelope(proto::AsView(order_entry->record));
    if (!order_envelope.ok()) return DataLossError(name + ": " + order_envelope.status().message());
    auto order = proto::ParseMessage<proto::WipeOrder>(proto::AsView(order_envelope->payload));
    if (!order.ok()) return DataLossError(name + ": " + order.status().message());
    if (order->root().getWaveName() != w.getWaveName()) {
      return DataLossError(name + ": its order is for wave '" + std::string(order->root().getWaveName().cStr()) +
                           "', not '" + out->wave + "'");
    }
    if (w.getComplete() && !order->root().getWaveComplete()) {
      return DataLossError(name + ": the wave verdict says complete, the member's order does not");
    }
    if (w.getComplete() && inventories != nullptr) {
      if (auto declared = DeclaredWaveNodes(order->root(), *inventories)) {
        std::vector<std::string> listed;
        for (auto n : w.getNodeNames()) listed.push_back(n.cStr());
        std::vector<std::string> want = *declared;
        std::sort(listed.begin(), listed.end());
        std::sort(want.begin(), want.end());
        if (listed != want) {
          return DataLossError(name + ": the wave verdict says complete and lists nodes " + Joined(listed) +
                               ", the signed inventory its order stands under declares wave " + out->wave +
                               "'s nodes " + Joined(want));
        }
      }
    }
    uint64_t q = 0;
    for (auto d : order->root().getDevices()) q += d.getLabelsPerRound();
    proof_labels.push_back(q);
    if (final_verdict == nullptr) return DataLossError(name + ": the session has no verdict");
    auto member = proto::DecodeEnvelope(proto::AsView(final_verdict->record));
    if (!member.ok()) return DataLossError(name + ": " + member.status().message());
    const proto::Digest digest = proto::Blake2b256(proto::AsView(member->payload));
    if (!Same(w.getVerdictDigests()[i], proto::AsView(digest))) {
      return DataLossError(name + ": the wave names verdict digest " +
                           HexEncode(w.getVerdictDigests()[i].begin(), w.getVerdictDigests()[i].size()) +
                           ", the session's final verdict (ledger entry " + std::to_string(final_verdict->sequence) +
                           ") has " + HexEncode(digest.data(), digest.size()));
    }
    auto parsed = proto::VerifyAndParse<proto::Verdict>(*member, challenger);
    if (!parsed.ok()) return DataLossError(name + ": " + parsed.status().message());
    if (parsed->root().getNodeName() != w.getNodeNames()[i]) {
      return DataLossError(name + ": the session's verdict is for node " +
                           std::string(parsed->root().getNodeName().cStr()));
    }
    verdicts.push_back(std::move(parsed).value());
    signed_ends.push_back(SignedFillEnd(session->second));
  }
  std::vector<proto::Verdict::Reader> readers;
  for (auto& v : verdicts) readers.push_back(v.root());
  // The members' orders on the wave's one monotonic clock, when the wave verdict states them.
  std::vector<int64_t> origins;
  if (w.hasOrderSentAfterWaveUs()) {
    if (w.getOrderSentAfterWaveUs().size() != w.getSessionIds().size()) {
      return DataLossError("orderSentAfterWaveUs lists " + std::to_string(w.getOrderSentAfterWaveUs().size()) +
                           " members, sessionIds " + std::to_string(w.getSessionIds().size()));
    }
    for (uint64_t at : w.getOrderSentAfterWaveUs()) {
      if (!Placeable(at)) return DataLossError("orderSentAfterWaveUs is out of range");
      origins.push_back(static_cast<int64_t>(at));
    }
  }
  ReportFillEnds(readers, signed_ends, origins, out);
  WP_RETURN_IF_ERROR(CheckProofsFollowEveryFill(readers, proof_labels, origins, &out->clock));
  return RecheckWaveVerdict(w, readers);
}

}  // namespace

WaveAudit AuditWaveVerdict(const VerifiedEntry& entry,
                           const std::map<proto::Bytes, std::vector<const VerifiedEntry*>>& sessions,
                           const proto::PublicKey& challenger,
                           const std::map<proto::Digest, StatusOr<SignedInventory>>* inventories) {
  WaveAudit out;
  out.sequence = entry.sequence;
  Status status = Check(entry, sessions, challenger, inventories, &out);
  if (!status.ok())
    out.status = status.WithContext("wave verdict (ledger entry " + std::to_string(entry.sequence) + ")");
  return out;
}

Status CheckListedOnce(const WaveAudit& wave, std::map<proto::Bytes, uint64_t>* listed) {
  for (const proto::Bytes& id : wave.member_sessions) {
    auto [at, inserted] = listed->emplace(id, wave.sequence);
    if (!inserted && at->second != wave.sequence) {
      return DataLossError("wave verdict (ledger entry " + std::to_string(wave.sequence) + "): member session " +
                           HexEncode(id.data(), id.size()) + " is listed by wave verdict (ledger entry " +
                           std::to_string(at->second) +
                           ") too: a challenger runs each member session in one wave run only");
    }
  }
  return Status::Ok();
}

}  // namespace wipeproof
