// Why a session failed, as a typed value: the wire FailureReason plus the device,
// round, label index, expected and received label where they apply. Mirrors proto::Failure.
//
// Text from the agent. Everything the agent controls that can end up in a failure text, and so in a
// verdict, the abort reason, the logs or the ledger (RPC error descriptions, a Status the agent
// sent, device notes, selectors, ...), passes through PeerText() (common/peer_text.h) where it
// enters: at most kMaxPeerTextBytes, valid UTF-8, no control characters. A failure's whole text is held to
// kMaxFailureTextBytes as well (SessionFailure::Of), so a verdict's size never depends on what the
// agent wrote.
//
// Thread-safety: a value; pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/peer_text.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

// Longest failure text kept (bytes, the cut notice included): a few pieces of agent text and ours.
inline constexpr size_t kMaxFailureTextBytes = 4096;

struct SessionFailure {
  proto::FailureReason reason = proto::FailureReason::NONE;
  std::string text;    // human-readable detail
  std::string device;  // selector, when one device is concerned
  bool has_round = false;
  uint32_t round = 0;
  bool has_label = false;
  uint64_t label_index = 0;       // global label index
  std::vector<uint8_t> expected;  // 32 bytes (wrongLabel)
  std::vector<uint8_t> received;  // 32 bytes, or what arrived (wrongLabel)

  bool failed() const { return reason != proto::FailureReason::NONE; }
  // `text` is held to kMaxFailureTextBytes (PeerText).
  static SessionFailure Of(proto::FailureReason reason, std::string_view text) {
    SessionFailure f;
    f.reason = reason;
    f.text = PeerText(text, kMaxFailureTextBytes);
    return f;
  }

  void WriteTo(proto::Failure::Builder out) const;
  // "wrongLabel: device host, round 3, label 1234: expected 1f.., received 00..: <text>".
  std::string Describe() const;
};

// "wrongLabel", "lateRound", ... as in wipe.capnp; "reason(N)" for unknown values.
std::string FailureReasonName(proto::FailureReason reason);

}  // namespace wipeproof
