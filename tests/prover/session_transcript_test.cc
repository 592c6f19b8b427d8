// The agent's transcript with its rounds hashed on a thread of their own
// (prover/agent/session_transcript.h), or in AddRound without one: the digest is the one
// proto::TranscriptHasher gives for the same items added at once (also when the worker falls behind
// and the queue's bound holds rounds back), stages are reported in round order from the worker, a
// hashing error reaches Error() and Finish(), and a transcript destroyed with rounds queued stops.
#include "prover/agent/session_transcript.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "proto/codec.h"
#include "proto/transcript.h"

namespace wipeproof {
namespace {

constexpr size_t kLabel = 32;

SessionId TestSessionId() {
  SessionId id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(0xa0 + i);
  return id;
}

proto::Bytes Payload(const std::string& text) { return proto::Bytes(text.begin(), text.end()); }

// Round `index` of `q` labels: the ChallengeRound and the answer's fields, with values that differ
// from round to round.
struct TestRound {
  capnp::MallocMessageBuilder round_message;
  capnp::MallocMessageBuilder answer_message;
  AnsweredRound answered;
};

std::unique_ptr<TestRound> MakeRound(uint32_t index, uint32_t q) {
  auto t = std::make_unique<TestRound>();
  const SessionId id = TestSessionId();
  auto round = t->round_message.initRoot<proto::ChallengeRound>();
  round.setSessionId(proto::AsView(id));
  round.setRoundIndex(index);
  auto device = round.initDevices(1)[0];
  device.setDeviceIndex(0);
  auto indices = device.initLabelIndices(q);
  for (uint32_t k = 0; k < q; ++k) indices.set(k, uint64_t{index} * 1'000'003 + k * 7);
  std::vector<uint8_t> labels(size_t{q} * kLabel);
  for (size_t k = 0; k < labels.size(); ++k) labels[k] = static_cast<uint8_t>(k * 31 + index);
  auto answer = t->answer_message.initRoot<proto::RoundAnswer>();
  answer.setSessionId(proto::AsView(id));
  answer.setRoundIndex(index);
  answer.setLabels(kj::arrayPtr(labels.data(), labels.size()));
  answer.setAgentMicros(index + 5);
  t->answered.round_canonical = *proto::EncodeCanonical(round.asReader());
  t->answered.labels = std::move(labels);
  t->answered.round_index = index;
  t->answered.agent_micros = index + 5;
  return t;
}

// The order, two notices and the report, into either kind of transcript.
template <typename T>
void AddPreamble(T& transcript) {
  ASSERT_TRUE(transcript.AddOrder(proto::AsView(Payload("order payload"))).ok());
  ASSERT_TRUE(transcript.AddNotice(1, proto::AsView(Payload("notice of device 1"))).ok());
  ASSERT_TRUE(transcript.AddNotice(0, proto::AsView(Payload("notice of device 0"))).ok());
  ASSERT_TRUE(transcript.AddReport(proto::AsView(Payload("fill report"))).ok());
}

// The reference: every round added at once, by the plain hasher from the two messages.
proto::Digest ReferenceDigest(std::vector<std::unique_ptr<TestRound>>& rounds) {
  proto::TranscriptHasher reference;
  AddPreamble(reference);
  for (auto& r : rounds) {
    EXPECT_TRUE(reference
                    .AddRound(r->round_message.getRoot<proto::ChallengeRound>().asReader(),
                              r->answer_message.getRoot<proto::RoundAnswer>().asReader())
                    .ok());
  }
  auto digest = reference.Finish();
  EXPECT_TRUE(digest.ok());
  return *digest;
}

std::vector<std::unique_ptr<TestRound>> MakeRounds(uint32_t count, uint32_t q) {
  std::vector<std::unique_ptr<TestRound>> rounds;
  for (uint32_t i = 0; i < count; ++i) rounds.push_back(MakeRound(i, q));
  return rounds;
}

TEST(SessionTranscriptTest, TheDigestIsTheOneOfEveryRoundHashedAtOnce) {
  auto rounds = MakeRounds(200, 256);
  const proto::Digest expected = ReferenceDigest(rounds);
  SessionTranscript transcript(TestSessionId(), /*use_thread=*/true, {});
  AddPreamble(transcript);
  for (auto& r : rounds) transcript.AddRound(r->answered);  // back to back: the worker falls behind
  EXPECT_EQ(transcript.rounds_queued(), 200u);
  auto finished = transcript.Finish();
  ASSERT_TRUE(finished.ok()) << finished.status().ToString();
  EXPECT_EQ(finished->first, expected);
  EXPECT_EQ(finished->second, 200u);
}

TEST(SessionTranscriptTest, AnotherRoundOrderGivesAnotherDigest) {
  auto rounds = MakeRounds(3, 16);
  const proto::Digest in_order = ReferenceDigest(rounds);
  SessionTranscript transcript(TestSessionId(), /*use_thread=*/true, {});
  AddPreamble(transcript);
  transcript.AddRound(rounds[1]->answered);
  transcript.AddRound(rounds[0]->answered);
  transcript.AddRound(rounds[2]->answered);
  auto finished = transcript.Finish();
  ASSERT_TRUE(finished.ok());
  EXPECT_NE(finished->first, in_order);
  EXPECT_EQ(finished->second, 3u);
}

TEST(SessionTranscriptTest, TheQueueIsBoundedAndTheDigestHolds) {
  // 40 rounds of 2^15 labels (1 MiB of labels each), queued faster than they hash: 40 MiB, more
  // than twice the bound.
  constexpr uint32_t kQ = 1u << 15;
  auto rounds = MakeRounds(40, kQ);
  const size_t round_bytes = rounds[0]->answered.round_canonical.size() + rounds[0]->answered.labels.size();
  const proto::Digest expected = ReferenceDigest(rounds);
  SessionTranscript transcript(TestSessionId(), /*use_thread=*/true, {});
  AddPreamble(transcript);
  for (auto& r : rounds) transcript.AddRound(r->answered);
  auto finished = transcript.Finish();
  ASSERT_TRUE(finished.ok());
  EXPECT_EQ(finished->first, expected);
  EXPECT_EQ(finished->second, 40u);
  EXPECT_GT(transcript.max_queued_bytes(), 0u);
  EXPECT_LT(transcript.max_queued_bytes(), SessionTranscript::kMaxQueuedBytes + round_bytes);
}

TEST(SessionTranscriptTest, StagesComeFromTheWorkerInRoundOrder) {
  std::mutex mu;
  std::vector<RoundStages> seen;
  std::vector<std::thread::id> threads;
  SessionTranscript transcript(TestSessionId(), /*use_thread=*/true, [&](const RoundStages& s) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(s);
    threads.push_back(std::this_thread::get_id());
  });
  AddPreamble(transcript);
  auto rounds = MakeRounds(50, 256);
  for (auto& r : rounds) {
    r->answered.stages.round_index = r->answered.round_index;
    r->answered.stages.answer_ns = 1000 + r->answered.round_index;
    transcript.AddRound(r->answered);
  }
  ASSERT_TRUE(transcript.Finish().ok());
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(seen.size(), 50u);  // every one reported before Finish returned
  for (uint32_t i = 0; i < 50; ++i) {
    EXPECT_EQ(seen[i].round_index, i);
    EXPECT_EQ(seen[i].answer_ns, 1000 + i);  // the answering thread's stages kept
    EXPECT_GT(seen[i].transcript_ns, 0);
    EXPECT_NE(threads[i], std::this_thread::get_id());
  }
}

TEST(SessionTranscriptTest, WithoutAThreadEachRoundIsHashedInAddRound) {
  auto rounds = MakeRounds(20, 256);
  const proto::Digest expected = ReferenceDigest(rounds);
  std::vector<uint32_t> hashed;
  std::vector<std::thread::id> threads;
  SessionTranscript transcript(TestSessionId(), /*use_thread=*/false, [&](const RoundStages& s) {
    hashed.push_back(s.round_index);
    threads.push_back(std::this_thread::get_id());
  });
  AddPreamble(transcript);
  for (uint32_t i = 0; i < 20; ++i) {
    rounds[i]->answered.stages.round_index = i;
    transcript.AddRound(rounds[i]->answered);
    ASSERT_EQ(hashed.size(), i + 1);  // hashed before AddRound returned
    EXPECT_EQ(threads[i], std::this_thread::get_id());
  }
  auto finished = transcript.Finish();
  ASSERT_TRUE(finished.ok());
  EXPECT_EQ(finished->first, expected);
  EXPECT_EQ(finished->second, 20u);
  EXPECT_EQ(transcript.max_queued_bytes(), 0u);
}

TEST(SessionTranscriptTest, AHashingErrorReachesErrorAndFinish) {
  SessionTranscript transcript(TestSessionId(), /*use_thread=*/true, {});
  AddPreamble(transcript);
  ASSERT_TRUE(transcript.Finish().ok());
  EXPECT_TRUE(transcript.Error().ok());
  // A round after the finish: the hasher refuses it on the worker.
  auto late = MakeRound(7, 4);
  transcript.AddRound(late->answered);
  auto again = transcript.Finish();  // waits for the worker
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.status().message().find("round 7"), std::string::npos) << again.status().ToString();
  EXPECT_EQ(transcript.Error().code(), StatusCode::kFailedPrecondition);
}

TEST(SessionTranscriptTest, DestroyedWithRoundsQueuedItStops) {
  std::mutex mu;
  std::vector<uint32_t> hashed;
  auto rounds = MakeRounds(40, 1u << 15);
  {
    SessionTranscript transcript(TestSessionId(), /*use_thread=*/true, [&](const RoundStages& s) {
      std::lock_guard<std::mutex> lock(mu);
      hashed.push_back(s.round_index);
    });
    AddPreamble(transcript);
    for (auto& r : rounds) {
      r->answered.stages.round_index = r->answered.round_index;
      transcript.AddRound(r->answered);
    }
  }  // the session ended without a finish
  std::lock_guard<std::mutex> lock(mu);
  // The destructor returned (the worker stopped and was joined, whatever it still held); what it
  // hashed before the stop came in order from round 0.
  ASSERT_LE(hashed.size(), 40u);
  for (size_t i = 0; i < hashed.size(); ++i) EXPECT_EQ(hashed[i], i);
}

}  // namespace
}  // namespace wipeproof
