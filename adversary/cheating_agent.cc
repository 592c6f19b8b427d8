#include "adversary/cheating_agent.h"

#include <capnp/message.h>
#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "challenger/session/pipe_agent_connector.h"
#include "kernels/region_labeler.h"
#include "proto/codec.h"
#include "proto/rpc_status.h"
#include "proto/validate.h"

namespace wipeproof::selftest {

namespace {

using proto::kLabelBytes;

capnp::Data::Reader DataOf(const uint8_t* data, size_t size) { return capnp::Data::Reader(data, size); }
kj::Exception Refusal(const Status& s) { return proto::StatusToException(s); }

// Labels [first, first + count) of a session; one thread (the selftest's sessions are small and
// run one after another).
Status Label(LabelFormat format, const uint8_t* seed, uint32_t m, uint64_t first, uint64_t count, uint8_t* out) {
  RegionSpec region;
  region.format = format;
  std::memcpy(region.seed, seed, kSeedBytes);
  region.chunk_labels = m;
  region.first = first;
  region.count = count;
  RegionLabelOptions options;
  options.threads = 1;
  return LabelRegion(region, out, options);
}

// Label `g` of a device's range [first, first + count) recomputed from its whole chunk (a region of
// one label would be a partial chunk, which in 192 is another graph).
Status ChunkLabel(LabelFormat format, const uint8_t* seed, uint32_t m, uint64_t first, uint64_t count, uint64_t g,
                  uint8_t* out) {
  const uint64_t chunk_first = first + (g - first) / m * m;
  const uint64_t chunk_count = std::min<uint64_t>(m, first + count - chunk_first);
  std::vector<uint8_t> chunk(chunk_count * kLabelBytes);
  WP_RETURN_IF_ERROR(Label(format, seed, m, chunk_first, chunk_count, chunk.data()));
  std::memcpy(out, chunk.data() + (g - chunk_first) * kLabelBytes, kLabelBytes);
  return Status::Ok();
}

}  // namespace

SelftestAgent::SelftestAgent(proto::PublicKey authority, proto::PublicKey challenger, proto::KeyPair node,
                             Deviation deviation, SimTiming timing, FakeClock* clock, AdversaryMemory* memory,
                             AgentObservations* seen, uint64_t rng_seed)
    : authority_(authority),
      challenger_(challenger),
      node_(std::move(node)),
      deviation_(deviation),
      timing_(timing),
      clock_(clock),
      memory_(memory),
      seen_(seen),
      rng_(rng_seed) {}

void SelftestAgent::Release() {
  if (hasher_) memory_->earlier_seed = seed_;  // what 1(c) answers from in the next session
  devices_.clear();
  host_store_.clear();
  hasher_.reset();
  session_id_.clear();
  previous_answer_.reset();
  previous_indices_.clear();
}

void SelftestAgent::ApplyStorageDeviation() {
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
    case DeviationKind::kHideChunks:
      for (Device& dev : devices_) {
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
          ++seen_->overwritten_chunks;
        } else {
          drop(src, c, ChunkState::kOverwritten);  // nowhere to go
          continue;
        }
        host_store_[{from, c}].assign(src.labels.begin() + static_cast<ptrdiff_t>(begin),
                                      src.labels.begin() + static_cast<ptrdiff_t>(end));
        drop(src, c, ChunkState::kRelocated);
        ++seen_->relocated_chunks;
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

kj::Promise<void> SelftestAgent::startSession(StartSessionContext context) {
  if (hasher_) return Refusal(FailedPreconditionError("a session is already running"));
  auto order_or = proto::VerifyAndParse<proto::WipeOrder>(context.getParams().getOrder(), authority_);
  if (!order_or.ok()) return Refusal(order_or.status());
  proto::WipeOrder::Reader order = order_or->root();

  session_id_.assign(order.getSessionId().begin(), order.getSessionId().end());
  std::memcpy(seed_.data(), order.getSeed().begin(), kSeedBytes);
  format_ = order.getFormat() == proto::LabelFormat::POSEDB_BLAKE3_N192 ? LabelFormat::k192 : LabelFormat::kC1;
  m_ = order.getChunkLabels();

  // Key material the labels are made from: the order's, unless adversary 6 substitutes its own.
  std::array<uint8_t, kSeedBytes> seed = seed_;
  LabelFormat format = format_;
  uint32_t m = m_;
  if (deviation_.kind == DeviationKind::kWrongSeed) seed[0] ^= 1;
  if (deviation_.kind == DeviationKind::kWrongFormat)
    format = format == LabelFormat::kC1 ? LabelFormat::k192 : LabelFormat::kC1;
  if (deviation_.kind == DeviationKind::kWrongChunkLabels) m = std::max<uint32_t>(1, m / 2);

  for (proto::DevicePlan::Reader plan : order.getDevices()) {
    Device d;
    d.selector = plan.getSelector().cStr();
    d.first = plan.getFirstLabel();
    d.count = plan.getLabelCount();
    d.capacity_bytes = plan.getCapacityBytes();
    d.allowed_reserve_bytes = plan.getAllowedReserveBytes();
    if (d.count % m_ != 0 || d.first % m_ != 0) ++seen_->partial_chunk_ranges;
    d.labels.resize(d.count * kLabelBytes);
    d.chunks.assign((d.count + m_ - 1) / m_, ChunkState::kStored);
    Status filled = Label(format, seed.data(), m, d.first, d.count, d.labels.data());
    if (!filled.ok()) {
      Release();
      return Refusal(filled);
    }
    devices_.push_back(std::move(d));
  }
  ApplyStorageDeviation();
  clock_->Advance(timing_.fill_us);

  capnp::MallocMessageBuilder message;
  auto report = message.initRoot<proto::FillReport>();
  report.setSessionId(order.getSessionId());
  const proto::Digest order_digest = proto::Blake2b256(order_or->bytes());
  report.setOrderDigest(DataOf(order_digest.data(), order_digest.size()));
  const proto::KeyId id = proto::KeyIdOf(node_.public_key);
  report.setNodeKeyId(DataOf(id.data(), id.size()));
  report.setFillMicros(static_cast<uint64_t>(timing_.fill_us));
  report.setFinishedAtUnixUs(clock_->UnixMicros());
  auto fills = report.initDevices(static_cast<unsigned>(devices_.size()));
  for (unsigned i = 0; i < fills.size(); ++i) {
    const Device& d = devices_[i];
    uint64_t count = d.count;
    uint64_t reserve = d.allowed_reserve_bytes;
    const bool last = i + 1 == fills.size();
    const uint64_t short_labels = deviation_.short_chunks * m_;
    if (last && deviation_.kind == DeviationKind::kUnderfillHeldByOthers) {
      count -= std::min(count, short_labels);
      fills[i].setBytesHeldByOthers(short_labels * kLabelBytes);
      fills[i].setNote("memory held by other processes when the fill started");
    }
    if (last && deviation_.kind == DeviationKind::kUnderfillInflatedReserve) {
      count -= std::min(count, short_labels);
      reserve += short_labels * kLabelBytes;
      fills[i].setNote("the driver needs a larger reserve on this device");
    }
    fills[i].setSelector(d.selector);
    fills[i].setFirstLabel(d.first);
    fills[i].setLabelCount(count);
    fills[i].setBytesHeld(count * kLabelBytes);
    fills[i].setReserveBytes(reserve);
    fills[i].setTotalBytes(d.capacity_bytes);
    fills[i].setFillMicros(static_cast<uint64_t>(timing_.fill_us));
  }
  auto signed_report = proto::SignMessage(report.asReader(), node_);
  if (!signed_report.ok()) {
    Release();
    return Refusal(signed_report.status());
  }
  hasher_.emplace();
  (void)hasher_->AddOrder(order_or->bytes());
  (void)hasher_->AddReport(proto::AsView(signed_report->payload));
  proto::WriteEnvelope(*signed_report, context.getResults().initReport());
  return kj::READY_NOW;
}

void SelftestAgent::AnswerLabel(size_t d, uint64_t g, uint8_t* out, std::set<std::pair<size_t, uint64_t>>* recompute) {
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
  switch (deviation_.hidden_answer) {
    case HiddenAnswer::kRecompute: {
      // Correct labels, recomputed for real; the time is charged per round (see round()).
      ++seen_->hidden_chunks_challenged;
      recompute->insert({d, c});
      (void)ChunkLabel(format_, seed_.data(), m_, dev.first, dev.count, g, out);
      return;
    }
    case HiddenAnswer::kEarlierSession:
      ++seen_->hidden_chunks_challenged;
      if (memory_->earlier_seed) {
        (void)ChunkLabel(format_, memory_->earlier_seed->data(), m_, dev.first, dev.count, g, out);
        return;
      }
      break;
    case HiddenAnswer::kRandomBytes:
      ++seen_->hidden_chunks_challenged;
      break;
  }
  randombytes_buf(out, kLabelBytes);
}

kj::Promise<void> SelftestAgent::round(RoundContext context) {
  if (!hasher_) return Refusal(FailedPreconditionError("no session"));
  proto::ChallengeRound::Reader request = context.getParams().getRound();
  Status shape = proto::WalkMessage(request);
  if (shape.ok()) shape = proto::ValidateShape(request);
  if (!shape.ok()) return Refusal(shape);
  if (request.getSessionId() != DataOf(session_id_.data(), session_id_.size())) {
    return Refusal(InvalidArgumentError("round for another session"));
  }
  const uint32_t r = request.getRoundIndex();

  // The indices this agent answers: the round's, or (7b) the previous round's.
  std::vector<std::vector<uint64_t>> indices;
  for (auto dc : request.getDevices()) {
    if (dc.getDeviceIndex() >= devices_.size()) return Refusal(InvalidArgumentError("deviceIndex out of range"));
    std::vector<uint64_t> list;
    for (uint64_t g : dc.getLabelIndices()) list.push_back(g);
    const Device& dev = devices_[dc.getDeviceIndex()];
    for (uint64_t g : list) {
      if (g < dev.first || g >= dev.first + dev.count) {
        return Refusal(InvalidArgumentError("index " + std::to_string(g) + " outside the device's range"));
      }
    }
    indices.push_back(std::move(list));
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
    answer.setRoundIndex(r);
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
      const uint64_t batches = (recompute.size() + timing_.recompute_cores - 1) / timing_.recompute_cores;
      const uint64_t charge_us = (batches * timing_.recompute_chunk_ps + 999'999) / 1'000'000;
      clock_->Advance(static_cast<int64_t>(charge_us));
      seen_->recompute_charged_us += static_cast<int64_t>(charge_us);
      seen_->max_round_recompute_us = std::max(seen_->max_round_recompute_us, charge_us);
    }
  }
  clock_->Advance(timing_.round_us);

  auto sent = proto::EncodeCanonical(context.getResults().getAnswer().asReader());
  if (sent.ok()) previous_answer_ = *std::move(sent);
  previous_indices_ = std::move(indices);
  Status hashed = hasher_->AddRound(request, context.getResults().getAnswer().asReader());
  if (!hashed.ok()) return Refusal(hashed);
  return kj::READY_NOW;
}

kj::Promise<void> SelftestAgent::finish(FinishContext context) {
  if (!hasher_) return Refusal(FailedPreconditionError("no session"));
  auto verdict = proto::VerifyAndParse<proto::Verdict>(context.getParams().getVerdict(), challenger_);
  if (!verdict.ok()) return Refusal(verdict.status());
  auto digest = hasher_->Finish();
  if (!digest.ok()) return Refusal(digest.status());
  capnp::MallocMessageBuilder message;
  auto t = message.initRoot<proto::TranscriptDigest>();
  t.setSessionId(verdict->root().getSessionId());
  t.setDigest(DataOf(digest->data(), digest->size()));
  t.setRoundCount(hasher_->round_count());
  const proto::Digest vd = proto::Blake2b256(verdict->bytes());
  t.setVerdictDigest(DataOf(vd.data(), vd.size()));
  const proto::KeyId id = proto::KeyIdOf(node_.public_key);
  t.setNodeKeyId(DataOf(id.data(), id.size()));
  t.setSignedAtUnixUs(clock_->UnixMicros());
  auto signed_t = proto::SignMessage(t.asReader(), node_);
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

kj::Promise<void> SelftestAgent::abort(AbortContext) {
  Release();
  return kj::READY_NOW;
}

kj::Promise<void> SelftestAgent::status(StatusContext context) {
  context.getResults().initStatus().setPhase(hasher_ ? proto::AgentPhase::READY : proto::AgentPhase::IDLE);
  return kj::READY_NOW;
}

// ---------------------------------------------------------------------------------------------
// RelayAgent

struct RelayAgent::Link {
  Link(kj::AsyncIoContext& io, kj::Own<proto::ProverAgent::Server> helper)
      : pipe(io, kj::mv(helper)), client(Connect(pipe)) {}
  static proto::ProverAgent::Client Connect(PipeAgentConnector& pipe) {
    auto client = pipe.Connect();  // in-process: cannot fail
    return kj::mv(*client);
  }
  PipeAgentConnector pipe;
  proto::ProverAgent::Client client;
};

RelayAgent::RelayAgent(kj::AsyncIoContext& io, kj::Own<proto::ProverAgent::Server> helper, FakeClock* clock,
                       int64_t link_us)
    : link_(kj::heap<Link>(io, kj::mv(helper))), clock_(clock), link_us_(link_us) {}

RelayAgent::~RelayAgent() noexcept(false) {}

kj::Promise<void> RelayAgent::startSession(StartSessionContext context) {
  auto request = link_->client.startSessionRequest();
  request.setOrder(context.getParams().getOrder());
  return request.send().then(
      [context](auto&& response) mutable { context.getResults().setReport(response.getReport()); });
}

kj::Promise<void> RelayAgent::round(RoundContext context) {
  auto request = link_->client.roundRequest();
  request.setRound(context.getParams().getRound());
  return request.send().then([this, context](auto&& response) mutable {
    clock_->Advance(link_us_);  // the round trip to the helper and back
    context.getResults().setAnswer(response.getAnswer());
  });
}

kj::Promise<void> RelayAgent::finish(FinishContext context) {
  auto request = link_->client.finishRequest();
  request.setVerdict(context.getParams().getVerdict());
  return request.send().then(
      [context](auto&& response) mutable { context.getResults().setTranscript(response.getTranscript()); });
}

kj::Promise<void> RelayAgent::abort(AbortContext context) {
  auto request = link_->client.abortRequest();
  request.setSessionId(context.getParams().getSessionId());
  request.setReason(context.getParams().getReason());
  return request.send().ignoreResult();
}

kj::Promise<void> RelayAgent::status(StatusContext context) {
  return link_->client.statusRequest().send().then(
      [context](auto&& response) mutable { context.getResults().setStatus(response.getStatus()); });
}

}  // namespace wipeproof::selftest
