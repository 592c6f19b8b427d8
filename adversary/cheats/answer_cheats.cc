#include "adversary/cheats/answer_cheats.h"

#include <cstring>

#include "proto/codec.h"
#include "proto/label_wire.h"

namespace wipeproof::adversary {

using proto::kLabelBytes;

const proto::Bytes* ReplayAnswer::ReplayedAnswer(uint32_t round) {
  return round >= 1 && previous_ ? &*previous_ : nullptr;
}

void ReplayAnswer::OnRoundDone(const Challenge& /*asked*/, proto::RoundAnswer::Reader answer) {
  auto sent = proto::EncodeCanonical(answer);
  if (sent.ok()) previous_ = *std::move(sent);
}

Interception AnswerOtherRoundIndices::OnChallenge(const Challenge& asked,
                                                  std::vector<std::vector<uint64_t>>* answered) {
  if (asked.round() >= 1 && previous_.size() == asked.indices.size()) *answered = previous_;
  return std::nullopt;
}

void AnswerOtherRoundIndices::OnRoundDone(const Challenge& asked, proto::RoundAnswer::Reader /*answer*/) {
  previous_ = asked.indices;
}

void ReorderAnswer::OnAnswer(uint32_t /*round*/, proto::RoundAnswer::Builder answer) {
  auto labels = answer.getLabels();
  if (labels.size() < 2 * kLabelBytes) return;
  uint8_t tmp[kLabelBytes];
  std::memcpy(tmp, labels.begin(), kLabelBytes);
  std::memcpy(labels.begin(), labels.begin() + kLabelBytes, kLabelBytes);
  std::memcpy(labels.begin() + kLabelBytes, tmp, kLabelBytes);
}

void ShortenAnswer::OnAnswer(uint32_t /*round*/, proto::RoundAnswer::Builder answer) {
  auto labels = answer.getLabels();
  if (labels.size() < kLabelBytes) return;
  const std::vector<uint8_t> cut(labels.begin(), labels.end() - kLabelBytes);
  answer.setLabels(capnp::Data::Reader(cut.data(), cut.size()));
}

void MislabelRoundIndex::OnAnswer(uint32_t round, proto::RoundAnswer::Builder answer) {
  answer.setRoundIndex(round + 1);
}

}  // namespace wipeproof::adversary
