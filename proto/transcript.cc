#include "proto/transcript.h"

#include "proto/codec.h"

namespace wipeproof::proto {

TranscriptHasher::TranscriptHasher() {
  InitSodium().IgnoreError();  // crypto_generichash needs no initialisation to be correct
  crypto_generichash_init(&state_, nullptr, 0, kDigestBytes);
  crypto_generichash_update(&state_, reinterpret_cast<const uint8_t*>(kTranscriptContext),
                            sizeof(kTranscriptContext) - 1);
  crypto_generichash_init(&rounds_, nullptr, 0, kDigestBytes);
}

void TranscriptHasher::AddItem(crypto_generichash_state* state, uint8_t tag, ByteView bytes) {
  uint8_t header[9];
  header[0] = tag;
  uint64_t length = bytes.size();
  for (int i = 0; i < 8; ++i) header[1 + i] = static_cast<uint8_t>(length >> (8 * i));
  crypto_generichash_update(state, header, sizeof(header));
  crypto_generichash_update(state, bytes.begin(), bytes.size());
}

Status TranscriptHasher::AddOrder(ByteView order_payload) {
  if (have_order_ || done_) return FailedPreconditionError("transcript: order already added");
  AddItem(&state_, 1, order_payload);
  have_order_ = true;
  return Status::Ok();
}

Status TranscriptHasher::AddNotice(uint16_t device_index, ByteView notice_payload) {
  if (!have_order_ || done_) return FailedPreconditionError("transcript: a fill notice must follow the order");
  if (notices_.count(device_index) != 0) {
    return FailedPreconditionError("transcript: device " + std::to_string(device_index) + " already has a notice");
  }
  notices_.emplace(device_index, Bytes(notice_payload.begin(), notice_payload.end()));
  return Status::Ok();
}

Status TranscriptHasher::AddReport(ByteView report_payload) {
  if (!have_order_ || have_report_ || done_) {
    return FailedPreconditionError("transcript: the report must follow the order, once");
  }
  report_.assign(report_payload.begin(), report_payload.end());
  have_report_ = true;
  return Status::Ok();
}

Status TranscriptHasher::AddRound(ChallengeRound::Reader round, RoundAnswer::Reader answer) {
  if (!have_order_ || done_) return FailedPreconditionError("transcript: rounds must follow the order");
  WP_ASSIGN_OR_RETURN(Bytes round_bytes, EncodeCanonical(round));
  WP_ASSIGN_OR_RETURN(Bytes answer_bytes, EncodeCanonical(answer));
  return AddRoundBytes(AsView(round_bytes), AsView(answer_bytes));
}

Status TranscriptHasher::AddRoundBytes(ByteView round_canonical, ByteView answer_canonical) {
  if (!have_order_ || done_) return FailedPreconditionError("transcript: rounds must follow the order");
  AddItem(&rounds_, 3, round_canonical);
  AddItem(&rounds_, 4, answer_canonical);
  ++round_count_;
  return Status::Ok();
}

StatusOr<Digest> TranscriptHasher::Finish() {
  if (!have_order_ || !have_report_ || done_) {
    return FailedPreconditionError("transcript: finish needs the order and the report, once");
  }
  for (const auto& [device, payload] : notices_) AddItem(&state_, 6, AsView(payload));
  AddItem(&state_, 2, AsView(report_));
  Digest rounds;
  crypto_generichash_final(&rounds_, rounds.data(), rounds.size());
  AddItem(&state_, 7, AsView(rounds));
  uint8_t count[4];
  for (int i = 0; i < 4; ++i) count[i] = static_cast<uint8_t>(round_count_ >> (8 * i));
  AddItem(&state_, 5, ByteView(count, sizeof(count)));
  Digest out;
  crypto_generichash_final(&state_, out.data(), out.size());
  done_ = true;
  return out;
}

}  // namespace wipeproof::proto
