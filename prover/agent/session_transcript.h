// The agent's transcript of one session (proto/transcript.h: the digest it signs in `finish`),
// its rounds hashed on a thread of their own (issue 23, "Fast rounds").
//
// Why a thread: a round's transcript item is its canonical bytes and its answer's, 40 bytes per
// challenged label (q = 256: 10.5 KiB, 17 us of BLAKE2b on the reference VM; a node of 8 GPUs and
// host memory at the same q: 94 KiB, ~150 us). Hashed on the thread that answers rounds, after the
// answer went out, it still held up the next round whenever that arrived sooner than the hash
// ended: on every fast network, and always for a node of many devices (docs/benchmarks.md "The
// agent's transcript on a thread of its own"). Here the answering thread only hands the round
// over (a move and a wake-up); the rounds are hashed in order on the worker, and `finish` waits
// for the last one before it signs the digest, so the digest is exactly what hashing each round
// at once would give.
//
// Bounded: at most kMaxQueuedBytes of rounds (or one round, whatever its size) wait for the
// worker; beyond that AddRound waits until the worker has caught up, so a challenger sending rounds
// faster than they hash slows its own rounds and never grows the agent's memory. Without a thread
// (AgentConfig::transcript_thread off, or one could not be started) every round is hashed in
// AddRound itself, on the answering thread after the answer went out.
//
// The thread wants a core nothing else uses (spare_core.h): on the 2-core reference VM, where the
// client, the agent and this thread share two cores, it made rounds over TCP slower, so `serve
// --transcript_thread=auto` starts it only with at least 8 hardware threads.
//
// Errors: hashing a round fails only on a bug (an answer that cannot be put in canonical form, a
// round after Finish); the worker keeps the first such error, and Error() and Finish() return it,
// so the session ends at its next round or its finish (agent_core.h), one round later than when
// the hash ran on the answering thread.
//
// Memory: the queue holds at most kMaxQueuedBytes of rounds and one more round, besides the round
// being hashed and the buffers of two hashed rounds kept for reuse; a round is at most
// proto::kMaxRoundAnswerBytes of labels plus its indices, so about 130 MiB at the very worst (an order
// with q near 2^17 per device), a few hundred KiB for an 8-GPU node at q = 256.
//
// Thread-safety: thread-safe. The worker is started with the transcript (use_thread) and stopped by
// the destructor, which drops rounds not yet hashed (their session ended without a finish).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/status.h"
#include "proto/crypto.h"
#include "proto/transcript.h"
#include "prover/agent/round_stages.h"
#include "prover/agent/seen_sessions.h"

namespace wipeproof {

// One answered round as the transcript needs it once its answer went out (the answer's memory is
// then the RPC layer's): the round's canonical bytes and the answer's fields.
struct AnsweredRound {
  proto::Bytes round_canonical;
  std::vector<uint8_t> labels;  // q * 32 bytes, in the answer's order
  uint32_t round_index = 0;
  uint32_t agent_micros = 0;
  RoundStages stages;  // its checks, lookups and answer times; transcript_ns is set when hashed
};

class SessionTranscript {
 public:
  // Rounds waiting for the worker, in bytes, before AddRound waits (one round always fits).
  static constexpr size_t kMaxQueuedBytes = 16u << 20;

  // `session_id` goes into each answer as rebuilt for hashing. `use_thread`: hash rounds on the
  // worker (AgentConfig::transcript_thread); false: in AddRound itself. `stages`, when set, is called
  // with each round's RoundStages, its transcript_ns the hash's own time (nanoseconds), where the
  // hash ran (the worker, or AddRound's caller).
  SessionTranscript(const SessionId& session_id, bool use_thread, RoundStagesSink stages);
  ~SessionTranscript();
  SessionTranscript(const SessionTranscript&) = delete;
  SessionTranscript& operator=(const SessionTranscript&) = delete;

  // As proto::TranscriptHasher (its order rules and errors); they wait for a round being hashed.
  Status AddOrder(proto::ByteView order_payload);
  Status AddNotice(uint16_t device_index, proto::ByteView notice_payload);
  Status AddReport(proto::ByteView report_payload);

  // Takes `round` for the worker and returns (waits only while kMaxQueuedBytes are queued), or
  // hashes it at once without a worker. Leaves in `round` buffers of an earlier round, their
  // capacity kept for the next (a fresh 8-64 KiB allocation per round cost more than the hash here:
  // freed memory went back to the system and came back as page faults).
  void AddRound(AnsweredRound& round);
  // The first error of a round's hash so far, or OK. Does not wait.
  Status Error() const;
  // Waits until every round queued has been hashed, then the transcript digest and its round count.
  // Errors: the first round's hashing error, or proto::TranscriptHasher::Finish's.
  StatusOr<std::pair<proto::Digest, uint32_t>> Finish();

  uint32_t rounds_queued() const;   // rounds given to AddRound so far
  size_t max_queued_bytes() const;  // the most bytes of rounds that waited for the worker at once

 private:
  void Work();
  // Rebuilds the answer, puts it in canonical form and adds the round; hash_mu_ must not be held.
  // An exception (out of memory) comes back as INTERNAL.
  Status Hash(AnsweredRound& round);
  Status HashOrThrow(AnsweredRound& round);
  void StartWorkerLocked();

  const SessionId session_id_;
  const RoundStagesSink stages_;

  mutable std::mutex hash_mu_;  // the hasher (never held while waiting for mu_)
  proto::TranscriptHasher hasher_;

  mutable std::mutex mu_;            // the queue and the worker's state
  std::condition_variable queued_;   // a round queued, or stop
  std::condition_variable drained_;  // a round hashed
  std::deque<AnsweredRound> queue_;
  std::vector<AnsweredRound> spare_;  // hashed rounds whose buffers AddRound hands back
  size_t queued_bytes_ = 0;
  size_t max_queued_bytes_ = 0;
  bool hashing_ = false;  // the worker holds a round taken off the queue
  bool stop_ = false;
  bool no_thread_ = false;  // no worker (not asked for, or starting it failed): hash in AddRound
  uint32_t rounds_queued_ = 0;
  Status error_;
  std::thread worker_;
};

}  // namespace wipeproof
