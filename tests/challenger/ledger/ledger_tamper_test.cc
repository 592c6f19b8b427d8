// Ledger verification against an attacker with write access to the SQLite file but not the
// challenger's secret key (issue 4: "verification detects a modified, deleted or reordered entry").
// Each test writes three sessions (entries 0..17), tampers through a raw SQLite connection, and
// checks that verification fails with DATA_LOSS naming the first bad entry and what happened.
// The Export* tests do the same to an export document (`ledger verify --export`): an auditor must
// never be shown an edited field as verified.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_export.h"
#include "challenger/ledger/ledger_verify.h"
#include "common/clock.h"
#include "common/hex.h"
#include "tests/support/ledger_test_util.h"

namespace wipeproof {
namespace {

using ledger_test::ExecSql;
using ledger_test::Keys;
using ledger_test::SessionId;
using ledger_test::TempDir;
using ledger_test::UpdateEnvelope;
using ::testing::HasSubstr;

// threat-model: T-LEDGER-TAMPER
class LedgerTamperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ledger = Ledger::Open(path_, keys_.challenger, clock_);
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    for (uint8_t s = 1; s <= 3; ++s) ledger_test::AppendSession(**ledger, SessionId(s), keys_);
    auto head = (*ledger)->Verify(keys_.challenger.public_key);
    ASSERT_TRUE(head.ok()) << head.status().ToString();
    ASSERT_EQ(head->entry_count, 18u);
    head_ = *head;
  }

  // Verifies through a fresh read-only connection, as an auditor would.
  Status VerifyNow(const proto::PublicKey& key, const LedgerHead* expected_head = nullptr) {
    auto ledger = Ledger::OpenReadOnly(path_);
    if (!ledger.ok()) return ledger.status();
    return (*ledger)->Verify(key, expected_head).status();
  }

  proto::Bytes Envelope(uint64_t sequence) {
    proto::Bytes out;
    auto ledger = ledger_test::Must(Ledger::OpenReadOnly(path_), "OpenReadOnly");
    EXPECT_TRUE(ledger
                    ->ForEachRow(std::nullopt,
                                 [&](const LedgerRow& row) {
                                   if (row.sequence == sequence) out = row.envelope;
                                   return Status::Ok();
                                 })
                    .ok());
    return out;
  }

  // The export an auditor would be handed, of the intact ledger.
  nlohmann::ordered_json ExportNow(bool include_envelopes) {
    auto ledger = ledger_test::Must(Ledger::OpenReadOnly(path_), "OpenReadOnly");
    LedgerExportOptions options;
    options.include_envelopes = include_envelopes;
    return ledger_test::Must(ExportLedgerJson(*ledger, keys_.challenger.public_key, options, clock_), "Export");
  }

  Status VerifyExport(const nlohmann::ordered_json& document) {
    return VerifyLedgerExport(document, keys_.challenger.public_key).status();
  }

  Keys keys_;
  FakeClock clock_;
  TempDir dir_;
  std::string path_ = dir_.File("ledger.db");
  LedgerHead head_;
};

TEST_F(LedgerTamperTest, IntactLedgerVerifies) { EXPECT_TRUE(VerifyNow(keys_.challenger.public_key).ok()); }

TEST_F(LedgerTamperTest, ModifiedPayloadIsDetected) {
  // Change one byte of entry 7's signed payload (inside its record) and keep the old signature.
  auto envelope = ledger_test::Must(proto::DecodeEnvelope(proto::AsView(Envelope(7))), "DecodeEnvelope");
  envelope.payload[envelope.payload.size() / 2] ^= 0x01;
  ASSERT_EQ(UpdateEnvelope(path_, 7, proto::EncodeEnvelope(envelope)), "");
  Status status = VerifyNow(keys_.challenger.public_key);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger entry 7: signature does not verify (modified)"));
}

TEST_F(LedgerTamperTest, ModifiedRawBytesAreDetected) {
  // Overwrite four bytes of the stored blob in SQL, wherever they land.
  const proto::Bytes before = Envelope(4);
  ASSERT_EQ(ExecSql(path_,
                    "UPDATE entries SET envelope = substr(envelope, 1, 200) || X'DEADBEEF' || "
                    "substr(envelope, 205) WHERE sequence = 4 AND substr(envelope, 201, 4) != X'DEADBEEF'"),
            "");
  ASSERT_NE(Envelope(4), before);
  Status status = VerifyNow(keys_.challenger.public_key);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger entry 4:"));
}

TEST_F(LedgerTamperTest, EntryReSignedByAnotherKeyIsDetected) {
  auto envelope = ledger_test::Must(proto::DecodeEnvelope(proto::AsView(Envelope(9))), "DecodeEnvelope");
  auto forged = ledger_test::Must(
      proto::SignEnvelope(proto::MessageKind::LEDGER_ENTRY, proto::AsView(envelope.payload), keys_.other), "Sign");
  ASSERT_EQ(UpdateEnvelope(path_, 9, proto::EncodeEnvelope(forged)), "");
  Status status = VerifyNow(keys_.challenger.public_key);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(),
              HasSubstr("ledger entry 9: signed by key " + proto::KeyIdHex(proto::KeyIdOf(keys_.other.public_key))));
}

TEST_F(LedgerTamperTest, EntrySplicedFromAnotherLedgerOfTheSameKeyIsDetected) {
  // A second ledger of the same challenger: its entry 7 is genuinely signed, with sequence 7, but
  // chains to a different history.
  const std::string other_path = dir_.File("other.db");
  {
    auto other = ledger_test::Must(Ledger::Open(other_path, keys_.challenger, clock_), "Open");
    for (uint8_t s = 4; s <= 5; ++s) ledger_test::AppendSession(*other, SessionId(s), keys_);
  }
  proto::Bytes spliced;
  {
    auto other = ledger_test::Must(Ledger::OpenReadOnly(other_path), "OpenReadOnly");
    ASSERT_TRUE(other
                    ->ForEachRow(std::nullopt,
                                 [&](const LedgerRow& row) {
                                   if (row.sequence == 7) spliced = row.envelope;
                                   return Status::Ok();
                                 })
                    .ok());
  }
  ASSERT_EQ(UpdateEnvelope(path_, 7, spliced), "");
  ASSERT_EQ(
      ExecSql(path_, "UPDATE entries SET session_id = X'" + HexEncode(SessionId(5)) + "', entry_digest = X'" +
                         HexEncode(proto::Blake2b256(proto::AsView(spliced)).data(), 32) + "' WHERE sequence = 7"),
      "");
  Status status = VerifyNow(keys_.challenger.public_key);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger entry 7: chain broken: prevEntryDigest "));
  EXPECT_THAT(status.message(), HasSubstr("does not match entry 6's digest"));
}

TEST_F(LedgerTamperTest, DeletedMiddleEntryIsDetected) {
  ASSERT_EQ(ExecSql(path_, "DELETE FROM entries WHERE sequence = 7"), "");
  Status status = VerifyNow(keys_.challenger.public_key);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger entry 7 is missing: the ledger goes from entry 6 to 8 (deleted)"));
}

TEST_F(LedgerTamperTest, DeletedFirstEntryIsDetected) {
  ASSERT_EQ(ExecSql(path_, "DELETE FROM entries WHERE sequence = 0"), "");
  Status status = VerifyNow(keys_.challenger.public_key);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger entry 0 is missing"));
}

TEST_F(LedgerTamperTest, DeletedEntryWithLaterSequencesRenumberedIsDetected) {
  // Delete entry 7 and shift 8..17 down by one so the sequence column has no gap.
  ASSERT_EQ(ExecSql(path_,
                    "DELETE FROM entries WHERE sequence = 7; "
                    "UPDATE entries SET sequence = sequence + 1000 WHERE sequence > 7; "
                    "UPDATE entries SET sequence = sequence - 1001 WHERE sequence > 1000;"),
            "");
  Status status = VerifyNow(keys_.challenger.public_key);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger entry 7: row 7 holds signed entry 8 (reordered)"));
}

TEST_F(LedgerTamperTest, SwappedSequencesAreDetected) {
  ASSERT_EQ(ExecSql(path_,
                    "UPDATE entries SET sequence = 1000 WHERE sequence = 7; "
                    "UPDATE entries SET sequence = 7 WHERE sequence = 8; "
                    "UPDATE entries SET sequence = 8 WHERE sequence = 1000;"),
            "");
  Status status = VerifyNow(keys_.challenger.public_key);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger entry 7: row 7 holds signed entry 8 (reordered)"));
}

TEST_F(LedgerTamperTest, ModifiedIndexColumnsAreDetected) {
  ASSERT_EQ(ExecSql(path_, "UPDATE entries SET kind = 4 WHERE sequence = 12"), "");
  Status status = VerifyNow(keys_.challenger.public_key);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger entry 12: column kind is 4, the signed entry says order"));

  ASSERT_EQ(ExecSql(path_,
                    "UPDATE entries SET kind = 1 WHERE sequence = 12; "
                    "UPDATE entries SET session_id = X'00112233445566778899aabbccddeeff' WHERE sequence = 13"),
            "");
  status = VerifyNow(keys_.challenger.public_key);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger entry 13: column session_id"));
}

TEST_F(LedgerTamperTest, WrongPublicKeyFails) {
  Status status = VerifyNow(keys_.other.public_key);
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), HasSubstr(proto::KeyIdHex(proto::KeyIdOf(keys_.challenger.public_key))));
}

TEST_F(LedgerTamperTest, TruncatedTailIsCaughtOnlyAgainstAnExportedHead) {
  ASSERT_EQ(ExecSql(path_, "DELETE FROM entries WHERE sequence >= 15"), "");
  // A chain cut at the end is still a valid chain ...
  EXPECT_TRUE(VerifyNow(keys_.challenger.public_key).ok());
  // ... but not one that extends the head an auditor kept.
  Status status = VerifyNow(keys_.challenger.public_key, &head_);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger ends at entry 14 but an exported head names entry 17"));
}

TEST_F(LedgerTamperTest, TailRewrittenAfterAnExportIsCaught) {
  ASSERT_EQ(ExecSql(path_, "DELETE FROM entries WHERE sequence >= 15"), "");
  {
    // The challenger restarts on the cut ledger (its tail verifies) and records another session.
    auto ledger = Ledger::Open(path_, keys_.challenger, clock_);
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    ledger_test::AppendSession(**ledger, SessionId(9), keys_);
  }
  EXPECT_TRUE(VerifyNow(keys_.challenger.public_key).ok());
  Status status = VerifyNow(keys_.challenger.public_key, &head_);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger entry 17: differs from the exported head"));
}

TEST_F(LedgerTamperTest, OpenRefusesToAppendAfterABrokenTail) {
  auto envelope = ledger_test::Must(proto::DecodeEnvelope(proto::AsView(Envelope(17))), "DecodeEnvelope");
  envelope.payload[envelope.payload.size() - 9] ^= 0x80;
  ASSERT_EQ(UpdateEnvelope(path_, 17, proto::EncodeEnvelope(envelope)), "");
  auto ledger = Ledger::Open(path_, keys_.challenger, clock_);
  ASSERT_FALSE(ledger.ok());
  EXPECT_EQ(ledger.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(ledger.status().message(), HasSubstr("refusing to append"));
  EXPECT_THAT(ledger.status().message(), HasSubstr("ledger entry 17"));
}

TEST_F(LedgerTamperTest, OpenRefusesToAppendWhenAMiddleEntryIsMissing) {
  ASSERT_EQ(ExecSql(path_, "DELETE FROM entries WHERE sequence = 3"), "");
  auto ledger = Ledger::Open(path_, keys_.challenger, clock_);
  ASSERT_FALSE(ledger.ok());
  EXPECT_EQ(ledger.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(ledger.status().message(), HasSubstr("17 rows but the last is entry 17: entries are missing"));
}

TEST_F(LedgerTamperTest, AppendRefusesToChainOntoAForeignTail) {
  // A writer that bypasses Open (ledger already open when the file is changed under it).
  auto ledger = ledger_test::Must(Ledger::Open(path_, keys_.challenger, clock_), "Open");
  auto envelope = ledger_test::Must(proto::DecodeEnvelope(proto::AsView(Envelope(17))), "DecodeEnvelope");
  auto forged = ledger_test::Must(
      proto::SignEnvelope(proto::MessageKind::LEDGER_ENTRY, proto::AsView(envelope.payload), keys_.other), "Sign");
  ASSERT_EQ(UpdateEnvelope(path_, 17, proto::EncodeEnvelope(forged)), "");
  const auto session = SessionId(5);
  auto appended = ledger->Append(proto::LedgerRecordKind::ORDER,
                                 proto::AsView(ledger_test::OrderRecord(session, keys_)), proto::AsView(session));
  ASSERT_FALSE(appended.ok());
  EXPECT_EQ(appended.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(appended.status().message(), HasSubstr("refusing to append"));
}

TEST_F(LedgerTamperTest, HonestExportVerifiesEveryEntry) {
  auto result = VerifyLedgerExport(ExportNow(true), keys_.challenger.public_key);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->head.entry_count, 18u);
  EXPECT_EQ(result->verified_entries, 18u);
  EXPECT_EQ(result->unverified_entries, 0u);
  EXPECT_TRUE(result->whole_chain);
}

// threat-model: T-EXPORT-FORGED
TEST_F(LedgerTamperTest, ExportWithForgedVerdictSummaryIsDetected) {
  // Entry 9 is session 2's verdict, a pass of node-a; the forger edits only its summary.
  const auto document = ExportNow(true);
  ASSERT_EQ(document["entries"][9]["kind"], "verdict");
  ASSERT_EQ(document["entries"][9]["summary"]["pass"], true);

  auto flipped = document;
  flipped["entries"][9]["summary"]["pass"] = false;
  Status status = VerifyExport(flipped);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("export entries[9] (ledger entry 9): field 'summary' differs from the "
                                          "signed record: summary.pass is false, the signed record says true"));

  auto renamed = document;
  renamed["entries"][9]["summary"]["node"] = "node-x";
  status = VerifyExport(renamed);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("summary.node is \"node-x\", the signed record says \"node-a\""));

  auto restated = document;
  restated["entries"][9]["summary"]["statement"] = "wiped: at least 99% of memory";
  status = VerifyExport(restated);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("summary.statement is \"wiped: at least 99% of memory\""));

  auto added = document;
  added["entries"][9]["summary"]["audited"] = true;
  status = VerifyExport(added);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("summary.audited is not in the signed record"));
}

// threat-model: T-EXPORT-FORGED
TEST_F(LedgerTamperTest, ExportWithForgedDigestsIsDetected) {
  const auto document = ExportNow(true);
  auto record_digest = document;
  record_digest["entries"][9]["record_digest"] = std::string(64, 'a');
  Status status = VerifyExport(record_digest);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(),
              HasSubstr("export entries[9] (ledger entry 9): field 'record_digest' is " + std::string(64, 'a')));

  auto record_bytes = document;
  record_bytes["entries"][9]["record_bytes"] = 1;
  status = VerifyExport(record_bytes);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("export entries[9] (ledger entry 9): field 'record_bytes' is 1"));

  auto prev = document;
  prev["entries"][10]["prev_entry_digest"] = document["entries"][8]["entry_digest"];
  status = VerifyExport(prev);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(),
              HasSubstr("export entries[10] (ledger entry 10): field 'prev_entry_digest' is " +
                        document["entries"][8]["entry_digest"].get<std::string>() + ", the signed entry says " +
                        document["entries"][9]["entry_digest"].get<std::string>()));

  auto entry_digest = document;
  entry_digest["entries"][10]["entry_digest"] = document["entries"][9]["entry_digest"];
  status = VerifyExport(entry_digest);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("ledger entry 10: column entry_digest does not match the envelope"));

  auto recorded_at = document;
  recorded_at["entries"][10]["recorded_at"] = "2030-01-01T00:00:00.000000Z";
  status = VerifyExport(recorded_at);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("field 'recorded_at' is '2030-01-01T00:00:00.000000Z'"));
}

TEST_F(LedgerTamperTest, ExportWithoutEnvelopesLeavesEverySummaryUnverified) {
  // The tester's forgery on an export without records: the signed head still verifies, but no entry
  // is claimed verified, so the CLI reports the summaries UNVERIFIED and exits 3.
  auto forged = ExportNow(false);
  forged["entries"][9]["summary"]["pass"] = false;
  forged["entries"][9]["summary"]["node"] = "node-x";
  forged["entries"][9]["record_digest"] = std::string(64, 'a');
  auto result = VerifyLedgerExport(forged, keys_.challenger.public_key);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->head.entry_count, 18u);
  EXPECT_EQ(result->verified_entries, 0u);
  EXPECT_EQ(result->unverified_entries, 18u);
  EXPECT_FALSE(result->whole_chain);

  // One envelope put back: that entry is checked (and its forgery caught), the rest still unverified.
  const auto full = ExportNow(true);
  forged["entries"][9]["envelope"] = full["entries"][9]["envelope"];
  Status status = VerifyExport(forged);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("export entries[9] (ledger entry 9): field 'record_digest'"));
}

// The authority-signed documents sit outside the chain, each under its own digest: recorded once, read
// back with the digest recomputed, and a body altered in place (its stored digest kept) is refused.
TEST_F(LedgerTamperTest, DocumentsAreKeptOnceUnderTheirOwnDigest) {
  const std::string inventory = R"({"nodes": [], "reserves": {}})";
  {
    auto ledger = ledger_test::Must(Ledger::Open(path_, keys_.challenger, clock_), "Open");
    ASSERT_TRUE(ledger->RecordDocument("inventory", inventory).ok());
    ASSERT_TRUE(ledger->RecordDocument("inventory", inventory).ok());  // a restart records it again: kept once
    EXPECT_EQ(ledger->RecordDocument("inventory", "").code(), StatusCode::kInvalidArgument);
  }
  auto reader = ledger_test::Must(Ledger::OpenReadOnly(path_), "OpenReadOnly");
  auto documents = reader->Documents();
  ASSERT_TRUE(documents.ok()) << documents.status().ToString();
  ASSERT_EQ(documents->size(), 1u);
  EXPECT_EQ((*documents)[0].kind, "inventory");
  EXPECT_EQ((*documents)[0].body, inventory);
  const proto::Digest digest =
      proto::Blake2b256(proto::ByteView(reinterpret_cast<const uint8_t*>(inventory.data()), inventory.size()));
  EXPECT_EQ((*documents)[0].digest, digest);
  EXPECT_EQ(reader->RecordDocument("inventory", inventory).code(), StatusCode::kFailedPrecondition);  // read-only
  ExecSql(path_, "UPDATE documents SET body = CAST('{\"nodes\": [1]}' AS BLOB)");
  auto altered = Ledger::OpenReadOnly(path_).value()->Documents();
  EXPECT_EQ(altered.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(altered.status().message(), HasSubstr("is stored under a digest that is not its body's (altered)"));
  // A ledger made before documents were recorded has no such table: none, no error.
  ExecSql(path_, "DROP TABLE documents");
  auto none = Ledger::OpenReadOnly(path_).value()->Documents();
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace wipeproof
