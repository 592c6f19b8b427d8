// The session transcript digest (wipe.capnp TranscriptDigest.digest), computed the same way by
// the agent (over what it received and sent) and the challenger (over what it sent and got):
//
//   digest = BLAKE2b-256( "wipeproof/v2/transcript" (23 bytes)
//                         || item(1, order payload)
//                         || for each device in index order with a notice: item(6, DeviceFillNotice payload)
//                         || item(2, fill report payload)
//                         || item(7, rounds digest)
//                         || item(5, round count as UInt32 little-endian) )
//   rounds digest = BLAKE2b-256( for each round in order: item(3, ChallengeRound) || item(4, RoundAnswer) )
//   item(tag, bytes) = tag (1 byte) || length of bytes (UInt64 little-endian) || bytes
//
// Why this shape: in protocol v2 a device is challenged as soon as its fill notice arrives, while
// other devices still fill, so notices, rounds and the report interleave in time and the two sides
// may see a notice and a round cross on the wire in different orders. Each kind of item therefore
// has a fixed place (notices by device index, the report once, rounds in round order), and the
// digest is the same on both sides whatever the interleaving. Rounds and answers are hashed in
// canonical form, so the bytes do not depend on how either side built or received them.
//
// Thread-safety: a TranscriptHasher is used by one thread at a time.
#pragma once

#include <sodium.h>

#include <cstdint>
#include <map>

#include "common/status.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::proto {

inline constexpr char kTranscriptContext[] = "wipeproof/v2/transcript";

class TranscriptHasher {
 public:
  // REQUIRES: AddOrder first; then AddNotice, AddReport and AddRound in any interleaving (rounds in
  // round order, each device's notice and the report once); then Finish once. A call out of this
  // order returns FAILED_PRECONDITION and leaves the hasher unchanged.
  TranscriptHasher();

  Status AddOrder(ByteView order_payload);
  // The DeviceFillNotice payload of device `device_index`. Errors: FAILED_PRECONDITION when that
  // device already has one.
  Status AddNotice(uint16_t device_index, ByteView notice_payload);
  Status AddReport(ByteView report_payload);
  // Errors: INVALID_ARGUMENT if either reader is malformed (unvalidated RPC input).
  Status AddRound(ChallengeRound::Reader round, RoundAnswer::Reader answer);
  // The same from both messages' canonical encodings (proto/codec.h EncodeCanonical), for a caller
  // that already holds them (the agent hashes a round after its answer went out). The bytes are
  // hashed as given: passing anything but the canonical encodings yields a transcript no one else
  // reproduces.
  Status AddRoundBytes(ByteView round_canonical, ByteView answer_canonical);
  // Errors: FAILED_PRECONDITION without an order and a report, or after Finish.
  StatusOr<Digest> Finish();

  uint32_t round_count() const { return round_count_; }
  size_t notice_count() const { return notices_.size(); }

 private:
  static void AddItem(crypto_generichash_state* state, uint8_t tag, ByteView bytes);

  crypto_generichash_state state_;   // context, order, then (at Finish) the rest
  crypto_generichash_state rounds_;  // the rounds digest, streamed
  bool have_order_ = false;
  bool have_report_ = false;
  bool done_ = false;
  std::map<uint16_t, Bytes> notices_;  // device index -> notice payload
  Bytes report_;
  uint32_t round_count_ = 0;
};

}  // namespace wipeproof::proto
