#include "prover/bench/floor_messages.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "proto/codec.h"

namespace wipeproof {
namespace {

size_t AnswerBytes(proto::ChallengeRound::Reader round, const std::vector<uint8_t>& labels) {
  size_t asked = 0;
  for (auto device : round.getDevices()) asked += device.getLabelIndices().size();
  return std::min(asked * kLabelBytes, labels.size());
}

}  // namespace

void BuildFloorRound(capnp::MessageBuilder& message, uint32_t r, uint32_t q, uint64_t session_labels,
                     std::mt19937_64& random) {
  const uint8_t session_id[proto::kSessionIdBytes] = {};
  auto round = message.initRoot<proto::ChallengeRound>();
  round.setSessionId(proto::ByteView(session_id, sizeof session_id));
  round.setRoundIndex(r);
  auto device = round.initDevices(1)[0];
  device.setDeviceIndex(0);
  auto list = device.initLabelIndices(q);
  for (uint32_t i = 0; i < q; ++i) list.set(i, random() % session_labels);
}

unsigned FloorAnswerWords(proto::ChallengeRound::Reader round, const std::vector<uint8_t>& labels) {
  return static_cast<unsigned>(AnswerBytes(round, labels) / 8 + 16);
}

void BuildFloorAnswer(proto::ChallengeRound::Reader round, const std::vector<uint8_t>& labels,
                      capnp::MallocMessageBuilder& message) {
  const size_t bytes = AnswerBytes(round, labels);
  auto answer = message.initRoot<proto::RoundAnswer>();
  answer.setSessionId(round.getSessionId());
  answer.setRoundIndex(round.getRoundIndex());
  std::memcpy(answer.initLabels(static_cast<unsigned>(bytes)).begin(), labels.data(), bytes);
}

Status CheckFloorAnswer(proto::RoundAnswer::Reader answer, uint32_t r, uint32_t q) {
  if (answer.getRoundIndex() == r && answer.getLabels().size() == size_t{q} * kLabelBytes) return Status::Ok();
  return InternalError("round " + std::to_string(r) + ": answer of round " + std::to_string(answer.getRoundIndex()) +
                       " with " + std::to_string(answer.getLabels().size()) + " bytes");
}

RoundPathResult FloorResult(const std::string& path, const RoundBenchOptions& options, std::vector<int64_t> round_ns,
                            int64_t client_cpu_ns) {
  RoundPathResult out;
  out.path = path;
  out.rounds = options.rounds;
  out.labels_per_round = options.labels_per_round;
  out.round = PercentilesOf(std::move(round_ns));
  out.transport = out.round;
  out.client_cpu_us = static_cast<double>(client_cpu_ns) / 1000.0 / options.rounds;
  out.instructions_unavailable = "not counted on the floor paths";
  return out;
}

}  // namespace wipeproof
