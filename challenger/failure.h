// Why a session failed, as a typed value (style.md 7): the wire FailureReason plus the device,
// round, label index, expected and received label where they apply. Mirrors proto::Failure.
//
// Thread-safety: a value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/wipe.capnp.h"

namespace wipeproof {

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
  static SessionFailure Of(proto::FailureReason reason, std::string text) {
    SessionFailure f;
    f.reason = reason;
    f.text = std::move(text);
    return f;
  }

  void WriteTo(proto::Failure::Builder out) const;
  // "wrongLabel: device host, round 3, label 1234: expected 1f.., received 00..: <text>".
  std::string Describe() const;
};

// "wrongLabel", "lateRound", ... as in wipe.capnp; "reason(N)" for unknown values.
std::string FailureReasonName(proto::FailureReason reason);

}  // namespace wipeproof
