// The wave verdict (wipe.capnp WaveVerdict): once every member of a wave run has its verdict, the
// challenger signs one statement for the wave's planned memory taken together (verdict.h
// SummarizeWaveBound: the joint bound over every member's devices, stated only for a complete wave
// whose members all passed and state their own bound). A neighbour's memory is only ruled out as a
// hiding place when it was wiped in the same wave (docs/threat-model.md "The claim").
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "proto/crypto.h"
#include "proto/signing.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

// One node of the wave run: its session's signed verdict, or none when no session happened (its
// plan failed, or it failed before any order).
struct WaveMemberVerdict {
  std::string node;
  bool has_verdict = false;
  proto::SignedEnvelope verdict;  // signed by the challenger
  // Microseconds on the monotonic clock every member's session ran on (SessionOutcome::
  // order_sent_monotonic_us) when its order went out; -1: not known.
  int64_t order_sent_monotonic_us = -1;
};

// The wave verdict for `wave`: pass when every node has a verdict and every verdict passed;
// complete when `declared_complete` (the inventory says so and every node of the wave was in the
// run) and every node has a verdict; the statement and bound from SummarizeWaveBound over the
// members' verdicts. Members without a verdict are not listed in sessionIds/nodeNames/
// verdictDigests. When every listed member knows its order_sent_monotonic_us, orderSentAfterWaveUs
// holds each one's order time after the earliest (the wave's origin on that one clock); else it is
// empty and an audit places the members by their wall-clock orderSentAtUnixUs. Errors:
// INVALID_ARGUMENT when a verdict does not verify under `challenger`.
StatusOr<proto::SignedEnvelope> SignWaveVerdict(const std::string& wave, bool declared_complete,
                                                const std::vector<WaveMemberVerdict>& members,
                                                const proto::KeyPair& challenger, int64_t issued_at_unix_us);

// For `ledger audit`: OK when `wave` (a verified WaveVerdict) states what its member verdicts give
// (pass, the bound and the statement recomputed by SummarizeWaveBound); `members` are the final
// verdicts of the sessions it names, in its order. DATA_LOSS naming the first field that differs.
Status RecheckWaveVerdict(proto::WaveVerdict::Reader wave, const std::vector<proto::Verdict::Reader>& members);

}  // namespace wipeproof
