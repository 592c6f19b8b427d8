#include "adversary/cheating_agent.h"

#include <capnp/message.h>
#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "kernels/region_labeler.h"
#include "proto/codec.h"
#include "proto/label_wire.h"
#include "proto/node_messages.h"
#include "proto/rpc_status.h"
#include "proto/session_rules.h"
#include "proto/validate.h"

namespace wipeproof::adversary {

namespace {

using proto::kLabelBytes;

kj::Exception Refusal(const Status& s) { return proto::StatusToException(s); }

// Labels [first, first + count) of a session.
Status Label(const RegionSpec& session, uint64_t first, uint64_t count, int threads, uint8_t* out) {
  RegionSpec region = session;
  region.first = first;
  region.count = count;
  RegionLabelOptions options;
  options.threads = threads;
  return LabelRegion(region, out, options);
}

// Label `g` of a device's range [first, first + count) recomputed from its whole chunk (a region of
// one label would be a partial chunk, which in 192 is another graph).
Status ChunkLabel(const RegionSpec& session, uint64_t first, uint64_t count, uint64_t g, uint8_t* out) {
  const uint64_t m = session.chunk_labels;
  const uint64_t chunk_first = first + (g - first) / m * m;
  const uint64_t chunk_count = std::min<uint64_t>(m, first + count - chunk_first);
  std::vector<uint8_t> chunk(chunk_count * kLabelBytes);
  WP_RETURN_IF_ERROR(Label(session, chunk_first, chunk_count, 1, chunk.data()));
  std::memcpy(out, chunk.data() + (g - chunk_first) * kLabelBytes, kLabelBytes);
  return Status::Ok();
}

RegionSpec SessionOf(LabelFormat format, const uint8_t* seed, uint32_t m) {
  RegionSpec s;
  s.format = format;
  std::memcpy(s.seed, seed, kSeedBytes);
  s.chunk_labels = m;
  return s;
}

bool IsHuge(DeviationKind k) {
  return k == DeviationKind::kHugeRefusal || k == DeviationKind::kHugeException ||
         k == DeviationKind::kHugeDisconnect || k == DeviationKind::kHugeRoundError ||
         k == DeviationKind::kHugeFinishError;
}

}  // namespace

std::string HugeAgentText(size_t bytes) {
  std::string text = "agent text\n\x01\xff";
  if (text.size() < bytes) text.append(bytes - text.size(), 'x');
  return text;
}

CheatingAgent::CheatingAgent(AgentKeys keys, CheatingAgentOptions options)
    : keys_(std::move(keys)),
      options_(std::move(options)),
      deviation_(options_.deviation),
      memory_(options_.memory != nullptr ? options_.memory : &own_memory_),
      log_(options_.log != nullptr ? options_.log : &own_log_),
      rng_(options_.rng_seed) {}

int64_t CheatingAgent::NowMonotonicUs() const {
  return options_.sim_clock != nullptr ? options_.sim_clock->MonotonicMicros() : SystemClock().MonotonicMicros();
}

void CheatingAgent::Charge(int64_t micros) {
  if (options_.sim_clock != nullptr && micros > 0) options_.sim_clock->Advance(micros);
}

int64_t CheatingAgent::NowUnixUs() const {
  return options_.sim_clock != nullptr ? options_.sim_clock->UnixMicros() : SystemClock().UnixMicros();
}

void CheatingAgent::Release() {
  if (hasher_) memory_->earlier_seed = seed_;  // what 1(c) answers from in the next session
  devices_.clear();
  notices_.clear();
  host_store_.clear();
  relocated_into_.clear();
  hasher_.reset();
  order_.reset();
  session_id_.clear();
  previous_answer_.reset();
  previous_indices_.clear();
  rounds_answered_ = 0;
  log_->holds_memory = false;
}

void CheatingAgent::ApplyStorageDeviation() {
  const uint64_t chunk_bytes = uint64_t{m_} * kLabelBytes;
  auto drop = [&](Device& dev, uint64_t c, ChunkState state) {
    const uint64_t begin = c * chunk_bytes;
    const uint64_t end = std::min<uint64_t>(begin + chunk_bytes, dev.labels.size());
    std::memset(dev.labels.data() + begin, 0, end - begin);
    dev.chunks[c] = state;
  };
  // `count` distinct chunks of `dev`, contiguous (like a checkpoint region) or random.
  auto pick = [&](const Device& dev, uint64_t count, Placement placement) {
    const uint64_t n = dev.chunks.size();
    count = std::min(count, n);
    std::vector<uint64_t> picked;
    if (placement == Placement::kContiguous) {
      const uint64_t start = std::uniform_int_distribution<uint64_t>(0, n - count)(rng_);
      for (uint64_t c = start; c < start + count; ++c) picked.push_back(c);
    } else {
      std::vector<uint64_t> all(n);
      for (uint64_t c = 0; c < n; ++c) all[c] = c;
      std::shuffle(all.begin(), all.end(), rng_);
      picked.assign(all.begin(), all.begin() + static_cast<ptrdiff_t>(count));
    }
    return picked;
  };

  switch (deviation_.kind) {
    case DeviationKind::kEarlyFillReport:
      DropChunks(ChunkState::kPending);
      break;
    case DeviationKind::kDisconnectOnHidden:
      DropChunks(ChunkState::kHidden);
      break;
    case DeviationKind::kHideChunks:
      for (Device& dev : devices_) {
        if (deviation_.placement == Placement::kStrided) {
          const uint64_t stride = std::max<uint64_t>(1, deviation_.stride);
          for (uint64_t c = 0; c < dev.count / m_; c += stride) drop(dev, c, ChunkState::kHidden);
          continue;
        }
        const auto hidden = static_cast<uint64_t>(deviation_.hidden_fraction * dev.chunks.size() + 0.5);
        for (uint64_t c : pick(dev, hidden, deviation_.placement)) drop(dev, c, ChunkState::kHidden);
      }
      break;
    case DeviationKind::kUnderfillHeldByOthers:
    case DeviationKind::kUnderfillInflatedReserve: {
      Device& dev = devices_.back();
      const uint64_t n = dev.chunks.size();
      for (uint64_t c = n - std::min(deviation_.short_chunks, n); c < n; ++c) drop(dev, c, ChunkState::kHidden);
      break;
    }
    case DeviationKind::kDedup: {
      if (devices_.size() < 2) break;
      Device& dev = devices_[1];
      const uint64_t n = std::min(dev.chunks.size(), devices_[0].chunks.size());
      const uint64_t count = deviation_.dedup_chunks == 0 ? n : deviation_.dedup_chunks;
      for (uint64_t c : pick(dev, count, Placement::kContiguous)) {
        if (c < n) drop(dev, c, ChunkState::kDeduped);
      }
      break;
    }
    case DeviationKind::kRelocate: {
      const size_t from = devices_.size() - 1;
      Device& src = devices_[from];
      size_t host = devices_.size();
      for (size_t d = 0; d < devices_.size(); ++d) {
        if (devices_[d].selector == "host") host = d;
      }
      // Room for relocated chunks: unplanned host memory, or what the planned host region leaves
      // of the host's declared capacity (nothing, when the plan covers it all).
      uint64_t room = deviation_.host_free_bytes / chunk_bytes;
      if (host < devices_.size() && host != from) {
        const uint64_t held = devices_[host].count * kLabelBytes;
        room = devices_[host].capacity_bytes > held ? (devices_[host].capacity_bytes - held) / chunk_bytes : 0;
      }
      const uint64_t n = src.chunks.size();
      const uint64_t k = std::min(deviation_.relocate_chunks, n);
      uint64_t overwrite_next = host < devices_.size() && host != from ? devices_[host].chunks.size() : 0;
      for (uint64_t c = n - k; c < n; ++c) {
        const uint64_t begin = c * chunk_bytes;
        const uint64_t end = std::min<uint64_t>(begin + chunk_bytes, src.labels.size());
        if (room > 0) {
          --room;
        } else if (overwrite_next > 0) {
          // No room left: the chunk takes the place of one of the host's own labelled chunks.
          drop(devices_[host], --overwrite_next, ChunkState::kOverwritten);
          ++log_->overwritten_chunks;
        } else {
          drop(src, c, ChunkState::kOverwritten);  // nowhere to go
          continue;
        }
        host_store_[{from, c}].assign(src.labels.begin() + static_cast<ptrdiff_t>(begin),
                                      src.labels.begin() + static_cast<ptrdiff_t>(end));
        if (host < devices_.size() && host != from) relocated_into_[host] += end - begin;
        drop(src, c, ChunkState::kRelocated);
        ++log_->relocated_chunks;
      }
      break;
    }
    case DeviationKind::kRelocateToReserve: {
      if (devices_.size() < 2) break;
      Device& src = devices_[0];
      const Device& dst = devices_[1];
      const uint64_t dst_held = dst.count * kLabelBytes;
      uint64_t room = dst.capacity_bytes > dst_held ? (dst.capacity_bytes - dst_held) / chunk_bytes : 0;
      const uint64_t n = src.chunks.size();
      for (uint64_t c : pick(src, std::min(deviation_.relocate_chunks, n), Placement::kContiguous)) {
        if (room == 0) break;
        --room;
        const uint64_t begin = c * chunk_bytes;
        const uint64_t end = std::min<uint64_t>(begin + chunk_bytes, src.labels.size());
        host_store_[{0, c}].assign(src.labels.begin() + static_cast<ptrdiff_t>(begin),
                                   src.labels.begin() + static_cast<ptrdiff_t>(end));
        drop(src, c, ChunkState::kRelocated);
        ++log_->relocated_chunks;
        relocated_into_[1] += end - begin;
      }
      break;
    }
    case DeviationKind::kPartialChunkProbe:
      // A trailing partial chunk of a 192 plan would be a shallow graph: cheap to recompute, so
      // this adversary would not store it. The challenger must never plan one (7e).
      for (Device& dev : devices_) {
        if (dev.count % m_ != 0) drop(dev, dev.chunks.size() - 1, ChunkState::kHidden);
      }
      break;
    default:
      break;
  }
}

void CheatingAgent::DropChunks(ChunkState state) {
  const uint64_t chunk_bytes = uint64_t{m_} * kLabelBytes;
  for (Device& dev : devices_) {
    const uint64_t n = dev.chunks.size();
    const auto count = std::min<uint64_t>(n, static_cast<uint64_t>(deviation_.hidden_fraction * n + 0.5));
    std::vector<uint64_t> all(n);
    for (uint64_t c = 0; c < n; ++c) all[c] = c;
    std::shuffle(all.begin(), all.end(), rng_);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t c = all[i];
      // Pending chunks keep their labels (they are written later); dropped ones are gone.
      if (state != ChunkState::kPending) {
        const uint64_t begin = c * chunk_bytes;
        const uint64_t end = std::min<uint64_t>(begin + chunk_bytes, dev.labels.size());
        std::memset(dev.labels.data() + begin, 0, end - begin);
      }
      dev.chunks[c] = state;
    }
  }
}

kj::Promise<void> CheatingAgent::startSession(StartSessionContext context) {
  if (options_.fill_gate && options_.timer != nullptr && !options_.fill_gate()) {
    gated_ = true;
    return options_.timer->afterDelay(100 * kj::MICROSECONDS).then([this, context]() mutable {
      return startSession(context);
    });
  }
  gated_ = false;
  if (log_->orders++ == 0) log_->first_order_at = std::chrono::steady_clock::now();
  if (deviation_.kind == DeviationKind::kRefuseOrder) {
    return Refusal(FailedPreconditionError(deviation_.note.empty() ? "busy: test refusal" : deviation_.note));
  }
  if (IsHuge(deviation_.kind)) {
    const std::string huge = HugeAgentText(deviation_.huge_text_bytes);
    const kj::String text = kj::heapString(huge.data(), huge.size());
    switch (deviation_.kind) {
      case DeviationKind::kHugeRefusal:
        return Refusal(FailedPreconditionError(huge));
      case DeviationKind::kHugeException:
        return kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::heapString(text));
      case DeviationKind::kHugeDisconnect:
        return kj::Exception(kj::Exception::Type::DISCONNECTED, __FILE__, __LINE__, kj::heapString(text));
      default:
        break;
    }
  }
  if (hasher_) return Refusal(FailedPreconditionError("a session is already running"));
  auto order_or = proto::VerifyAndParse<proto::WipeOrder>(context.getParams().getOrder(), keys_.authority);
  if (!order_or.ok()) return Refusal(order_or.status());
  order_.emplace(*order_or);
  proto::WipeOrder::Reader order = order_->root();
  if (deviation_.kind == DeviationKind::kDisconnectMidFill) {
    deviation_.disconnect();
    return kj::NEVER_DONE;
  }

  const RegionSpec ordered = proto::SessionRegion(order);
  session_id_.assign(order.getSessionId().begin(), order.getSessionId().end());
  std::memcpy(seed_.data(), ordered.seed, kSeedBytes);
  format_ = ordered.format;
  m_ = ordered.chunk_labels;

  // Key material the labels are made from: the order's, unless adversary 6 substitutes its own.
  RegionSpec filled = ordered;
  if (deviation_.kind == DeviationKind::kWrongSeed) filled.seed[0] ^= 1;
  if (deviation_.kind == DeviationKind::kWrongFormat)
    filled.format = filled.format == LabelFormat::kC1 ? LabelFormat::k192 : LabelFormat::kC1;
  if (deviation_.kind == DeviationKind::kWrongChunkLabels) filled.chunk_labels = std::max<uint32_t>(1, m_ / 2);

  for (proto::DevicePlan::Reader plan : order.getDevices()) {
    Device d;
    d.selector = plan.getSelector().cStr();
    d.first = plan.getFirstLabel();
    d.count = plan.getLabelCount();
    d.capacity_bytes = plan.getCapacityBytes();
    d.allowed_reserve_bytes = plan.getAllowedReserveBytes();
    d.labels_per_round = plan.getLabelsPerRound();
    if (d.count % m_ != 0 || d.first % m_ != 0) ++log_->partial_chunk_ranges;
    d.labels.resize(d.count * kLabelBytes);
    d.chunks.assign((d.count + m_ - 1) / m_, ChunkState::kStored);
    Status status = Label(filled, d.first, d.count, options_.fill_threads, d.labels.data());
    if (!status.ok()) {
      Release();
      return Refusal(status);
    }
    devices_.push_back(std::move(d));
  }
  ApplyStorageDeviation();
  log_->unlabeled_bytes.clear();
  for (size_t i = 0; i < devices_.size(); ++i) {
    const Device& d = devices_[i];
    uint64_t labelled = relocated_into_.count(i) ? relocated_into_.at(i) : 0;
    for (uint64_t c = 0; c < d.chunks.size(); ++c) {
      if (d.chunks[c] != ChunkState::kStored) continue;
      labelled += std::min<uint64_t>(uint64_t{m_} * kLabelBytes, d.labels.size() - c * uint64_t{m_} * kLabelBytes);
    }
    log_->unlabeled_bytes.push_back(d.capacity_bytes > labelled ? d.capacity_bytes - labelled : 0);
  }
  log_->holds_memory = true;
  Charge(options_.timing.fill_us);
  if (deviation_.kind == DeviationKind::kLateFill) Charge(deviation_.advance_us);
  pending_ready_us_ = NowMonotonicUs() + deviation_.advance_us;

  std::vector<proto::DeviceFillFacts> facts;
  for (size_t i = 0; i < devices_.size(); ++i) {
    const Device& d = devices_[i];
    proto::DeviceFillFacts f;
    f.selector = d.selector;
    f.first_label = d.first;
    f.label_count = d.count;
    f.reserve_bytes = d.allowed_reserve_bytes;
    f.total_bytes = d.capacity_bytes;
    f.fill_micros = static_cast<uint64_t>(options_.timing.fill_us);
    const uint64_t short_labels = std::min(f.label_count, deviation_.short_chunks * m_);
    if (i + 1 == devices_.size() && deviation_.kind == DeviationKind::kUnderfillHeldByOthers) {
      f.label_count -= short_labels;
      f.bytes_held_by_others = short_labels * kLabelBytes;
      f.note = deviation_.note.empty() ? "memory held by other processes when the fill started" : deviation_.note;
    }
    if (i + 1 == devices_.size() && deviation_.kind == DeviationKind::kUnderfillInflatedReserve) {
      f.label_count -= short_labels;
      f.reserve_bytes += short_labels * kLabelBytes;
      f.note = deviation_.note.empty() ? "the driver needs a larger reserve on this device" : deviation_.note;
    }
    f.bytes_held = f.label_count * kLabelBytes;
    facts.push_back(std::move(f));
  }
  auto report = proto::SignFillReport(order_->bytes(), order.getSessionId(), facts,
                                      static_cast<uint64_t>(options_.timing.fill_us), NowUnixUs(), keys_.node);
  if (!report.ok()) {
    Release();
    return Refusal(report.status());
  }
  hasher_.emplace();
  (void)hasher_->AddOrder(order_->bytes());
  for (size_t i = 0; i < facts.size(); ++i) {
    proto::DeviceFillFacts noticed = facts[i];
    if (deviation_.kind == DeviationKind::kLateNoticeDiffers && i + 1 == facts.size())
      noticed.bytes_held += kLabelBytes;
    auto notice = proto::SignDeviceFillNotice(order_->bytes(), order.getSessionId(), static_cast<uint16_t>(i),
                                              noticed, NowUnixUs(), keys_.node);
    if (!notice.ok()) {
      Release();
      return Refusal(notice.status());
    }
    (void)hasher_->AddNotice(static_cast<uint16_t>(i), proto::AsView(notice->payload));
    notices_.push_back(*std::move(notice));
  }
  (void)hasher_->AddReport(proto::AsView(report->payload));
  // Byte 8 is the low byte of fillMicros (first word of the data section): still a well-formed report.
  if (deviation_.kind == DeviationKind::kTamperedReport) report->payload[8] ^= 1;
  proto::WriteEnvelope(*report, context.getResults().initReport());
  log_->filled_at = std::max(log_->filled_at, std::chrono::steady_clock::now());
  return kj::READY_NOW;
}

void CheatingAgent::AnswerLabel(size_t d, uint64_t g, uint8_t* out, std::set<std::pair<size_t, uint64_t>>* recompute) {
  const Device& dev = devices_[d];
  const uint64_t offset = g - dev.first;
  const uint64_t c = offset / m_;
  switch (dev.chunks[c]) {
    case ChunkState::kStored:
      std::memcpy(out, dev.labels.data() + offset * kLabelBytes, kLabelBytes);
      return;
    case ChunkState::kRelocated: {
      const std::vector<uint8_t>& chunk = host_store_.at({d, c});
      std::memcpy(out, chunk.data() + (offset - c * m_) * kLabelBytes, kLabelBytes);
      return;
    }
    case ChunkState::kOverwritten:
      std::memset(out, 0, kLabelBytes);
      return;
    case ChunkState::kPending:
      // Reported filled, but written only later: what is there before then is nothing.
      if (NowMonotonicUs() >= pending_ready_us_) {
        std::memcpy(out, dev.labels.data() + offset * kLabelBytes, kLabelBytes);
      } else {
        ++log_->hidden_chunks_challenged;
        std::memset(out, 0, kLabelBytes);
      }
      return;
    case ChunkState::kDeduped: {
      // Device 0's label at the same offset: a copy that is there, but of other indices.
      std::memcpy(out, devices_[0].labels.data() + offset * kLabelBytes, kLabelBytes);
      return;
    }
    case ChunkState::kHidden:
      break;
  }
  if (deviation_.kind != DeviationKind::kHideChunks) {  // under-filled chunks: nothing there
    std::memset(out, 0, kLabelBytes);
    return;
  }
  const RegionSpec session = SessionOf(format_, seed_.data(), m_);
  switch (deviation_.hidden_answer) {
    case HiddenAnswer::kRecompute: {
      // Correct labels, recomputed for real; the time is charged per round (see round()).
      ++log_->hidden_chunks_challenged;
      recompute->insert({d, c});
      (void)ChunkLabel(session, dev.first, dev.count, g, out);
      return;
    }
    case HiddenAnswer::kEarlierSession:
      ++log_->hidden_chunks_challenged;
      if (memory_->earlier_seed) {
        (void)ChunkLabel(SessionOf(format_, memory_->earlier_seed->data(), m_), dev.first, dev.count, g, out);
        return;
      }
      break;
    case HiddenAnswer::kRandomBytes:
      ++log_->hidden_chunks_challenged;
      break;
    case HiddenAnswer::kZeros:
      ++log_->hidden_chunks_challenged;
      std::memset(out, 0, kLabelBytes);
      return;
  }
  randombytes_buf(out, kLabelBytes);
}

kj::Promise<void> CheatingAgent::round(RoundContext context) {
  if (!hasher_) return Refusal(FailedPreconditionError("no session"));
  proto::ChallengeRound::Reader request = context.getParams().getRound();
  Status shape = proto::WalkMessage(request);
  if (shape.ok()) shape = proto::ValidateShape(request);
  if (!shape.ok()) return Refusal(shape);
  if (request.getSessionId() != proto::AsView(session_id_.data(), session_id_.size())) {
    return Refusal(InvalidArgumentError("round for another session"));
  }
  const uint32_t r = request.getRoundIndex();
  ++log_->rounds;
  if (deviation_.kind == DeviationKind::kHugeRoundError && r == deviation_.round) {
    return Refusal(InternalError(HugeAgentText(deviation_.huge_text_bytes)));
  }

  // The indices this agent answers: the round's, or (7b) the previous round's.
  Status fits = proto::CheckRoundFitsOrder(order_->root(), request);
  if (!fits.ok()) return Refusal(fits);
  std::vector<std::vector<uint64_t>> indices;
  for (auto dc : request.getDevices()) {
    std::vector<uint64_t> list;
    for (uint64_t g : dc.getLabelIndices()) list.push_back(g);
    indices.push_back(std::move(list));
  }
  if (log_->first_proof_round_at == std::chrono::steady_clock::time_point{} &&
      proto::IsProofRound(order_->root(), request)) {
    log_->first_proof_round_at = std::chrono::steady_clock::now();
  }
  if (deviation_.kind == DeviationKind::kDisconnectOnHidden) {
    for (size_t i = 0; i < indices.size(); ++i) {
      const Device& dev = devices_[request.getDevices()[static_cast<unsigned>(i)].getDeviceIndex()];
      for (uint64_t g : indices[i]) {
        if (dev.chunks[(g - dev.first) / m_] != ChunkState::kHidden) continue;
        ++log_->hidden_chunks_challenged;
        deviation_.disconnect();  // rather than answer a label it does not hold
        return kj::NEVER_DONE;
      }
    }
  }
  std::vector<std::vector<uint64_t>> answered = indices;
  if (deviation_.kind == DeviationKind::kOtherRoundIndices && r >= 1 && previous_indices_.size() == indices.size()) {
    answered = previous_indices_;
  }

  auto answer = context.getResults().initAnswer();
  if (deviation_.kind == DeviationKind::kReplayAnswer && r >= 1 && previous_answer_) {
    auto replay = proto::ParseMessage<proto::RoundAnswer>(proto::AsView(*previous_answer_));
    if (!replay.ok()) return Refusal(replay.status());
    context.getResults().setAnswer(replay->root());
  } else {
    answer.setSessionId(request.getSessionId());
    answer.setRoundIndex(deviation_.kind == DeviationKind::kWrongRoundIndex ? r + 1 : r);
    size_t count = 0;
    for (const auto& list : answered) count += list.size();
    auto labels = answer.initLabels(static_cast<unsigned>(count * kLabelBytes));
    std::set<std::pair<size_t, uint64_t>> recompute;
    size_t at = 0;
    auto devices = request.getDevices();
    for (size_t i = 0; i < answered.size(); ++i) {
      for (uint64_t g : answered[i]) {
        AnswerLabel(devices[static_cast<unsigned>(i)].getDeviceIndex(), g, labels.begin() + at, &recompute);
        at += kLabelBytes;
      }
    }
    if (deviation_.kind == DeviationKind::kReorderedAnswer && count >= 2) {
      uint8_t tmp[kLabelBytes];
      std::memcpy(tmp, labels.begin(), kLabelBytes);
      std::memcpy(labels.begin(), labels.begin() + kLabelBytes, kLabelBytes);
      std::memcpy(labels.begin() + kLabelBytes, tmp, kLabelBytes);
    }
    if (!recompute.empty()) {
      // ceil(k / cores) batches of depth(m) * c_node * t_min each, rounded up to whole microseconds.
      const SimTiming& t = options_.timing;
      const uint64_t batches = (recompute.size() + t.recompute_cores - 1) / t.recompute_cores;
      const uint64_t charge_us = (batches * t.recompute_chunk_ps + 999'999) / 1'000'000;
      Charge(static_cast<int64_t>(charge_us));
      log_->recompute_charged_us += static_cast<int64_t>(charge_us);
      log_->max_round_recompute_us = std::max(log_->max_round_recompute_us, charge_us);
    }
    if (deviation_.kind == DeviationKind::kShortAnswer && count >= 1) {
      const std::vector<uint8_t> cut(labels.begin(), labels.end() - kLabelBytes);
      answer.setLabels(capnp::Data::Reader(cut.data(), cut.size()));
    }
  }
  if (deviation_.kind == DeviationKind::kLateRound && r == deviation_.round) Charge(deviation_.advance_us);
  Charge(options_.timing.round_us);

  auto sent = proto::EncodeCanonical(context.getResults().getAnswer().asReader());
  if (sent.ok()) previous_answer_ = *std::move(sent);
  previous_indices_ = std::move(indices);
  Status hashed = hasher_->AddRound(request, context.getResults().getAnswer().asReader());
  if (!hashed.ok()) return Refusal(hashed);
  if (++rounds_answered_ == deviation_.round && deviation_.kind == DeviationKind::kDropAfterRounds) {
    DropChunks(ChunkState::kHidden);
    if (deviation_.on_drop) deviation_.on_drop();
  }
  return kj::READY_NOW;
}

kj::Promise<void> CheatingAgent::finish(FinishContext context) {
  if (!hasher_) return Refusal(FailedPreconditionError("no session"));
  ++log_->finishes;
  if (deviation_.kind == DeviationKind::kHugeFinishError) {
    return Refusal(InternalError(HugeAgentText(deviation_.huge_text_bytes)));
  }
  auto verdict = proto::VerifyAndParse<proto::Verdict>(context.getParams().getVerdict(), keys_.challenger);
  if (!verdict.ok()) return Refusal(verdict.status());
  auto digest = hasher_->Finish();
  if (!digest.ok()) return Refusal(digest.status());
  if (deviation_.kind == DeviationKind::kTranscriptMismatch) (*digest)[0] ^= 1;
  auto signed_t = proto::SignTranscriptDigest(verdict->root().getSessionId(), *digest, hasher_->round_count(),
                                              verdict->bytes(), NowUnixUs(), keys_.node);
  if (!signed_t.ok()) return Refusal(signed_t.status());
  proto::SignedEnvelope sent = *signed_t;
  if (deviation_.kind == DeviationKind::kReusedTranscriptSignature && memory_->earlier_transcript) {
    sent.signature = memory_->earlier_transcript->signature;  // signed once, reused
  }
  memory_->earlier_transcript = *signed_t;
  proto::WriteEnvelope(sent, context.getResults().initTranscript());
  Release();
  return kj::READY_NOW;
}

kj::Promise<void> CheatingAgent::abort(AbortContext context) {
  ++log_->aborts;
  log_->abort_reason = context.getParams().getReason().cStr();
  Release();
  if (deviation_.kind == DeviationKind::kHugeRoundError) {
    return Refusal(InternalError(HugeAgentText(deviation_.huge_text_bytes)));
  }
  return kj::READY_NOW;
}

kj::Promise<void> CheatingAgent::deviceFilled(DeviceFilledContext context) {
  if (!hasher_ && gated_ && options_.timer != nullptr) {
    // The fill is held at its gate: answer once it has run.
    return options_.timer->afterDelay(100 * kj::MICROSECONDS).then([this, context]() mutable {
      return deviceFilled(context);
    });
  }
  if (!hasher_) return Refusal(FailedPreconditionError("no session"));
  auto params = context.getParams();
  if (params.getSessionId() != capnp::Data::Reader(session_id_.data(), session_id_.size())) {
    return Refusal(InvalidArgumentError("deviceFilled for another session"));
  }
  if (params.getDeviceIndex() >= notices_.size()) return Refusal(InvalidArgumentError("deviceIndex out of range"));
  if (deviation_.kind == DeviationKind::kWithholdNotice && params.getDeviceIndex() + 1u == notices_.size()) {
    return kj::NEVER_DONE;
  }
  if (deviation_.kind == DeviationKind::kLateNoticeDiffers && params.getDeviceIndex() + 1u == notices_.size() &&
      options_.timer != nullptr) {
    const proto::SignedEnvelope notice = notices_[params.getDeviceIndex()];
    return options_.timer->afterDelay(200 * kj::MILLISECONDS).then([notice, context, log = log_]() mutable {
      proto::WriteEnvelope(notice, context.getResults().initNotice());
      log->filled_at = std::max(log->filled_at, std::chrono::steady_clock::now());
    });
  }
  proto::WriteEnvelope(notices_[params.getDeviceIndex()], context.getResults().initNotice());
  log_->filled_at = std::max(log_->filled_at, std::chrono::steady_clock::now());
  return kj::READY_NOW;
}

kj::Promise<void> CheatingAgent::status(StatusContext context) {
  context.getResults().initStatus().setPhase(hasher_ ? proto::AgentPhase::READY : proto::AgentPhase::IDLE);
  return kj::READY_NOW;
}

}  // namespace wipeproof::adversary
