// Why a session failed, as a typed value: the wire FailureReason plus the device,
// round, label index, expected and received label where they apply. Mirrors proto::Failure.
//
// Text from the agent. Everything the agent controls that can end up in a failure text, and so in a
// verdict, the abort reason, the logs or the ledger (RPC error descriptions, a Status the agent
// sent, device notes, selectors, ...), passes through AgentText() where it enters: at most
// kMaxAgentTextBytes, valid UTF-8, no control characters. A failure's whole text is held to
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

#include "proto/wipe.capnp.h"

namespace wipeproof {

// Longest piece of agent text kept (bytes, the cut notice included).
inline constexpr size_t kMaxAgentTextBytes = 1024;
// Longest failure text kept (bytes, the cut notice included): a few pieces of agent text and ours.
inline constexpr size_t kMaxFailureTextBytes = 4096;

// `text` made safe to show and to sign: bytes that are not valid UTF-8 become U+FFFD, control
// characters become "\xNN" (C0 and DEL) or "\u00NN" (C1), and when the result would exceed `limit`
// bytes it is cut on a character boundary and ends in "… (N bytes cut)", N counting the bytes of
// `text` left out; the result, notice included, is at most max(limit, 64) bytes. Idempotent: text
// that already passed (with the same or a smaller limit) comes back unchanged.
std::string AgentText(std::string_view text, size_t limit = kMaxAgentTextBytes);

// Lowercase hex of agent-supplied bytes, at most `limit` bytes shown, then "… (N bytes)".
std::string AgentHex(const uint8_t* data, size_t size, size_t limit = 64);

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
  // `text` is held to kMaxFailureTextBytes (AgentText).
  static SessionFailure Of(proto::FailureReason reason, std::string_view text) {
    SessionFailure f;
    f.reason = reason;
    f.text = AgentText(text, kMaxFailureTextBytes);
    return f;
  }

  void WriteTo(proto::Failure::Builder out) const;
  // "wrongLabel: device host, round 3, label 1234: expected 1f.., received 00..: <text>".
  std::string Describe() const;
};

// "wrongLabel", "lateRound", ... as in wipe.capnp; "reason(N)" for unknown values.
std::string FailureReasonName(proto::FailureReason reason);

}  // namespace wipeproof
