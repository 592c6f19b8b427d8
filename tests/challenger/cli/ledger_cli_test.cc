// `wipeproof-challenger ledger show|verify|export`: outputs, exit codes and the auditor's round trip
// (export with the signed head, later verify that the ledger still extends it).
// threat-model: T-EXPORT-FORGED
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "challenger/cli/cli_ledger.h"
#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_export.h"
#include "common/clock.h"
#include "common/hex.h"
#include "proto/key_files.h"
#include "tests/support/ledger_test_util.h"

namespace wipeproof {
namespace {

using ledger_test::Keys;
using ledger_test::SessionId;
using ledger_test::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int code;
  std::string out;
  std::string err;
};

class LedgerCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(proto::WritePublicKeyFile(key_path_, keys_.challenger.public_key).ok());
    ASSERT_TRUE(proto::WritePublicKeyFile(other_key_path_, keys_.other.public_key).ok());
    auto ledger = ledger_test::Must(Ledger::Open(ledger_path_, keys_.challenger, clock_), "Open");
    ledger_test::AppendSession(*ledger, SessionId(1), keys_);
    ledger_test::AppendSession(*ledger, SessionId(2), keys_);
  }

  Result Run(std::vector<std::string> args) {
    std::ostringstream out, err;
    const int code = RunLedgerCommand(args, out, err);
    return {code, out.str(), err.str()};
  }

  std::string LedgerFlag() const { return "--ledger=" + ledger_path_; }
  std::string KeyFlag() const { return "--challenger_key=" + key_path_; }

  Keys keys_;
  FakeClock clock_{1'800'000'000'000'000};
  TempDir dir_;
  std::string ledger_path_ = dir_.File("ledger.db");
  std::string key_path_ = dir_.File("challenger.pub");
  std::string other_key_path_ = dir_.File("other.pub");
};

TEST_F(LedgerCliTest, VerifyPrintsTheVerifiedHead) {
  Result r = Run({"verify", LedgerFlag(), KeyFlag()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(": OK: 12 entries; head entry 11 recorded 2027-01-15T08:00:00.000000Z, digest "));
  EXPECT_EQ(r.err, "");
}

TEST_F(LedgerCliTest, ShowListsEntriesAndTheChainStatus) {
  Result r = Run({"show", LedgerFlag(), KeyFlag()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("     3  verdict     101112131415161718191a1b1c1d1e1f  2027-01-15T08:00:00.000000Z"));
  EXPECT_THAT(r.out, HasSubstr("pass=true failure=none bound_stated=false "
                               "statement=\"no bound: parameters not calibrated\"\n"));
  EXPECT_THAT(r.out, HasSubstr("    SEQ  KIND        SESSION                           RECORDED (UTC)               "
                               "SUMMARY\n"));
  EXPECT_THAT(r.out, HasSubstr("chain: OK: 12 entries; head entry 11"));

  Result filtered = Run({"show", LedgerFlag(), KeyFlag(), "--session=" + HexEncode(SessionId(2))});
  EXPECT_EQ(filtered.code, 0) << filtered.err;
  EXPECT_THAT(filtered.out, HasSubstr("     6  order"));
  EXPECT_THAT(filtered.out, Not(HasSubstr("     5  receipt")));
}

TEST_F(LedgerCliTest, TamperedLedgerFailsVerifyAndShowMarksUnverifiedEntries) {
  ASSERT_EQ(ledger_test::ExecSql(ledger_path_, "DELETE FROM entries WHERE sequence = 7"), "");
  Result verify = Run({"verify", LedgerFlag(), KeyFlag()});
  EXPECT_EQ(verify.code, 1);
  EXPECT_THAT(verify.err, HasSubstr("wipeproof-challenger ledger verify: ledger entry 7 is missing"));

  Result show = Run({"show", LedgerFlag(), KeyFlag()});
  EXPECT_EQ(show.code, 1);
  EXPECT_THAT(show.out, HasSubstr("      6  order"));     // verified entries start with a space
  EXPECT_THAT(show.out, HasSubstr("!     8  roundLog"));  // entries after the break are marked
  EXPECT_THAT(show.out, HasSubstr("chain: FAILED: ledger entry 7 is missing"));

  Result exported = Run({"export", LedgerFlag(), KeyFlag()});
  EXPECT_EQ(exported.code, 1);
  EXPECT_EQ(exported.out, "");
}

TEST_F(LedgerCliTest, WrongKeyFails) {
  // A key that did not sign this ledger is an input to fix (2), not a ledger that fails (1).
  Result r = Run({"verify", LedgerFlag(), "--challenger_key=" + other_key_path_});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("was written by challenger key "));
  EXPECT_THAT(r.err, Not(HasSubstr("PERMISSION_DENIED")));
}

TEST_F(LedgerCliTest, ExportThenVerifyAgainstTheExportedHead) {
  const std::string export_path = dir_.File("export.json");
  Result exported = Run({"export", LedgerFlag(), KeyFlag(), "--out=" + export_path});
  ASSERT_EQ(exported.code, 0) << exported.err;
  EXPECT_THAT(exported.err, HasSubstr("wrote 12 entries and the signed head to " + export_path));
  std::ifstream in(export_path);
  auto document = nlohmann::ordered_json::parse(in);
  EXPECT_EQ(document["head"]["sequence"], 11u);
  ASSERT_TRUE(VerifyExportedHead(document, keys_.challenger.public_key).ok());

  Result extends = Run({"verify", LedgerFlag(), KeyFlag(), "--expect_head=" + export_path});
  EXPECT_EQ(extends.code, 0) << extends.err;
  EXPECT_THAT(extends.out, HasSubstr("extends the exported head: entry 11"));

  // Later the ledger grows: it still extends the head. Then its end is cut off: it no longer does.
  {
    auto ledger = ledger_test::Must(Ledger::Open(ledger_path_, keys_.challenger, clock_), "Open");
    ledger_test::AppendSession(*ledger, SessionId(3), keys_);
  }
  EXPECT_EQ(Run({"verify", LedgerFlag(), KeyFlag(), "--expect_head=" + export_path}).code, 0);
  ASSERT_EQ(ledger_test::ExecSql(ledger_path_, "DELETE FROM entries WHERE sequence >= 10"), "");
  EXPECT_EQ(Run({"verify", LedgerFlag(), KeyFlag()}).code, 0);
  Result cut = Run({"verify", LedgerFlag(), KeyFlag(), "--expect_head=" + export_path});
  EXPECT_EQ(cut.code, 1);
  EXPECT_THAT(cut.err, HasSubstr("entries were removed from the end"));
}

TEST_F(LedgerCliTest, ExportToStdoutWithEnvelopesVerifiesOnItsOwn) {
  Result exported = Run({"export", LedgerFlag(), KeyFlag(), "--envelopes"});
  ASSERT_EQ(exported.code, 0) << exported.err;
  const std::string export_path = dir_.File("full.json");
  std::ofstream(export_path) << exported.out;
  Result verified = Run({"verify", KeyFlag(), "--export=" + export_path});
  EXPECT_EQ(verified.code, 0) << verified.err;
  EXPECT_THAT(verified.out, HasSubstr(": OK: 12 entries; head entry 11"));
  EXPECT_THAT(verified.out, HasSubstr("entries: 12 listed, every field verified against its signed envelope; whole "
                                      "chain verified up to the signed head"));
}

TEST_F(LedgerCliTest, VerifyExportNamesAForgedSummaryAndFlagsAnExportWithoutRecords) {
  // Default export carries the records: an edited verdict summary fails, naming entry and field.
  Result full = Run({"export", LedgerFlag(), KeyFlag()});
  ASSERT_EQ(full.code, 0) << full.err;
  auto document = nlohmann::ordered_json::parse(full.out);
  ASSERT_EQ(document["entries"][3]["kind"], "verdict");
  document["entries"][3]["summary"]["pass"] = false;
  const std::string forged_path = dir_.File("forged.json");
  std::ofstream(forged_path) << document.dump(2);
  Result forged = Run({"verify", KeyFlag(), "--export=" + forged_path});
  EXPECT_EQ(forged.code, 1);
  EXPECT_EQ(forged.out, "");
  EXPECT_THAT(forged.err, HasSubstr("export entries[3] (ledger entry 3): field 'summary' differs"));

  // Without records nothing binds the summaries: exit 3 and say so, never "OK".
  Result bare = Run({"export", LedgerFlag(), KeyFlag(), "--envelopes=false"});
  ASSERT_EQ(bare.code, 0) << bare.err;
  const std::string bare_path = dir_.File("bare.json");
  std::ofstream(bare_path) << bare.out;
  Result unverified = Run({"verify", KeyFlag(), "--export=" + bare_path});
  EXPECT_EQ(unverified.code, 3);
  EXPECT_THAT(unverified.out, HasSubstr(": UNVERIFIED: signed head OK (12 entries); 0 listed entries verified; "
                                        "export without records: 12 summaries unverified; re-export with "
                                        "--envelopes to verify them"));
  EXPECT_THAT(unverified.out, ::testing::Not(HasSubstr(": OK")));
}

TEST_F(LedgerCliTest, UsageErrorsExitWithTwo) {
  EXPECT_EQ(Run({}).code, 2);
  EXPECT_EQ(Run({"frobnicate", LedgerFlag(), KeyFlag()}).code, 2);
  EXPECT_EQ(Run({"verify", LedgerFlag()}).code, 2);                        // no key
  EXPECT_EQ(Run({"verify", KeyFlag()}).code, 2);                           // no ledger
  EXPECT_EQ(Run({"verify", LedgerFlag(), KeyFlag(), "--out=x"}).code, 2);  // not a verify flag
  EXPECT_EQ(Run({"show", LedgerFlag(), KeyFlag(), "stray"}).code, 2);
  EXPECT_EQ(Run({"show", LedgerFlag(), KeyFlag(), "--session="}).code, 2);
  Result help = Run({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.out, HasSubstr("usage: wipeproof-challenger ledger <show|verify|export|audit|certificate|decode>"));
  Result verify_help = Run({"verify", "--help"});  // that subcommand's help only
  EXPECT_EQ(verify_help.code, 0);
  EXPECT_THAT(verify_help.out, HasSubstr("usage: wipeproof-challenger ledger verify [flags]"));
}

TEST_F(LedgerCliTest, BadSessionOrMissingFilesExitTwo) {
  Result bad_session = Run({"show", LedgerFlag(), KeyFlag(), "--session=abcd"});
  EXPECT_EQ(bad_session.code, 2);
  EXPECT_THAT(bad_session.err, HasSubstr("--session"));
  Result no_ledger = Run({"verify", "--ledger=" + dir_.File("absent.db"), KeyFlag()});
  EXPECT_EQ(no_ledger.code, 2);
  EXPECT_THAT(no_ledger.err, HasSubstr("absent.db: No such file or directory"));
  EXPECT_THAT(no_ledger.err, Not(HasSubstr("NOT_FOUND")));
}

}  // namespace
}  // namespace wipeproof
