#include "proto/transcript.h"

#include "proto/codec.h"

namespace wipeproof::proto {

TranscriptHasher::TranscriptHasher() {
  InitSodium().IgnoreError();  // crypto_generichash needs no initialisation to be correct
  crypto_generichash_init(&state_, nullptr, 0, kDigestBytes);
  crypto_generichash_update(&state_, reinterpret_cast<const uint8_t*>(kTranscriptContext),
                            sizeof(kTranscriptContext) - 1);
}

void TranscriptHasher::AddItem(uint8_t tag, ByteView bytes) {
  uint8_t header[9];
  header[0] = tag;
  uint64_t length = bytes.size();
  for (int i = 0; i < 8; ++i) header[1 + i] = static_cast<uint8_t>(length >> (8 * i));
  crypto_generichash_update(&state_, header, sizeof(header));
  crypto_generichash_update(&state_, bytes.begin(), bytes.size());
}

Status TranscriptHasher::AddOrder(ByteView order_payload) {
  if (stage_ != Stage::kOrder) return FailedPreconditionError("transcript: order already added");
  AddItem(1, order_payload);
  stage_ = Stage::kReport;
  return Status::Ok();
}

Status TranscriptHasher::AddReport(ByteView report_payload) {
  if (stage_ != Stage::kReport) return FailedPreconditionError("transcript: report must follow the order");
  AddItem(2, report_payload);
  stage_ = Stage::kRounds;
  return Status::Ok();
}

Status TranscriptHasher::AddRound(ChallengeRound::Reader round, RoundAnswer::Reader answer) {
  if (stage_ != Stage::kRounds) return FailedPreconditionError("transcript: rounds must follow the report");
  WP_ASSIGN_OR_RETURN(Bytes round_bytes, EncodeCanonical(round));
  WP_ASSIGN_OR_RETURN(Bytes answer_bytes, EncodeCanonical(answer));
  AddItem(3, AsView(round_bytes));
  AddItem(4, AsView(answer_bytes));
  ++round_count_;
  return Status::Ok();
}

StatusOr<Digest> TranscriptHasher::Finish() {
  if (stage_ != Stage::kRounds) return FailedPreconditionError("transcript: finish needs order and report, once");
  uint8_t count[4];
  for (int i = 0; i < 4; ++i) count[i] = static_cast<uint8_t>(round_count_ >> (8 * i));
  AddItem(5, ByteView(count, sizeof(count)));
  Digest out;
  crypto_generichash_final(&state_, out.data(), out.size());
  stage_ = Stage::kDone;
  return out;
}

}  // namespace wipeproof::proto
