// The ledger's round log (challenger/session/round_log.h): every round as sent and every answer as
// received, split over records under the size limit, in order; and in a real session, what the
// round log holds is what the transcript hashed.
#include "challenger/session/round_log.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <string>

#include "proto/codec.h"

namespace wipeproof {
namespace {

const std::array<uint8_t, proto::kSessionIdBytes> kSid = {1, 2, 3};

proto::Bytes Round(uint32_t index, size_t labels) {
  capnp::MallocMessageBuilder m;
  auto round = m.initRoot<proto::ChallengeRound>();
  round.setSessionId(proto::AsView(kSid));
  round.setRoundIndex(index);
  auto list = round.initDevices(1)[0].initLabelIndices(static_cast<unsigned>(labels));
  for (unsigned i = 0; i < labels; ++i) list.set(i, uint64_t{index} * 1000 + i);
  return *proto::EncodeCanonical(round.asReader());
}

proto::Bytes Answer(uint32_t index, size_t labels) {
  capnp::MallocMessageBuilder m;
  auto answer = m.initRoot<proto::RoundAnswer>();
  answer.setSessionId(proto::AsView(kSid));
  answer.setRoundIndex(index);
  auto bytes = answer.initLabels(static_cast<unsigned>(labels * 32));
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(index + i);
  return *proto::EncodeCanonical(answer.asReader());
}

TEST(RoundLogTest, SmallSessionIsOneRecordWithEveryExchange) {
  std::vector<RoundRecord> rounds;
  std::vector<RoundExchange> exchanges;
  for (uint32_t r = 0; r < 5; ++r) {
    rounds.push_back({r, 10 + r, 4, true, true});
    exchanges.push_back({Round(r, 4), r == 3 ? proto::Bytes{} : Answer(r, 4)});
  }
  auto logs = BuildRoundLogs(kSid, rounds, exchanges);
  ASSERT_TRUE(logs.ok()) << logs.status().ToString();
  ASSERT_EQ(logs->size(), 1u);
  auto log = proto::ParseMessage<proto::RoundLog>(proto::AsView((*logs)[0]));
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(log->root().getFirstRound(), 0u);
  ASSERT_EQ(log->root().getRounds().size(), 5u);
  ASSERT_EQ(log->root().getExchanges().size(), 5u);
  for (uint32_t r = 0; r < 5; ++r) {
    auto e = log->root().getExchanges()[r];
    EXPECT_EQ(*proto::EncodeCanonical(e.getRound()), exchanges[r].round) << r;
    EXPECT_EQ(log->root().getRounds()[r].getElapsedUs(), 10 + r);
    if (r == 3) {
      EXPECT_FALSE(e.hasAnswer());
    } else {
      EXPECT_EQ(*proto::EncodeCanonical(e.getAnswer()), exchanges[r].answer) << r;
    }
  }
}

TEST(RoundLogTest, LongSessionIsSplitUnderTheLimitInOrder) {
  // 12 rounds of 16 Ki labels: ~0.5 MiB each, so several records of at most 4 MiB.
  std::vector<RoundRecord> rounds;
  std::vector<RoundExchange> exchanges;
  for (uint32_t r = 0; r < 12; ++r) {
    rounds.push_back({r, r, 16384, true, true});
    exchanges.push_back({Round(r, 16384), Answer(r, 16384)});
  }
  auto logs = BuildRoundLogs(kSid, rounds, exchanges);
  ASSERT_TRUE(logs.ok()) << logs.status().ToString();
  ASSERT_GT(logs->size(), 1u);
  uint32_t next = 0;
  for (const proto::Bytes& bytes : *logs) {
    EXPECT_LE(bytes.size(), proto::kMaxRoundLogBytes);
    auto log = proto::ParseMessage<proto::RoundLog>(proto::AsView(bytes));
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    EXPECT_EQ(log->root().getFirstRound(), next);
    ASSERT_EQ(log->root().getExchanges().size(), log->root().getRounds().size());
    for (unsigned i = 0; i < log->root().getExchanges().size(); ++i) {
      EXPECT_EQ(log->root().getExchanges()[i].getRound().getRoundIndex(), next + i);
      EXPECT_EQ(*proto::EncodeCanonical(log->root().getExchanges()[i].getAnswer()), exchanges[next + i].answer);
    }
    next += log->root().getRounds().size();
  }
  EXPECT_EQ(next, 12u);
}

TEST(RoundLogTest, MismatchedLengthsAreRefused) {
  auto logs = BuildRoundLogs(kSid, {RoundRecord{}}, {});
  EXPECT_FALSE(logs.ok());
  EXPECT_NE(logs.status().message().find("1 timings but 0 exchanges"), std::string::npos);
}

}  // namespace
}  // namespace wipeproof
