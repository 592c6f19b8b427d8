// Ledger faults (issue 6): a challenger killed mid-append or mid-session leaves a ledger that is
// intact and verifiable after restart; a full disk makes appends fail with RESOURCE_EXHAUSTED
// ("refusing new sessions") without losing or corrupting what is already recorded.
// threat-model: T-LEDGER-FULL
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "challenger/ledger/ledger.h"
#include "common/clock.h"
#include "tests/support/ledger_test_util.h"

namespace wipeproof {
namespace {

using ledger_test::Keys;
using ledger_test::SessionId;
using ledger_test::TempDir;
using proto::LedgerRecordKind;
using ::testing::HasSubstr;

class LedgerFaultTest : public ::testing::Test {
 protected:
  StatusOr<uint64_t> AppendRoundLog(Ledger& ledger, uint8_t session_byte) {
    const auto session = SessionId(session_byte);
    return ledger.Append(LedgerRecordKind::ROUND_LOG, proto::AsView(ledger_test::RoundLogRecord(session, 8)),
                         proto::AsView(session));
  }

  // Reopens for appending (as a restarted challenger) and verifies the whole chain.
  StatusOr<LedgerHead> ReopenAndVerify() {
    WP_ASSIGN_OR_RETURN(std::unique_ptr<Ledger> ledger, Ledger::Open(path_, keys_.challenger, clock_));
    return ledger->Verify(keys_.challenger.public_key);
  }

  Keys keys_;
  FakeClock clock_;
  TempDir dir_;
  std::string path_ = dir_.File("ledger.db");
};

TEST_F(LedgerFaultTest, ProcessKilledBetweenInsertAndCommitLosesOnlyThatAppend) {
  {
    auto ledger = ledger_test::Must(Ledger::Open(path_, keys_.challenger, clock_), "Open");
    ledger_test::AppendSession(*ledger, SessionId(1), keys_);
  }
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Child: the INSERT of entry 6 has run inside the transaction; the process dies before COMMIT.
    LedgerOptions options;
    options.before_commit_for_testing = [](uint64_t sequence) -> Status { ::_exit(sequence == 6 ? 42 : 3); };
    auto ledger = Ledger::Open(path_, keys_.challenger, clock_, options);
    if (!ledger.ok()) ::_exit(1);
    (void)AppendRoundLog(**ledger, 2);
    ::_exit(2);
  }
  int wstatus = 0;
  ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus));
  ASSERT_EQ(WEXITSTATUS(wstatus), 42) << "the child did not reach the commit point";

  auto head = ReopenAndVerify();
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->entry_count, 6u);
  auto ledger = ledger_test::Must(Ledger::Open(path_, keys_.challenger, clock_), "Open");
  auto sequence = AppendRoundLog(*ledger, 2);
  ASSERT_TRUE(sequence.ok()) << sequence.status().ToString();
  EXPECT_EQ(*sequence, 6u);
  EXPECT_TRUE(ledger->Verify(keys_.challenger.public_key).ok());
}

TEST_F(LedgerFaultTest, SigkillDuringAppendsLeavesAVerifiableLedger) {
  ledger_test::Must(Ledger::Open(path_, keys_.challenger, clock_), "create");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(ready[0]);
    auto ledger = Ledger::Open(path_, keys_.challenger, clock_);
    if (!ledger.ok()) ::_exit(1);
    for (int i = 0;; ++i) {
      if (!AppendRoundLog(**ledger, static_cast<uint8_t>(i)).ok()) ::_exit(2);
      if (i == 20 && ::write(ready[1], "x", 1) != 1) ::_exit(3);
    }
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1) << "the child stopped before 21 appends";
  ::close(ready[0]);
  ::usleep(3000);  // let it get into the middle of further appends
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(wstatus));

  auto head = ReopenAndVerify();
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_GE(head->entry_count, 21u);
  auto ledger = ledger_test::Must(Ledger::Open(path_, keys_.challenger, clock_), "Open");
  auto sequence = AppendRoundLog(*ledger, 1);
  ASSERT_TRUE(sequence.ok()) << sequence.status().ToString();
  EXPECT_EQ(*sequence, head->entry_count);
}

TEST_F(LedgerFaultTest, FailedCommitRollsBackAndTheSequenceIsReused) {
  int calls = 0;
  LedgerOptions options;
  options.before_commit_for_testing = [&calls](uint64_t sequence) -> Status {
    ++calls;
    return sequence == 3 && calls == 4 ? InternalError("injected failure before commit") : Status::Ok();
  };
  auto ledger = ledger_test::Must(Ledger::Open(path_, keys_.challenger, clock_, options), "Open");
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(*AppendRoundLog(*ledger, 1), i);
  auto failed = AppendRoundLog(*ledger, 1);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kInternal);
  EXPECT_THAT(failed.status().message(), HasSubstr("injected failure before commit"));
  auto head = ledger->Verify(keys_.challenger.public_key);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->entry_count, 3u);
  auto retried = AppendRoundLog(*ledger, 1);
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_EQ(*retried, 3u);
  EXPECT_TRUE(ledger->Verify(keys_.challenger.public_key).ok());
}

TEST_F(LedgerFaultTest, DiskFullRefusesAppendsAndKeepsTheLedgerVerifiable) {
  LedgerOptions options;
  options.max_page_count = 24;  // 24 pages of 4 KiB: a "disk" of 96 KiB
  auto ledger = ledger_test::Must(Ledger::Open(path_, keys_.challenger, clock_, options), "Open");
  EXPECT_EQ(ledger->CheckRoomForSession().code(), StatusCode::kResourceExhausted);

  uint64_t appended = 0;
  Status full;
  for (uint8_t s = 1; s < 200 && full.ok(); ++s) {
    for (const auto& [kind, record] : ledger_test::SessionRecords(SessionId(s), keys_)) {
      auto sequence = ledger->Append(kind, proto::AsView(record), proto::AsView(SessionId(s)));
      if (!sequence.ok()) {
        full = sequence.status();
        break;
      }
      EXPECT_EQ(*sequence, appended);
      ++appended;
    }
  }
  ASSERT_FALSE(full.ok()) << "the page limit was never reached";
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(full.message(), HasSubstr("ledger disk full: refusing new sessions"));
  EXPECT_GT(appended, 6u);
  EXPECT_EQ(ledger->CheckRoomForSession(64 << 10).code(), StatusCode::kResourceExhausted);

  // Everything recorded before the disk filled is intact, also after a restart.
  auto head = ledger->Verify(keys_.challenger.public_key);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->entry_count, appended);
  ledger.reset();
  head = ReopenAndVerify();
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->entry_count, appended);

  // With room again (no page limit), the chain continues at the next sequence.
  ledger = ledger_test::Must(Ledger::Open(path_, keys_.challenger, clock_), "Open");
  auto sequence = AppendRoundLog(*ledger, 1);
  ASSERT_TRUE(sequence.ok()) << sequence.status().ToString();
  EXPECT_EQ(*sequence, appended);
  EXPECT_TRUE(ledger->Verify(keys_.challenger.public_key).ok());
}

TEST_F(LedgerFaultTest, ReaderSeesCommittedEntriesWhileTheWriterRuns) {
  auto writer = ledger_test::Must(Ledger::Open(path_, keys_.challenger, clock_), "Open");
  ledger_test::AppendSession(*writer, SessionId(1), keys_);
  auto reader = ledger_test::Must(Ledger::OpenReadOnly(path_), "OpenReadOnly");
  auto head = reader->Verify(keys_.challenger.public_key);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->entry_count, 6u);
  ledger_test::AppendSession(*writer, SessionId(2), keys_);
  head = reader->Verify(keys_.challenger.public_key);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->entry_count, 12u);
}

}  // namespace
}  // namespace wipeproof
