// The messages a node signs (wipe.capnp DeviceFillNotice, FillReport, TranscriptDigest), built in one place
// for every prover: the agent (prover/agent) and the cheating agent of the selftest and the tests
// (adversary/). What each field means is in wipe.capnp; what a prover puts in it is its own
// business (the honest agent reports what it filled; a cheating one may not).
//
//   DeviceFillNotice: sessionId, orderDigest = BLAKE2b-256(order payload), nodeKeyId, deviceIndex,
//               the device's DeviceFill, finishedAtUnixUs.
//   FillReport: sessionId, orderDigest = BLAKE2b-256(order payload), nodeKeyId, one DeviceFill per
//               planned device in the order's order, fillMicros, finishedAtUnixUs.
//   TranscriptDigest: sessionId, digest (proto/transcript.h), roundCount, verdictDigest =
//               BLAKE2b-256(verdict payload), nodeKeyId, signedAtUnixUs.
//
// Errors: those of SignMessage (proto/signing.h): INVALID_ARGUMENT when the message exceeds its
// size limit (a fill report of 1 MiB, e.g. from huge notes).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/crypto.h"
#include "proto/signing.h"

namespace wipeproof::proto {

// One DeviceFill of a fill report. Units: labels for first_label and label_count, bytes for the
// byte counts, microseconds for fill_micros.
struct DeviceFillFacts {
  std::string selector;
  uint64_t first_label = 0;
  uint64_t label_count = 0;
  uint64_t bytes_held = 0;
  uint64_t reserve_bytes = 0;
  uint64_t bytes_held_by_others = 0;
  uint64_t total_bytes = 0;
  uint64_t fill_micros = 0;
  std::string note;  // empty unless the device is short
};

StatusOr<SignedEnvelope> SignDeviceFillNotice(ByteView order_payload, ByteView session_id, uint16_t device_index,
                                              const DeviceFillFacts& device, int64_t finished_at_unix_us,
                                              const KeyPair& node_key);

StatusOr<SignedEnvelope> SignFillReport(ByteView order_payload, ByteView session_id,
                                        const std::vector<DeviceFillFacts>& devices, uint64_t fill_micros,
                                        int64_t finished_at_unix_us, const KeyPair& node_key);

StatusOr<SignedEnvelope> SignTranscriptDigest(ByteView session_id, const Digest& transcript_digest,
                                              uint32_t round_count, ByteView verdict_payload, int64_t signed_at_unix_us,
                                              const KeyPair& node_key);

}  // namespace wipeproof::proto
