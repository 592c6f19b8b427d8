// `ledger audit` of a wave verdict (wipe.capnp WaveVerdict, a ledger entry of no session): it
// verifies under the pinned challenger key; each member it names is a session of the export whose
// final verdict has the digest, session id and node the wave verdict lists; and its pass, bound and
// statement are what the members' verdicts give, recomputed by the code that built it
// (challenger/session/wave_verdict.h RecheckWaveVerdict). When every member passed, each
// member's first proof round was sent after the last fill of every member (report or notice): the
// wave's proof rounds follow its last fill. Each member's rounds and fills are offsets from its
// order on the challenger's monotonic clock; the orders are placed on one clock by
//   - the wall clock: each verdict's orderSentAtUnixUs (the node-signed transcript names the
//     verdict; the delegated order's lifetime bounds it), within kWaveSendToleranceUs plus
//     0.1% of the time from the member's order to that fill (the wall clock may be slewed against
//     the monotonic one the offsets are measured on); always; and, when the wave verdict states it,
//   - the wave clock: the wave verdict's orderSentAfterWaveUs (each member's order after the wave's
//     first, on the monotonic clock of the one process that ran them all; signed by the challenger
//     alone), which must agree with the wall clock on each member's order relative to the first
//     member's within kWaveSendToleranceUs, and then places the proof rounds within
//     kWaveClockToleranceUs.
// WaveAudit::clock names the finer clock checked. A member session listed by two wave verdicts of
// one export is CheckListedOnce's to find.
//
// Thread-safety: a pure function.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "challenger/ledger/ledger_verify.h"
#include "challenger/session/declared_node.h"
#include "common/status.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

// Microseconds: how far a member's first proof round may seem to precede the wave's last fill
// (clocks read on different threads a few microseconds apart, slew): far less than relabelling
// any memory takes.
inline constexpr int64_t kWaveSendToleranceUs = 50'000;
// Microseconds: the same on the wave's one monotonic clock, where only its granularity (and the
// rounding of each offset to whole microseconds) separates the members' readings.
inline constexpr int64_t kWaveClockToleranceUs = 1'000;
// WaveAudit::clock's values.
inline constexpr char kWaveClockName[] = "wave clock";
inline constexpr char kWallClockName[] = "wall clock";

struct WaveAudit {
  uint64_t sequence = 0;  // the wave verdict's ledger entry
  std::string wave;       // its wave name ("" when it does not verify)
  bool pass = false;
  bool bound_stated = false;
  std::string statement;
  size_t members = 0;
  // The finer clock the members were placed on: kWaveClockName (orderSentAfterWaveUs, after the
  // wall clock and the two clocks' agreement) or kWallClockName (orderSentAtUnixUs alone, a wave
  // verdict written before the field); "" when the check was not reached.
  std::string clock;
  // The member sessions it lists (sessionIds, in its order), once its signature verified.
  std::vector<proto::Bytes> member_sessions;
  // Reported, not checked: the order states no clock-skew allowance (the agent's --clock_skew_us is
  // its own setting), so a node's clock anchors the wave placement only as a reported deviation.
  // Per member with a fill report and a fill time (fillMicros > 0; else in no_fill_time): the challenger's stated fill
  // end on the wall clock (orderSentAtUnixUs + fillMicros) minus the node-signed FillReport.finishedAtUnixUs, in
  // microseconds (the report's transit plus the two clocks' offset; the session audit verifies the
  // report's signature). Spread: max minus min across members of the same difference with each
  // member's order on the clock the members are placed on (wave clock: orderSentAfterWaveUs), so a
  // member placed X later than it ran shows X more than the others (with the nodes' clocks in step).
  std::vector<std::pair<std::string, int64_t>> fill_end_lag_us;
  std::optional<int64_t> fill_end_spread_us;  // with two or more members in fill_end_lag_us
  std::string fill_end_spread_clock;          // the clock of fill_end_spread_us: kWaveClockName or kWallClockName
  // Members with a node-signed fill report whose verdict states no fill time (fillMicros 0: the
  // session failed before the report reached the challenger): no lag is reported for them.
  std::vector<std::string> no_fill_time;
  Status status;  // OK: every check held; else the first that did not
};

// `sessions`: every session's entries in ledger order, by session id. Never fails as a function: a
// failed check is WaveAudit::status (DATA_LOSS for a signature that does not verify or facts that
// differ; NOT_FOUND for a member session the export does not hold).
// `inventories` (may be null): the signed inventories the export carries, by digest (session_audit.h
// AuditKeys). A wave verdict that says complete must list exactly the nodes the signed inventory its
// members' delegations name declares for the wave (a failed member left out would make the rest a
// complete, passing wave).
WaveAudit AuditWaveVerdict(const VerifiedEntry& entry,
                           const std::map<proto::Bytes, std::vector<const VerifiedEntry*>>& sessions,
                           const proto::PublicKey& challenger,
                           const std::map<proto::Digest, StatusOr<SignedInventory>>* inventories = nullptr);

// OK when no member session of `wave` is in `listed` under another wave verdict; adds them (session
// id -> the wave verdict's ledger sequence). An honest challenger runs each member session in one
// wave run only, so a session listed by two wave verdicts is DATA_LOSS naming both entries.
Status CheckListedOnce(const WaveAudit& wave, std::map<proto::Bytes, uint64_t>* listed);

}  // namespace wipeproof
