#include "adversary/cheating_agent.h"

#include <capnp/message.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "adversary/cheats/make_cheat.h"
#include "kernels/region_labeler.h"
#include "proto/codec.h"
#include "proto/delegation.h"
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

}  // namespace

CheatingAgent::CheatingAgent(AgentKeys keys, CheatingAgentOptions options)
    : keys_(std::move(keys)),
      options_(std::move(options)),
      memory_(options_.memory != nullptr ? options_.memory : &own_memory_),
      log_(options_.log != nullptr ? options_.log : &own_log_),
      rng_(options_.rng_seed),
      clock_(options_.sim_clock) {
  CheatTools tools;
  tools.held = &held_;
  tools.log = log_;
  tools.memory = memory_;
  tools.rng = &rng_;
  tools.clock = &clock_;
  tools.timing = &options_.timing;
  cheat_ = MakeCheat(options_.deviation, tools);
}

void CheatingAgent::Release() {
  if (hasher_) memory_->earlier_seed = held_.seed;  // what 1(c) answers from in the next session
  held_.devices.clear();
  notices_.clear();
  hasher_.reset();
  order_.reset();
  session_id_.clear();
  cheat_->OnSessionEnd();
  log_->holds_memory = false;
}

Status CheatingAgent::FillDevices(proto::WipeOrder::Reader order, const RegionSpec& filled) {
  const uint32_t m = held_.m;
  for (proto::DevicePlan::Reader plan : order.getDevices()) {
    HeldDevice d;
    d.selector = plan.getSelector().cStr();
    d.first = plan.getFirstLabel();
    d.count = plan.getLabelCount();
    d.capacity_bytes = plan.getCapacityBytes();
    d.allowed_reserve_bytes = plan.getAllowedReserveBytes();
    d.labels_per_round = plan.getLabelsPerRound();
    d.occupancy_labels = plan.getOccupancyLabels();
    if (d.count % m != 0 || d.first % m != 0) ++log_->partial_chunk_ranges;
    d.labels.resize(d.count * kLabelBytes);
    d.chunks.assign((d.count + m - 1) / m, ChunkState::kStored);
    WP_RETURN_IF_ERROR(Label(filled, d.first, d.count, options_.fill_threads, d.labels.data()));
    held_.devices.push_back(std::move(d));
  }
  return Status::Ok();
}

std::vector<uint64_t> CheatingAgent::UnlabeledBytes() const {
  std::vector<uint64_t> unlabeled;
  for (const HeldDevice& d : held_.devices) {
    uint64_t labelled = d.foreign_label_bytes;
    for (uint64_t c = 0; c < d.chunks.size(); ++c) {
      if (d.chunks[c] != ChunkState::kStored) continue;
      labelled += std::min<uint64_t>(held_.ChunkBytes(), d.labels.size() - c * held_.ChunkBytes());
    }
    unlabeled.push_back(d.capacity_bytes > labelled ? d.capacity_bytes - labelled : 0);
  }
  return unlabeled;
}

std::vector<proto::DeviceFillFacts> CheatingAgent::FillFacts() const {
  std::vector<proto::DeviceFillFacts> facts;
  for (const HeldDevice& d : held_.devices) {
    proto::DeviceFillFacts f;
    f.selector = d.selector;
    f.first_label = d.first;
    f.label_count = d.count;
    f.reserve_bytes = d.allowed_reserve_bytes;
    f.total_bytes = d.capacity_bytes;
    f.fill_micros = static_cast<uint64_t>(options_.timing.fill_us);
    f.bytes_held = f.label_count * kLabelBytes;
    facts.push_back(std::move(f));
  }
  return facts;
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
  if (Interception cut = cheat_->OnOrderReceived()) return std::move(*cut);
  if (hasher_) return Refusal(FailedPreconditionError("a session is already running"));
  auto order_or = proto::VerifyAndParse<proto::WipeOrder>(context.getParams().getOrder(), keys_.challenger);
  if (!order_or.ok()) return Refusal(order_or.status());
  // Under the authority's delegation, as the real agent checks it (its clock here: the order's own time).
  auto delegated = proto::CheckOrderDelegation(order_or->root(), keys_.authority, keys_.challenger,
                                               order_or->root().getIssuedAtUnixUs(), 0);
  if (!delegated.ok()) return Refusal(delegated.status());
  order_.emplace(*order_or);
  proto::WipeOrder::Reader order = order_->root();
  if (Interception cut = cheat_->OnOrderVerified()) return std::move(*cut);

  const RegionSpec ordered = proto::SessionRegion(order);
  session_id_.assign(order.getSessionId().begin(), order.getSessionId().end());
  std::memcpy(held_.seed.data(), ordered.seed, kSeedBytes);
  held_.format = ordered.format;
  held_.m = ordered.chunk_labels;

  RegionSpec filled = ordered;
  cheat_->ChooseKeyMaterial(&filled);
  Status fill = FillDevices(order, filled);
  if (!fill.ok()) {
    Release();
    return Refusal(fill);
  }
  clock_.Charge(options_.timing.fill_us);
  cheat_->OnFilled();
  log_->unlabeled_bytes = UnlabeledBytes();
  log_->holds_memory = true;

  std::vector<proto::DeviceFillFacts> facts = FillFacts();
  cheat_->OnReportFacts(&facts);
  auto report = proto::SignFillReport(order_->bytes(), order.getSessionId(), facts,
                                      static_cast<uint64_t>(options_.timing.fill_us), clock_.UnixUs(), keys_.node);
  if (!report.ok()) {
    Release();
    return Refusal(report.status());
  }
  hasher_.emplace();
  (void)hasher_->AddOrder(order_->bytes());
  for (size_t i = 0; i < facts.size(); ++i) {
    proto::DeviceFillFacts noticed = facts[i];
    cheat_->OnNoticeFacts(i, facts.size(), &noticed);
    auto notice = proto::SignDeviceFillNotice(order_->bytes(), order.getSessionId(), static_cast<uint16_t>(i), noticed,
                                              clock_.UnixUs(), keys_.node);
    if (!notice.ok()) {
      Release();
      return Refusal(notice.status());
    }
    (void)hasher_->AddNotice(static_cast<uint16_t>(i), proto::AsView(notice->payload));
    notices_.push_back(*std::move(notice));
  }
  (void)hasher_->AddReport(proto::AsView(report->payload));
  cheat_->OnReportSending(&*report);
  proto::WriteEnvelope(*report, context.getResults().initReport());
  log_->filled_at = std::max(log_->filled_at, std::chrono::steady_clock::now());
  if (Interception held = cheat_->HoldReport()) return std::move(*held);
  return kj::READY_NOW;
}

void CheatingAgent::AnswerLabel(size_t d, uint64_t g, uint8_t* out) {
  const HeldDevice& dev = held_.devices[d];
  const uint64_t offset = g - dev.first;
  if (dev.chunks[offset / held_.m] == ChunkState::kStored) {
    std::memcpy(out, dev.labels.data() + offset * kLabelBytes, kLabelBytes);
  } else if (!cheat_->AnswerUnstoredLabel(d, g, out)) {
    std::memset(out, 0, kLabelBytes);  // nothing there
  }
}

void CheatingAgent::WriteLabels(const Challenge& asked, const std::vector<std::vector<uint64_t>>& answered,
                                proto::RoundAnswer::Builder answer) {
  size_t count = 0;
  for (const auto& list : answered) count += list.size();
  auto labels = answer.initLabels(static_cast<unsigned>(count * kLabelBytes));
  size_t at = 0;
  for (size_t i = 0; i < answered.size(); ++i) {
    for (uint64_t g : answered[i]) {
      AnswerLabel(asked.device(i), g, labels.begin() + at);
      at += kLabelBytes;
    }
  }
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
  if (Interception cut = cheat_->OnRound(r)) return std::move(*cut);

  Status fits = proto::CheckRoundFitsOrder(order_->root(), request);
  if (!fits.ok()) return Refusal(fits);
  Challenge asked{request, {}};
  for (auto dc : request.getDevices()) {
    std::vector<uint64_t> list;
    for (uint64_t g : dc.getLabelIndices()) list.push_back(g);
    asked.indices.push_back(std::move(list));
  }
  if (log_->first_proof_round_at == std::chrono::steady_clock::time_point{} &&
      proto::IsProofRound(order_->root(), request)) {
    log_->first_proof_round_at = std::chrono::steady_clock::now();
  }
  std::vector<std::vector<uint64_t>> answered = asked.indices;
  if (Interception cut = cheat_->OnChallenge(asked, &answered)) return std::move(*cut);

  auto answer = context.getResults().initAnswer();
  if (const proto::Bytes* replayed = cheat_->ReplayedAnswer(r)) {
    auto replay = proto::ParseMessage<proto::RoundAnswer>(proto::AsView(*replayed));
    if (!replay.ok()) return Refusal(replay.status());
    context.getResults().setAnswer(replay->root());
  } else {
    answer.setSessionId(request.getSessionId());
    answer.setRoundIndex(r);
    WriteLabels(asked, answered, answer);
  }
  cheat_->OnAnswer(r, context.getResults().getAnswer());
  clock_.Charge(options_.timing.round_us);

  Status hashed = hasher_->AddRound(request, context.getResults().getAnswer().asReader());
  if (!hashed.ok()) return Refusal(hashed);
  cheat_->OnRoundDone(asked, context.getResults().getAnswer().asReader());
  return kj::READY_NOW;
}

kj::Promise<void> CheatingAgent::finish(FinishContext context) {
  if (!hasher_) return Refusal(FailedPreconditionError("no session"));
  ++log_->finishes;
  if (Interception cut = cheat_->OnFinish()) return std::move(*cut);
  auto verdict = proto::VerifyAndParse<proto::Verdict>(context.getParams().getVerdict(), keys_.challenger);
  if (!verdict.ok()) return Refusal(verdict.status());
  auto digest = hasher_->Finish();
  if (!digest.ok()) return Refusal(digest.status());
  cheat_->OnTranscriptDigest(&*digest);
  auto signed_t = proto::SignTranscriptDigest(verdict->root().getSessionId(), *digest, hasher_->round_count(),
                                              verdict->bytes(), clock_.UnixUs(), keys_.node);
  if (!signed_t.ok()) return Refusal(signed_t.status());
  proto::SignedEnvelope sent = *signed_t;
  cheat_->OnTranscriptSending(&sent);
  memory_->earlier_transcript = *signed_t;
  proto::WriteEnvelope(sent, context.getResults().initTranscript());
  Release();
  return kj::READY_NOW;
}

kj::Promise<void> CheatingAgent::abort(AbortContext context) {
  ++log_->aborts;
  log_->abort_reason = context.getParams().getReason().cStr();
  Release();
  if (Interception cut = cheat_->OnAbort()) return std::move(*cut);
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
  const size_t device = params.getDeviceIndex();
  if (device >= notices_.size()) return Refusal(InvalidArgumentError("deviceIndex out of range"));
  const NoticeDelivery delivery = cheat_->DeliverNotice(device, notices_.size());
  if (delivery.never) return kj::NEVER_DONE;
  if (delivery.delay > 0 * kj::MILLISECONDS && options_.timer != nullptr) {
    const proto::SignedEnvelope notice = notices_[device];
    return options_.timer->afterDelay(delivery.delay).then([notice, context, log = log_]() mutable {
      proto::WriteEnvelope(notice, context.getResults().initNotice());
      log->filled_at = std::max(log->filled_at, std::chrono::steady_clock::now());
    });
  }
  proto::WriteEnvelope(notices_[device], context.getResults().initNotice());
  log_->filled_at = std::max(log_->filled_at, std::chrono::steady_clock::now());
  return kj::READY_NOW;
}

kj::Promise<void> CheatingAgent::status(StatusContext context) {
  context.getResults().initStatus().setPhase(hasher_ ? proto::AgentPhase::READY : proto::AgentPhase::IDLE);
  return kj::READY_NOW;
}

}  // namespace wipeproof::adversary
