// `ledger export`: the JSON document carries the signed head, which verifies under the challenger's
// public key and matches the ledger; with envelopes the document alone re-verifies the chain.
// threat-model: T-EXPORT-FORGED
#include "challenger/ledger/ledger_export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "challenger/ledger/ledger.h"
#include "common/clock.h"
#include "common/hex.h"
#include "tests/support/ledger_test_util.h"

namespace wipeproof {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;
using ledger_test::Keys;
using ledger_test::SessionId;
using ledger_test::TempDir;


class LedgerExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ledger_ = ledger_test::Must(Ledger::Open(dir_.File("ledger.db"), keys_.challenger, clock_), "Open");
    ledger_test::AppendSession(*ledger_, SessionId(1), keys_);
    clock_.Advance(60'000'000);
    ledger_test::AppendSession(*ledger_, SessionId(2), keys_);
  }

  Json Export(LedgerExportOptions options = {}) {
    auto document = ExportLedgerJson(*ledger_, keys_.challenger.public_key, options, clock_);
    EXPECT_TRUE(document.ok()) << document.status().ToString();
    return document.ok() ? *document : Json();
  }

  Keys keys_;
  FakeClock clock_{1'800'000'000'000'000};  // 2027-01-15T08:00:00Z
  TempDir dir_;
  std::unique_ptr<Ledger> ledger_;
};

TEST_F(LedgerExportTest, DocumentCarriesTheSignedHeadOfTheLedger) {
  const Json document = Export();
  auto head = ledger_->Head();
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(document["format"], "wipeproof-ledger-export/v1");
  EXPECT_EQ(document["verified"], true);
  EXPECT_TRUE(document["session_filter"].is_null());
  EXPECT_EQ(document["challenger_key_id"], proto::KeyIdHex(proto::KeyIdOf(keys_.challenger.public_key)));
  EXPECT_EQ(document["exported_at_unix_us"], 1'800'000'060'000'000);
  EXPECT_EQ(document["exported_at"], "2027-01-15T08:01:00.000000Z");
  const Json& h = document["head"];
  EXPECT_EQ(h["entry_count"], 12u);
  EXPECT_EQ(h["sequence"], 11u);
  EXPECT_EQ(h["entry_digest"], Hex(head->digest));
  EXPECT_EQ(h["envelope"], Hex(head->envelope));
  EXPECT_EQ(h["recorded_at"], "2027-01-15T08:01:00.000000Z");

  auto verified = VerifyExportedHead(document, keys_.challenger.public_key);
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  EXPECT_EQ(verified->sequence, 11u);
  EXPECT_EQ(verified->digest, head->digest);
  // The exported head is what a later `ledger verify --expect_head` checks against.
  EXPECT_TRUE(ledger_->Verify(keys_.challenger.public_key, &*verified).ok());
}

TEST_F(LedgerExportTest, EntriesCarryKindSessionTimeDigestsAndSummary) {
  const Json document = Export();
  const Json& entries = document["entries"];
  ASSERT_EQ(entries.size(), 12u);
  const std::vector<std::string> kinds = {"order", "fillReport", "roundLog", "verdict", "transcript", "receipt"};
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i]["sequence"], i);
    EXPECT_EQ(entries[i]["kind"], kinds[i % 6]);
    EXPECT_EQ(entries[i]["session_id"], Hex(SessionId(i < 6 ? 1 : 2)));
    EXPECT_TRUE(entries[i].contains("envelope"));  // the default: every entry can be verified
  }
  EXPECT_EQ(entries[0]["prev_entry_digest"], std::string(64, '0'));
  EXPECT_EQ(entries[1]["prev_entry_digest"], entries[0]["entry_digest"]);
  EXPECT_EQ(entries[11]["entry_digest"], document["head"]["entry_digest"]);
  EXPECT_EQ(entries[0]["recorded_at"], "2027-01-15T08:00:00.000000Z");

  const auto order = ledger_test::OrderRecord(SessionId(1), keys_);
  EXPECT_EQ(entries[0]["record_bytes"], order.size());
  EXPECT_EQ(entries[0]["record_digest"], Hex(proto::Blake2b256(proto::AsView(order))));
  EXPECT_EQ(entries[0]["summary"]["node"], "node-a");
  EXPECT_EQ(entries[0]["summary"]["round_deadline_us"], 900);
  EXPECT_EQ(entries[0]["summary"]["format"], "posedbBlake3C1");
  EXPECT_EQ(entries[0]["summary"]["signer_key_id"], proto::KeyIdHex(proto::KeyIdOf(keys_.challenger.public_key)));  // orders: the challenger
  EXPECT_EQ(entries[2]["summary"]["rounds"], 4);
  EXPECT_EQ(entries[2]["summary"]["max_elapsed_us"], 103);
  EXPECT_EQ(entries[3]["summary"]["pass"], true);
  EXPECT_EQ(entries[3]["summary"]["failure"], "none");
  EXPECT_EQ(entries[3]["summary"]["statement"], "no bound: parameters not calibrated");
  EXPECT_EQ(entries[5]["summary"]["ledger_sequence"], 3);
}

TEST_F(LedgerExportTest, SessionFilterListsOneSessionButTheHeadCoversAll) {
  LedgerExportOptions options;
  options.session_id = SessionId(1);
  const Json document = Export(options);
  EXPECT_EQ(document["session_filter"], Hex(SessionId(1)));
  ASSERT_EQ(document["entries"].size(), 6u);
  EXPECT_EQ(document["entries"][5]["sequence"], 5u);
  EXPECT_EQ(document["head"]["sequence"], 11u);
  auto result = VerifyLedgerExport(document, keys_.challenger.public_key);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->head.entry_count, 12u);
  EXPECT_EQ(result->verified_entries, 6u);
  EXPECT_EQ(result->unverified_entries, 0u);
  EXPECT_FALSE(result->whole_chain);

  // A filtered export's entries are checked on their own, field by field, all the same.
  Json forged = document;
  forged["entries"][3]["summary"]["pass"] = false;
  Status status = VerifyLedgerExport(forged, keys_.challenger.public_key).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("export entries[3] (ledger entry 3): field 'summary' differs from the signed "
                                          "record: summary.pass is false, the signed record says true"));
}

TEST_F(LedgerExportTest, ExportWithEnvelopesReVerifiesOnItsOwn) {
  LedgerExportOptions options;
  options.include_envelopes = true;
  Json document = Export(options);
  auto result = VerifyLedgerExport(document, keys_.challenger.public_key);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->head.entry_count, 12u);
  EXPECT_EQ(result->verified_entries, 12u);
  EXPECT_EQ(result->unverified_entries, 0u);
  EXPECT_TRUE(result->whole_chain);

  Json dropped = document;
  dropped["entries"].erase(7);
  Status status = VerifyLedgerExport(dropped, keys_.challenger.public_key).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("lists 11 entries but its signed head counts 12"));

  Json edited = document;
  edited["entries"][4]["recorded_at_unix_us"] = 1;
  status = VerifyLedgerExport(edited, keys_.challenger.public_key).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger entry 4: column recorded_at_unix_us"));
}

TEST_F(LedgerExportTest, ExportWithoutEnvelopesCountsEveryEntryUnverified) {
  LedgerExportOptions options;
  options.include_envelopes = false;
  Json document = Export(options);
  ASSERT_FALSE(document["entries"][0].contains("envelope"));
  // An edited summary cannot be caught without the signed record, so nothing is claimed for it.
  document["entries"][3]["summary"]["pass"] = false;
  auto result = VerifyLedgerExport(document, keys_.challenger.public_key);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->head.entry_count, 12u);
  EXPECT_EQ(result->verified_entries, 0u);
  EXPECT_EQ(result->unverified_entries, 12u);
  EXPECT_FALSE(result->whole_chain);
}

TEST_F(LedgerExportTest, FieldsOutsideTheFormatAreRefused) {
  Json document = Export();
  document["entries"][3]["pass"] = true;  // a forged top-level "pass" next to the real summary
  Status status = VerifyLedgerExport(document, keys_.challenger.public_key).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("export entries[3]: field 'pass' is not part of wipeproof-ledger-export/v1"));

  Json wrong_key = Export();
  wrong_key["challenger_public_key"] = Hex(proto::Bytes(32, 7));
  status = VerifyLedgerExport(wrong_key, keys_.challenger.public_key).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("field 'challenger_public_key'"));

  Json wrong_time = Export();
  wrong_time["head"]["recorded_at"] = "2027-01-15T09:00:00.000000Z";
  status = VerifyLedgerExport(wrong_time, keys_.challenger.public_key).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("export head: field 'recorded_at' is '2027-01-15T09:00:00.000000Z'"));
}

TEST_F(LedgerExportTest, TamperedHeadDoesNotVerify) {
  const Json document = Export();
  Json wrong_sequence = document;
  wrong_sequence["head"]["sequence"] = 10;
  wrong_sequence["head"]["entry_count"] = 11;
  EXPECT_EQ(VerifyExportedHead(wrong_sequence, keys_.challenger.public_key).status().code(), StatusCode::kDataLoss);

  Json wrong_envelope = document;
  std::string hex = document["head"]["envelope"];
  hex[hex.size() / 2] = hex[hex.size() / 2] == '0' ? '1' : '0';
  wrong_envelope["head"]["envelope"] = hex;
  Status status = VerifyExportedHead(wrong_envelope, keys_.challenger.public_key).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss) << status.ToString();

  EXPECT_EQ(VerifyExportedHead(document, keys_.other.public_key).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(VerifyExportedHead(Json::object(), keys_.challenger.public_key).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(LedgerExportTest, ExportRefusesABrokenLedger) {
  ASSERT_EQ(ledger_test::ExecSql(dir_.File("ledger.db"), "DELETE FROM entries WHERE sequence = 4"), "");
  auto document = ExportLedgerJson(*ledger_, keys_.challenger.public_key, {}, clock_);
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(document.status().message(), HasSubstr("ledger entry 4 is missing"));
}

TEST_F(LedgerExportTest, EmptyLedgerExportsAnEmptyHead) {
  auto empty = ledger_test::Must(Ledger::Open(dir_.File("empty.db"), keys_.challenger, clock_), "Open");
  auto document = ExportLedgerJson(*empty, keys_.challenger.public_key, {}, clock_);
  ASSERT_TRUE(document.ok()) << document.status().ToString();
  EXPECT_EQ((*document)["head"]["entry_count"], 0u);
  EXPECT_EQ((*document)["entries"].size(), 0u);
  auto result = VerifyLedgerExport(*document, keys_.challenger.public_key);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->head.entry_count, 0u);
  EXPECT_EQ(result->unverified_entries, 0u);
}

}  // namespace
}  // namespace wipeproof
