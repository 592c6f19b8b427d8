// Ledger store: append and verify real signed records of every kind, the chain's values, reopening
// (a challenger restart), read-only access, record checks at append time and concurrent appends.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_verify.h"
#include "common/clock.h"
#include "tests/support/ledger_test_util.h"

namespace wipeproof {
namespace {

using ledger_test::AppendSession;
using ledger_test::Keys;
using ledger_test::SessionId;
using ledger_test::TempDir;
using proto::LedgerRecordKind;

class LedgerStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<Ledger> OpenLedger(LedgerOptions options = {}) {
    auto ledger = Ledger::Open(path_, keys_.challenger, clock_, std::move(options));
    EXPECT_TRUE(ledger.ok()) << ledger.status().ToString();
    return ledger.ok() ? std::move(ledger).value() : nullptr;
  }

  Keys keys_;
  FakeClock clock_{1'800'000'000'000'000};
  TempDir dir_;
  std::string path_ = dir_.File("ledger.db");
};

TEST_F(LedgerStoreTest, AppendsEveryKindAndVerifies) {
  auto ledger = OpenLedger();
  ASSERT_NE(ledger, nullptr);
  const auto session = SessionId(1);
  const auto records = ledger_test::SessionRecords(session, keys_);
  for (size_t i = 0; i < records.size(); ++i) {
    clock_.Advance(1000);
    auto sequence = ledger->Append(records[i].first, proto::AsView(records[i].second), proto::AsView(session));
    ASSERT_TRUE(sequence.ok()) << sequence.status().ToString();
    EXPECT_EQ(*sequence, i);
  }
  auto head = ledger->Verify(keys_.challenger.public_key);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->entry_count, 6u);
  EXPECT_EQ(head->sequence, 5u);
  EXPECT_EQ(head->recorded_at_unix_us, 1'800'000'000'006'000);

  // The stored entries are exactly what the API documents: a signed LedgerEntry per record, each
  // linking to the BLAKE2b-256 of the previous envelope, genesis linking to zeros.
  std::vector<LedgerRow> rows;
  ASSERT_TRUE(ledger
                  ->ForEachRow(std::nullopt,
                               [&](const LedgerRow& row) {
                                 rows.push_back(row);
                                 return Status::Ok();
                               })
                  .ok());
  ASSERT_EQ(rows.size(), 6u);
  proto::Digest prev{};
  for (size_t i = 0; i < rows.size(); ++i) {
    auto entry =
        proto::VerifyAndParse<proto::LedgerEntry>(proto::AsView(rows[i].envelope), keys_.challenger.public_key);
    ASSERT_TRUE(entry.ok()) << entry.status().ToString();
    auto e = entry->root();
    EXPECT_EQ(e.getSequence(), i);
    EXPECT_EQ(e.getKind(), records[i].first);
    EXPECT_EQ(proto::Bytes(e.getRecord().begin(), e.getRecord().end()), records[i].second);
    EXPECT_EQ(proto::Bytes(e.getSessionId().begin(), e.getSessionId().end()), session);
    EXPECT_EQ(e.getRecordedAtUnixUs(), 1'800'000'000'000'000 + 1000 * static_cast<int64_t>(i + 1));
    proto::Digest link;
    std::copy(e.getPrevEntryDigest().begin(), e.getPrevEntryDigest().end(), link.begin());
    EXPECT_EQ(link, prev) << "entry " << i;
    prev = proto::Blake2b256(proto::AsView(rows[i].envelope));
    EXPECT_EQ(rows[i].entry_digest, proto::Bytes(prev.begin(), prev.end()));
  }
  EXPECT_EQ(head->digest, prev);

  auto stored_head = ledger->Head();
  ASSERT_TRUE(stored_head.ok());
  EXPECT_EQ(stored_head->digest, prev);
  EXPECT_EQ(stored_head->envelope, rows.back().envelope);
}

TEST_F(LedgerStoreTest, EmptyLedgerVerifies) {
  auto ledger = OpenLedger();
  ASSERT_NE(ledger, nullptr);
  auto head = ledger->Verify(keys_.challenger.public_key);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->entry_count, 0u);
  auto stored = ledger->Head();
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->entry_count, 0u);
}

TEST_F(LedgerStoreTest, ReopenContinuesTheChain) {
  proto::Digest head_before{};
  {
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    EXPECT_EQ(AppendSession(*ledger, SessionId(1), keys_), (std::vector<uint64_t>{0, 1, 2, 3, 4, 5}));
    head_before = ledger->Head()->digest;
  }  // the challenger stops
  auto ledger = OpenLedger();
  ASSERT_NE(ledger, nullptr);
  auto sequences = AppendSession(*ledger, SessionId(2), keys_);
  EXPECT_EQ(sequences, (std::vector<uint64_t>{6, 7, 8, 9, 10, 11}));
  auto head = ledger->Verify(keys_.challenger.public_key);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->entry_count, 12u);
  // Entry 6 links to the head before the restart.
  std::optional<proto::Digest> link;
  ASSERT_TRUE(ledger
                  ->ForEachRow(SessionId(2),
                               [&](const LedgerRow& row) {
                                 if (row.sequence == 6)
                                   link = VerifyLedgerRow(row, keys_.challenger.public_key)->prev_entry_digest;
                                 return Status::Ok();
                               })
                  .ok());
  ASSERT_TRUE(link.has_value());
  EXPECT_EQ(*link, head_before);
}

TEST_F(LedgerStoreTest, OpenRefusesAnotherChallengersLedger) {
  ASSERT_NE(OpenLedger(), nullptr);
  auto other = Ledger::Open(path_, keys_.other, clock_);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(other.status().message().find(proto::KeyIdHex(proto::KeyIdOf(keys_.challenger.public_key))),
            std::string::npos)
      << other.status().message();
}

TEST_F(LedgerStoreTest, OpenRefusesAFileThatIsNotALedger) {
  ASSERT_EQ(ledger_test::ExecSql(path_ + ".other", "CREATE TABLE t (x)"), "") << "set-up";
  auto ledger = Ledger::Open(path_ + ".other", keys_.challenger, clock_);
  ASSERT_FALSE(ledger.ok());
  EXPECT_EQ(ledger.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(LedgerStoreTest, FileIsInWalModeWithOurApplicationId) {
  ASSERT_NE(OpenLedger(), nullptr);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto query = [&](const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_step(stmt), SQLITE_ROW);
    std::string value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    return value;
  };
  EXPECT_EQ(query("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(query("PRAGMA application_id"), std::to_string(kLedgerApplicationId));
  EXPECT_EQ(query("PRAGMA user_version"), "1");
  sqlite3_close_v2(db);
}

TEST_F(LedgerStoreTest, ReadOnlyLedgerReadsAndVerifiesButRefusesAppends) {
  {
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    AppendSession(*ledger, SessionId(1), keys_);
  }
  auto reader = Ledger::OpenReadOnly(path_);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_TRUE((*reader)->read_only());
  auto head = (*reader)->Verify(keys_.challenger.public_key);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->entry_count, 6u);
  const auto session = SessionId(1);
  auto appended = (*reader)->Append(LedgerRecordKind::ROUND_LOG, proto::AsView(ledger_test::RoundLogRecord(session, 1)),
                                    proto::AsView(session));
  ASSERT_FALSE(appended.ok());
  EXPECT_EQ(appended.status().code(), StatusCode::kFailedPrecondition);

  auto missing = Ledger::OpenReadOnly(dir_.File("absent.db"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST_F(LedgerStoreTest, AppendRejectsRecordsThatDoNotMatchTheirKind) {
  auto ledger = OpenLedger();
  ASSERT_NE(ledger, nullptr);
  const auto session = SessionId(1);
  const auto order = ledger_test::OrderRecord(session, keys_);
  struct Case {
    const char* name;
    LedgerRecordKind kind;
    proto::Bytes record;
    proto::Bytes session;
    StatusCode code;
  };
  const std::vector<Case> cases = {
      {"order filed as verdict", LedgerRecordKind::VERDICT, order, session, StatusCode::kInvalidArgument},
      {"unknown kind", LedgerRecordKind::UNKNOWN, order, session, StatusCode::kInvalidArgument},
      {"garbage bytes", LedgerRecordKind::ORDER, proto::Bytes(64, 0xab), session, StatusCode::kInvalidArgument},
      {"other session", LedgerRecordKind::ORDER, order, SessionId(2), StatusCode::kInvalidArgument},
      {"no session", LedgerRecordKind::ORDER, order, {}, StatusCode::kInvalidArgument},
      {"short session id", LedgerRecordKind::ORDER, order, proto::Bytes(15, 1), StatusCode::kInvalidArgument},
      {"verdict signed by another key", LedgerRecordKind::VERDICT, ledger_test::VerdictRecord(session, keys_.other),
       session, StatusCode::kPermissionDenied},
  };
  for (const Case& c : cases) {
    auto sequence = ledger->Append(c.kind, proto::AsView(c.record), proto::AsView(c.session));
    ASSERT_FALSE(sequence.ok()) << c.name;
    EXPECT_EQ(sequence.status().code(), c.code) << c.name << ": " << sequence.status().ToString();
  }
  // Nothing was written, so the next good record is entry 0.
  auto sequence = ledger->Append(LedgerRecordKind::ORDER, proto::AsView(order), proto::AsView(session));
  ASSERT_TRUE(sequence.ok()) << sequence.status().ToString();
  EXPECT_EQ(*sequence, 0u);
}

TEST_F(LedgerStoreTest, ForEachRowFiltersBySession) {
  auto ledger = OpenLedger();
  ASSERT_NE(ledger, nullptr);
  AppendSession(*ledger, SessionId(1), keys_);
  AppendSession(*ledger, SessionId(2), keys_);
  std::vector<uint64_t> seen;
  ASSERT_TRUE(ledger
                  ->ForEachRow(SessionId(2),
                               [&](const LedgerRow& row) {
                                 seen.push_back(row.sequence);
                                 return Status::Ok();
                               })
                  .ok());
  EXPECT_EQ(seen, (std::vector<uint64_t>{6, 7, 8, 9, 10, 11}));
}

TEST_F(LedgerStoreTest, ConcurrentAppendsFromSeveralThreadsFormOneChain) {
  auto ledger = OpenLedger();
  ASSERT_NE(ledger, nullptr);
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { AppendSession(*ledger, SessionId(static_cast<uint8_t>(t + 1)), keys_); });
  }
  for (auto& thread : threads) thread.join();
  auto head = ledger->Verify(keys_.challenger.public_key);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->entry_count, 6u * kThreads);
}

TEST_F(LedgerStoreTest, RoomCheckPassesWithSpace) {
  auto ledger = OpenLedger();
  ASSERT_NE(ledger, nullptr);
  EXPECT_TRUE(ledger->CheckRoomForSession(1 << 20).ok());
}

}  // namespace
}  // namespace wipeproof
