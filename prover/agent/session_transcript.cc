#include "prover/agent/session_transcript.h"

#include <capnp/message.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <system_error>

#include "proto/codec.h"

namespace wipeproof {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Hashed rounds kept for their buffers: one in use by the core, one queued, one being hashed.
constexpr size_t kMaxSpareRounds = 2;

size_t BytesOf(const AnsweredRound& round) { return round.round_canonical.size() + round.labels.size(); }

}  // namespace

SessionTranscript::SessionTranscript(const SessionId& session_id, bool use_thread, RoundStagesSink stages)
    : session_id_(session_id), stages_(std::move(stages)), no_thread_(!use_thread) {
  // Started with the session, so that its first rounds never wait for a thread to start.
  std::lock_guard<std::mutex> lock(mu_);
  if (!no_thread_) StartWorkerLocked();
}

SessionTranscript::~SessionTranscript() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  queued_.notify_all();
  if (worker_.joinable()) worker_.join();
}

Status SessionTranscript::AddOrder(proto::ByteView order_payload) {
  std::lock_guard<std::mutex> lock(hash_mu_);
  return hasher_.AddOrder(order_payload);
}

Status SessionTranscript::AddNotice(uint16_t device_index, proto::ByteView notice_payload) {
  std::lock_guard<std::mutex> lock(hash_mu_);
  return hasher_.AddNotice(device_index, notice_payload);
}

Status SessionTranscript::AddReport(proto::ByteView report_payload) {
  std::lock_guard<std::mutex> lock(hash_mu_);
  return hasher_.AddReport(report_payload);
}

void SessionTranscript::AddRound(AnsweredRound& round) {
  std::unique_lock<std::mutex> lock(mu_);
  ++rounds_queued_;
  if (no_thread_) {
    lock.unlock();
    Status hashed = Hash(round);  // `round` keeps its buffers
    lock.lock();
    if (!hashed.ok() && error_.ok()) error_ = hashed;
    return;
  }
  // Backpressure: wait while the worker is a full queue behind (one round always fits).
  drained_.wait(lock, [this] { return queue_.empty() || queued_bytes_ < kMaxQueuedBytes; });
  queued_bytes_ += BytesOf(round);
  max_queued_bytes_ = std::max(max_queued_bytes_, queued_bytes_);
  queue_.push_back(std::move(round));
  round = AnsweredRound();
  if (!spare_.empty()) {
    round = std::move(spare_.back());
    spare_.pop_back();
  }
  lock.unlock();
  queued_.notify_one();
}

Status SessionTranscript::Error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

StatusOr<std::pair<proto::Digest, uint32_t>> SessionTranscript::Finish() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    drained_.wait(lock, [this] { return queue_.empty() && !hashing_; });
    if (!error_.ok()) return error_;
  }
  std::lock_guard<std::mutex> lock(hash_mu_);
  WP_ASSIGN_OR_RETURN(proto::Digest digest, hasher_.Finish());
  return std::make_pair(digest, hasher_.round_count());
}

uint32_t SessionTranscript::rounds_queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rounds_queued_;
}

size_t SessionTranscript::max_queued_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return max_queued_bytes_;
}

void SessionTranscript::StartWorkerLocked() {
  try {
    worker_ = std::thread([this] { Work(); });
  } catch (const std::system_error& e) {
    no_thread_ = true;
    LOG(WARNING) << "no transcript thread (" << e.what() << "): rounds are hashed as they are answered";
  }
}

void SessionTranscript::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    queued_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    AnsweredRound round = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes_ -= BytesOf(round);
    hashing_ = true;
    lock.unlock();
    Status hashed = Hash(round);
    lock.lock();
    hashing_ = false;
    if (!hashed.ok() && error_.ok()) error_ = hashed;
    if (spare_.size() < kMaxSpareRounds) spare_.push_back(std::move(round));
    drained_.notify_all();
  }
}

Status SessionTranscript::Hash(AnsweredRound& round) {
  // An exception (out of memory) is this round's hashing error: on the worker it would end the process.
  try {
    return HashOrThrow(round);
  } catch (const std::exception& e) {
    return InternalError("round " + std::to_string(round.round_index) + ": hashing: " + e.what());
  } catch (const kj::Exception& e) {
    return InternalError("round " + std::to_string(round.round_index) + ": hashing: " + e.getDescription().cStr());
  }
}

Status SessionTranscript::HashOrThrow(AnsweredRound& round) {
  const int64_t t0 = stages_ ? NowNs() : 0;
  {
    // The answer as AnswerRound wrote it, rebuilt: its canonical encoding is the one the challenger
    // hashes from the answer it received.
    capnp::MallocMessageBuilder message(static_cast<unsigned>(round.labels.size() / 8 + 64));
    auto answer = message.initRoot<proto::RoundAnswer>();
    answer.setSessionId(proto::AsView(session_id_));
    answer.setRoundIndex(round.round_index);
    answer.setLabels(kj::arrayPtr(round.labels.data(), round.labels.size()));
    answer.setAgentMicros(round.agent_micros);
    auto answer_bytes = proto::EncodeCanonical(answer.asReader());
    if (!answer_bytes.ok()) return answer_bytes.status().WithContext("round " + std::to_string(round.round_index));
    std::lock_guard<std::mutex> lock(hash_mu_);
    Status added = hasher_.AddRoundBytes(proto::AsView(round.round_canonical), proto::AsView(*answer_bytes));
    if (!added.ok()) return added.WithContext("round " + std::to_string(round.round_index));
  }
  if (stages_) {
    round.stages.transcript_ns = NowNs() - t0;
    stages_(round.stages);
  }
  return Status::Ok();
}

}  // namespace wipeproof
