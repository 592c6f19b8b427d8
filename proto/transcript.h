// The session transcript digest (wipe.capnp TranscriptDigest.digest), computed the same way by
// the agent (over what it received and answered) and the challenger (over what it sent and got):
//
//   BLAKE2b-256( "wipeproof/v1/transcript" (23 bytes)
//                || item(1, order payload) || item(2, fill report payload)
//                || for each round: item(3, ChallengeRound) || item(4, RoundAnswer)
//                || item(5, round count as UInt32 little-endian) )
//   item(tag, bytes) = tag (1 byte) || length of bytes (UInt64 little-endian) || bytes
//
// Rounds and answers are hashed in canonical form, so the bytes do not depend on how either side
// built or received them.
//
// Thread-safety: a TranscriptHasher is used by one thread at a time.
#pragma once

#include <sodium.h>

#include <cstdint>

#include "common/status.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::proto {

inline constexpr char kTranscriptContext[] = "wipeproof/v1/transcript";

class TranscriptHasher {
 public:
  // REQUIRES: call AddOrder, AddReport, then AddRound per round in order, then Finish once.
  // A call out of this order returns FAILED_PRECONDITION and leaves the hasher unchanged.
  TranscriptHasher();

  Status AddOrder(ByteView order_payload);
  Status AddReport(ByteView report_payload);
  // Errors: INVALID_ARGUMENT if either reader is malformed (unvalidated RPC input).
  Status AddRound(ChallengeRound::Reader round, RoundAnswer::Reader answer);
  StatusOr<Digest> Finish();

  uint32_t round_count() const { return round_count_; }

 private:
  enum class Stage { kOrder, kReport, kRounds, kDone };
  void AddItem(uint8_t tag, ByteView bytes);

  crypto_generichash_state state_;
  Stage stage_ = Stage::kOrder;
  uint32_t round_count_ = 0;
};

}  // namespace wipeproof::proto
