// `ledger audit` (challenger/audit/ledger_audit.h, session_audit.h): real sessions of the
// challenger against the test agent, recorded in a real ledger and exported with their keys, pass
// the audit; each check then meets a forgery that every other check lets through. A forger here
// holds the challenger key (it rewrites and re-signs the whole ledger) and, where a test says so,
// the node key (a colluding node) or another authority key; what it cannot forge without a key is
// what the audit leans on.
#include "challenger/audit/ledger_audit.h"

#include <capnp/message.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <kj/async-io.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "challenger/audit/verdict_recheck.h"
#include "challenger/cli/cli_ledger.h"
#include "challenger/fleet/plan_builder.h"
#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_export.h"
#include "challenger/ledger/ledger_record_json.h"
#include "challenger/ledger/ledger_record_sink.h"
#include "challenger/ledger/wipe_schema.h"
#include "challenger/session/assumptions.h"
#include "challenger/session/occupancy_bound.h"
#include "challenger/session/session_runner.h"
#include "common/hex.h"
#include "proto/codec.h"
#include "proto/key_files.h"
#include "proto/signing.h"
#include "proto/transcript.h"
#include "tests/support/challenger_fixtures.h"
#include "tests/support/ledger_test_util.h"

namespace wipeproof {
namespace {

using Json = nlohmann::ordered_json;
using proto::Bytes;
using proto::FailureReason;
using proto::LedgerRecordKind;
using testing::Deviation;
using testing::DeviationKind;
using ::testing::HasSubstr;

template <typename T>
T Must(StatusOr<T> value) {
  return ledger_test::Must(std::move(value), "test set-up");
}

// A message of type T as an editable builder, copied from its canonical bytes.
template <typename T>
std::unique_ptr<capnp::MallocMessageBuilder> Editable(proto::ByteView canonical) {
  auto parsed = Must(proto::ParseMessage<T>(canonical));
  // One segment that holds the whole message and its edits: a copy spread over several segments
  // would need double-far pointers, which this capnp's canonicalizer refuses.
  auto builder = std::make_unique<capnp::MallocMessageBuilder>(static_cast<unsigned>(canonical.size() / 8 + 4096));
  builder->setRoot(parsed.root());
  return builder;
}

template <typename T>
std::unique_ptr<capnp::MallocMessageBuilder> EditablePayload(const Bytes& envelope_record) {
  proto::SignedEnvelope envelope = Must(proto::DecodeEnvelope(proto::AsView(envelope_record)));
  return Editable<T>(proto::AsView(envelope.payload));
}


// One session's records as editable messages. Forge() re-signs them consistently: every digest and
// sequence a record names is set to the re-signed records', the transcript recomputed over the
// (edited) rounds and signed with the node key, the chain rebuilt under the challenger key.
struct Forgery {
  enum Stage { kOrder, kReport, kVerdicts, kTranscript, kReceipt };

  std::vector<LedgerRecordKind> kinds;  // the records, in ledger order
  Bytes session_id;
  std::unique_ptr<capnp::MallocMessageBuilder> order, report, transcript, receipt;
  std::vector<std::unique_ptr<capnp::MallocMessageBuilder>> logs, verdicts, notices;
  Bytes original_transcript;  // the node's own envelope

  proto::KeyPair node = testing::TestKey(0x33);
  proto::KeyPair challenger = testing::TestKey(0x22);
  proto::KeyPair order_signer = testing::TestKey(0x22);  // the challenger, under the order's delegation
  bool resign_transcript = true;  // false: a forger without the node key keeps the node's envelope
  // Called at each stage after its digests are set, just before the stage is signed.
  std::function<void(Forgery&, Stage)> tamper;

  proto::WipeOrder::Builder Order() { return order->getRoot<proto::WipeOrder>(); }
  proto::FillReport::Builder Report() { return report->getRoot<proto::FillReport>(); }
  proto::RoundLog::Builder Log(size_t i = 0) { return logs[i]->getRoot<proto::RoundLog>(); }
  proto::DeviceFillNotice::Builder Notice(size_t i = 0) { return notices[i]->getRoot<proto::DeviceFillNotice>(); }
  proto::Verdict::Builder Verdict(size_t i = 0) { return verdicts[i]->getRoot<proto::Verdict>(); }
  proto::TranscriptDigest::Builder Transcript() { return transcript->getRoot<proto::TranscriptDigest>(); }
  proto::Receipt::Builder Receipt() { return receipt->getRoot<proto::Receipt>(); }

  // The records, signed, in ledger order.
  std::vector<Bytes> Sign() {
    auto stage = [&](Stage s) {
      if (tamper) tamper(*this, s);
    };
    stage(kOrder);
    const proto::SignedEnvelope order_env = Must(proto::SignMessage(Order().asReader(), order_signer));
    const proto::Digest order_digest = proto::Blake2b256(proto::AsView(order_env.payload));
    std::optional<proto::SignedEnvelope> report_env;
    proto::Digest report_digest{};
    if (report) {
      Report().setOrderDigest(proto::AsView(order_digest));
      stage(kReport);
      report_env = Must(proto::SignMessage(Report().asReader(), node));
      report_digest = proto::Blake2b256(proto::AsView(report_env->payload));
    }
    std::vector<proto::SignedEnvelope> notice_envs;
    for (size_t i = 0; i < notices.size(); ++i) {
      Notice(i).setOrderDigest(proto::AsView(order_digest));
      notice_envs.push_back(Must(proto::SignMessage(Notice(i).asReader(), node)));
    }
    std::vector<Bytes> log_bytes;
    for (auto& log : logs)
      log_bytes.push_back(Must(proto::EncodeCanonical(log->getRoot<proto::RoundLog>().asReader())));
    std::vector<proto::SignedEnvelope> verdict_envs;
    for (size_t i = 0; i < verdicts.size(); ++i) {
      Verdict(i).setOrderDigest(proto::AsView(order_digest));
      if (report) Verdict(i).setReportDigest(proto::AsView(report_digest));
    }
    stage(kVerdicts);
    for (size_t i = 0; i < verdicts.size(); ++i) {
      verdict_envs.push_back(Must(proto::SignMessage(Verdict(i).asReader(), challenger)));
    }
    std::optional<proto::SignedEnvelope> transcript_env;
    if (transcript) {
      if (resign_transcript) {
        proto::TranscriptHasher hasher;
        EXPECT_TRUE(hasher.AddOrder(proto::AsView(order_env.payload)).ok());
        for (size_t i = 0; i < notice_envs.size(); ++i) {
          EXPECT_TRUE(
              hasher.AddNotice(Notice(i).asReader().getDeviceIndex(), proto::AsView(notice_envs[i].payload)).ok());
        }
        EXPECT_TRUE(hasher.AddReport(proto::AsView(report_env->payload)).ok());
        for (auto& log : logs) {
          for (auto exchange : log->getRoot<proto::RoundLog>().getExchanges()) {
            EXPECT_TRUE(hasher.AddRound(exchange.getRound().asReader(), exchange.getAnswer().asReader()).ok());
          }
        }
        Transcript().setRoundCount(hasher.round_count());
        Transcript().setDigest(proto::AsView(Must(hasher.Finish())));
        Transcript().setVerdictDigest(proto::AsView(proto::Blake2b256(proto::AsView(verdict_envs[0].payload))));
        stage(kTranscript);
        transcript_env = Must(proto::SignMessage(Transcript().asReader(), node));
      } else {
        transcript_env = Must(proto::DecodeEnvelope(proto::AsView(original_transcript)));
      }
    }
    if (receipt) {
      Receipt().setOrderDigest(proto::AsView(order_digest));
      if (report) Receipt().setReportDigest(proto::AsView(report_digest));
      Receipt().setVerdictDigest(proto::AsView(proto::Blake2b256(proto::AsView(verdict_envs.back().payload))));
      uint64_t last_verdict = 0;
      for (size_t i = 0; i < kinds.size(); ++i) {
        if (kinds[i] == LedgerRecordKind::VERDICT) last_verdict = i;
      }
      Receipt().setLedgerSequence(last_verdict);
      if (Receipt().hasTranscript() && transcript_env)
        proto::WriteEnvelope(*transcript_env, Receipt().initTranscript());
      stage(kReceipt);
    }
    std::vector<Bytes> out;
    size_t log = 0, verdict = 0, notice = 0;
    for (LedgerRecordKind kind : kinds) {
      switch (kind) {
        case LedgerRecordKind::ORDER:
          out.push_back(proto::EncodeEnvelope(order_env));
          break;
        case LedgerRecordKind::DEVICE_FILL_NOTICE:
          out.push_back(proto::EncodeEnvelope(notice_envs[notice++]));
          break;
        case LedgerRecordKind::FILL_REPORT:
          out.push_back(proto::EncodeEnvelope(*report_env));
          break;
        case LedgerRecordKind::ROUND_LOG:
          out.push_back(log_bytes[log++]);
          break;
        case LedgerRecordKind::VERDICT:
          out.push_back(proto::EncodeEnvelope(verdict_envs[verdict++]));
          break;
        case LedgerRecordKind::TRANSCRIPT:
          out.push_back(proto::EncodeEnvelope(*transcript_env));
          break;
        case LedgerRecordKind::RECEIPT:
          out.push_back(proto::EncodeEnvelope(Must(proto::SignMessage(Receipt().asReader(), challenger))));
          break;
        default:
          ADD_FAILURE() << "unexpected record kind";
      }
    }
    return out;
  }

  // Sets every verdict's chunksChecked to the distinct chunks of the leading rounds the round log
  // marks right and in time (what an audit recomputes, when the marks are true).
  void FixChunksChecked() {
    const uint64_t m = Order().getChunkLabels();
    std::vector<std::set<uint64_t>> chunks(Order().getDevices().size());
    bool leading = true;
    for (auto& log : logs) {
      auto l = log->getRoot<proto::RoundLog>();
      for (unsigned i = 0; i < l.getRounds().size() && leading; ++i) {
        if (!l.getRounds()[i].getAllCorrect() || !l.getRounds()[i].getDeadlineMet()) {
          leading = false;
          break;
        }
        // Proof rounds only: every planned device with exactly its labelsPerRound indices.
        std::vector<uint64_t> sizes(chunks.size(), 0);
        for (auto device : l.getExchanges()[i].getRound().getDevices()) {
          if (device.getDeviceIndex() < sizes.size()) sizes[device.getDeviceIndex()] += device.getLabelIndices().size();
        }
        bool proof = true;
        for (unsigned d = 0; d < sizes.size(); ++d)
          proof = proof && sizes[d] == Order().getDevices()[d].getLabelsPerRound();
        if (!proof) continue;
        for (auto device : l.getExchanges()[i].getRound().getDevices()) {
          for (uint64_t g : device.getLabelIndices()) chunks[device.getDeviceIndex()].insert(g / m);
        }
      }
    }
    for (size_t v = 0; v < verdicts.size(); ++v) {
      for (unsigned d = 0; d < chunks.size(); ++d) Verdict(v).getDevices()[d].setChunksChecked(chunks[d].size());
    }
  }

  // Copies the round log's timing rows into every verdict.
  void CopyTimingsToVerdicts() {
    std::vector<proto::RoundTiming::Reader> rows;
    for (auto& log : logs) {
      for (auto row : log->getRoot<proto::RoundLog>().getRounds()) rows.push_back(row.asReader());
    }
    for (size_t v = 0; v < verdicts.size(); ++v) {
      auto list = Verdict(v).initRounds(static_cast<unsigned>(rows.size()));
      for (unsigned i = 0; i < rows.size(); ++i) list.setWithCaveats(i, rows[i]);
    }
  }
};

// threat-model: T-AUDIT-REWRITE
class LedgerAuditTest : public ::testing::Test {
 protected:
  LedgerAuditTest() : io_(kj::setupAsyncIo()) {}
  ~LedgerAuditTest() noexcept override {}

  void SetUp() override {
    ledger_ = Must(Ledger::Open(ledger_path_, challenger_, clock_));
    // As `wipe` and `serve` do when they open their ledger (cli_flags.h LedgerFromFlag).
    ASSERT_TRUE(ledger_->RecordDocument("inventory", inventory_.text).ok());
  }

  // Runs one session of node-a against a TestAgent with `deviation`, recorded in the ledger.
  // With `occupancy` (window_us > 0) the order asks for that occupancy window.
  SessionOutcome RunSession(Deviation deviation = {}, const Profile& profile = testing::TestProfile(),
                            const OccupancyRequest& occupancy = {}) {
    auto plan = BuildPlan(inventory_, "node-a", profile, LoneSessionWaveContext(inventory_, "node-a"), clock_);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    Status occupied = SetOccupancySchedule(&*plan, occupancy);
    EXPECT_TRUE(occupied.ok()) << occupied.ToString();
    auto agent = testing::TestAgent(std::move(deviation), nullptr, &clock_, testing::TestKey(0x33),
                                    authority_.public_key, challenger_.public_key);
    testing::PipeConnector pipe(io_, kj::mv(agent));
    LedgerRecordSink sink(ledger_.get());
    SessionEnv env;
    env.clock = &clock_;
    env.timer = &io_.provider->getTimer();
    env.wait_scope = &io_.waitScope;
    env.records = &sink;
    env.threads = 2;
    SessionRunner runner(*plan, SessionKeys{authority_, challenger_}, env);
    auto outcome = runner.Run(pipe);
    EXPECT_TRUE(outcome.ok()) << outcome.status().ToString();
    return std::move(outcome).value();
  }

  std::vector<NodeKey> InventoryKeys() const {
    std::vector<NodeKey> keys;
    for (const auto& node : inventory_.nodes) keys.push_back({node.name, node.public_key});
    return keys;
  }

  Json Export(const Ledger& ledger, bool with_keys = true) {
    LedgerExportOptions options;
    if (with_keys) {
      options.authority_key = authority_.public_key;
      options.node_keys = InventoryKeys();
    }
    return Must(ExportLedgerJson(ledger, challenger_.public_key, options, clock_));
  }
  Json Export() { return Export(*ledger_); }

  StatusOr<LedgerAudit> Audit(const Json& document, const std::optional<proto::PublicKey>& authority = std::nullopt) {
    LedgerAuditOptions options;
    options.session.threads = 2;
    options.read_inventory = ReadSignedInventory;
    return AuditLedgerExport(document, authority.value_or(authority_.public_key), challenger_.public_key, options);
  }

  // The audit's first failure (OK when it passed); the document itself must be auditable.
  Status FirstFailure(const Json& document) {
    auto audit = Audit(document);
    EXPECT_TRUE(audit.ok()) << audit.status().ToString();
    return audit.ok() ? audit->first_failure : audit.status();
  }

  // The ledger's only session as a Forgery.
  Forgery Forge() {
    Forgery f;
    Must(ledger_->Verify(challenger_.public_key));
    ChainVerifier verifier(challenger_.public_key);
    Status walked = ledger_->ForEachRow(std::nullopt, [&](const LedgerRow& row) -> Status {
      WP_ASSIGN_OR_RETURN(VerifiedEntry entry, verifier.Next(row));
      f.kinds.push_back(entry.kind);
      f.session_id = entry.session_id;
      switch (entry.kind) {
        case LedgerRecordKind::ORDER:
          f.order = EditablePayload<proto::WipeOrder>(entry.record);
          break;
        case LedgerRecordKind::FILL_REPORT:
          f.report = EditablePayload<proto::FillReport>(entry.record);
          break;
        case LedgerRecordKind::DEVICE_FILL_NOTICE:
          f.notices.push_back(EditablePayload<proto::DeviceFillNotice>(entry.record));
          break;
        case LedgerRecordKind::ROUND_LOG:
          f.logs.push_back(Editable<proto::RoundLog>(proto::AsView(entry.record)));
          break;
        case LedgerRecordKind::VERDICT:
          f.verdicts.push_back(EditablePayload<proto::Verdict>(entry.record));
          break;
        case LedgerRecordKind::TRANSCRIPT:
          f.transcript = EditablePayload<proto::TranscriptDigest>(entry.record);
          f.original_transcript = entry.record;
          break;
        case LedgerRecordKind::RECEIPT:
          f.receipt = EditablePayload<proto::Receipt>(entry.record);
          break;
        default:
          return InternalError("unexpected kind");
      }
      return Status::Ok();
    });
    EXPECT_TRUE(walked.ok()) << walked.ToString();
    return f;
  }

  // The forgery's records in a fresh ledger under the challenger key, exported with the keys.
  Json ForgedExport(Forgery& f) {
    const std::vector<Bytes> records = f.Sign();
    const std::string path = dir_.File("forged-" + std::to_string(++forged_) + ".db");
    auto forged = Must(Ledger::Open(path, challenger_, clock_));
    EXPECT_TRUE(forged->RecordDocument("inventory", inventory_.text).ok());
    for (size_t i = 0; i < records.size(); ++i) {
      auto appended = forged->Append(f.kinds[i], proto::AsView(records[i]), proto::AsView(f.session_id));
      EXPECT_TRUE(appended.ok()) << appended.status().ToString();
    }
    return Export(*forged);
  }

  // Forges the ledger's only session with `edit` (before re-signing) and returns the audit's first
  // failure.
  Status AuditForged(const std::function<void(Forgery&)>& edit) {
    Forgery f = Forge();
    edit(f);
    return FirstFailure(ForgedExport(f));
  }

  kj::AsyncIoContext io_;
  FakeClock clock_{1'800'000'000'000'000};
  ledger_test::TempDir dir_;
  Inventory inventory_ = testing::TestInventory();
  proto::KeyPair authority_ = testing::TestKey(0x11);
  proto::KeyPair challenger_ = testing::TestKey(0x22);
  std::string ledger_path_ = dir_.File("ledger.db");
  std::unique_ptr<Ledger> ledger_;
  int forged_ = 0;
};

// The round log's first round's answer, as a builder.
proto::RoundAnswer::Builder FirstAnswer(Forgery& f) { return f.Log().getExchanges()[0].getAnswer(); }

// The first logged round that challenges both devices (round 0 may hold only the device whose fill
// notice came first).
unsigned BothDevices(Forgery& f) {
  auto exchanges = f.Log().getExchanges();
  for (unsigned r = 0; r < exchanges.size(); ++r) {
    if (exchanges[r].getRound().getDevices().size() == 2) return r;
  }
  ADD_FAILURE() << "no round challenges both devices";
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Honest sessions pass; failed ones are confirmed from the records.

TEST_F(LedgerAuditTest, HonestSessionPassesWithEveryLabelRecomputed) {
  const SessionOutcome outcome = RunSession();
  ASSERT_TRUE(outcome.pass) << outcome.failure.Describe();
  auto audit = Audit(Export());
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  EXPECT_TRUE(audit->first_failure.ok()) << audit->first_failure.ToString();
  EXPECT_TRUE(audit->document.whole_chain);
  EXPECT_EQ(audit->schema_sha256, kWipeSchemaSha256);
  EXPECT_TRUE(audit->export_lists_authority_key);
  EXPECT_EQ(audit->node_keys, 2u);
  ASSERT_EQ(audit->sessions.size(), 1u);
  const SessionAudit& s = audit->sessions[0];
  EXPECT_EQ(s.node_name, "node-a");
  EXPECT_EQ(s.outcome, "pass");
  EXPECT_EQ(s.records, 8u);  // order, 2 fill notices, report, round log, verdict, transcript, receipt
  EXPECT_GE(s.rounds, 17u);  // 16 proof rounds, then holding rounds until the session is done
  // 16 proof rounds of 32 labels on each of 2 devices, then holding rounds of 4 per device.
  EXPECT_GE(s.labels_recomputed, 16u * 64u + 4u);
  EXPECT_EQ((s.labels_recomputed - 16u * 64u) % 4u, 0u);
  EXPECT_TRUE(s.transcript_checked);
  EXPECT_FALSE(s.bound_stated);
  EXPECT_EQ(s.statement, "no bound: parameters not calibrated (profile test-uncalibrated)");
}

TEST_F(LedgerAuditTest, CalibratedSessionsStatedBoundIsRecomputed) {
  const SessionOutcome outcome = RunSession({}, testing::CalibratedTestProfile());
  ASSERT_TRUE(outcome.pass) << outcome.failure.Describe();
  auto audit = Audit(Export());
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  EXPECT_TRUE(audit->first_failure.ok()) << audit->first_failure.ToString();
  EXPECT_TRUE(audit->sessions[0].bound_stated);
  EXPECT_THAT(audit->sessions[0].statement,
              HasSubstr("bytes of node node-a's planned memory (devices host, GPU-test-0, taken together) were not "
                        "wiped"));
}

TEST_F(LedgerAuditTest, FailedSessionsAreConfirmedFromTheRecords) {
  ASSERT_EQ(RunSession(testing::BlankChunks()).failure.reason, FailureReason::WRONG_LABEL);
  ASSERT_EQ(RunSession(testing::ShortCapacity()).failure.reason, FailureReason::SHORT_CAPACITY);
  Deviation late_round = testing::Cheat(DeviationKind::kLateRound);
  late_round.advance_us = 1001;  // round 2, deadline 1000 us
  ASSERT_EQ(RunSession(late_round).failure.reason, FailureReason::LATE_ROUND);
  Deviation late_fill = testing::Cheat(DeviationKind::kLateFill);
  late_fill.advance_us = 60'000'001;  // fill deadline 60 s
  ASSERT_EQ(RunSession(late_fill).failure.reason, FailureReason::LATE_FILL);
  // A transcript that does not match: a pass superseded by a failure, both verdicts recorded.
  const SessionOutcome mismatch = RunSession(testing::Cheat(DeviationKind::kTranscriptMismatch));
  ASSERT_EQ(mismatch.failure.reason, FailureReason::PROTOCOL_ERROR);
  ASSERT_TRUE(mismatch.superseded_verdict.has_value());
  // A fill report whose signature does not verify is recorded all the same: it bears the failure out.
  ASSERT_EQ(RunSession(testing::Cheat(DeviationKind::kTamperedReport)).failure.reason, FailureReason::BAD_SIGNATURE);
  auto audit = Audit(Export());
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  EXPECT_TRUE(audit->first_failure.ok()) << audit->first_failure.ToString();
  ASSERT_EQ(audit->sessions.size(), 6u);
  EXPECT_EQ(audit->sessions[0].outcome, "fail (wrongLabel)");
  EXPECT_THAT(audit->sessions[0].failure_confirmation, HasSubstr("confirmed: round "));
  EXPECT_THAT(audit->sessions[0].failure_confirmation, HasSubstr("differs from the label recomputed from the seed"));
  EXPECT_THAT(audit->sessions[1].failure_confirmation,
              HasSubstr("confirmed: the node-signed fill report shows device GPU-test-0 short of its plan"));
  EXPECT_THAT(audit->sessions[2].failure_confirmation, HasSubstr("confirmed: round 2 took"));
  EXPECT_THAT(audit->sessions[3].failure_confirmation, HasSubstr("confirmed: fill"));
  EXPECT_EQ(audit->sessions[4].outcome, "fail (protocolError)");
  EXPECT_THAT(audit->sessions[4].failure_confirmation, HasSubstr("rests on the challenger's word"));
  EXPECT_EQ(audit->sessions[5].outcome, "fail (badSignature)");
  EXPECT_THAT(audit->sessions[5].failure_confirmation, HasSubstr("confirmed: fill report (ledger entry "));
  EXPECT_THAT(audit->sessions[5].failure_confirmation, HasSubstr("does not verify under the node key of node-a"));
}

TEST_F(LedgerAuditTest, OrderWithoutVerdictIsNoVerdict) {
  auto sequence =
      ledger_->Append(LedgerRecordKind::ORDER, proto::AsView(ledger_test::OrderRecord(ledger_test::SessionId(9), {})),
                      proto::AsView(ledger_test::SessionId(9)));
  ASSERT_TRUE(sequence.ok());
  // The helper's order is for another authority, challenger and node; re-sign it as this test's.
  Forgery f = Forge();
  const proto::KeyId node_id = proto::KeyIdOf(testing::TestKeyPublic(0x33));
  f.Order().setNodeKeyId(capnp::Data::Reader(node_id.data(), node_id.size()));
  const proto::KeyId challenger_id = proto::KeyIdOf(challenger_.public_key);
  f.Order().setChallengerKeyId(capnp::Data::Reader(challenger_id.data(), challenger_id.size()));
  f.Order().setDelegation(proto::AsView(ledger_test::DelegationBytes(authority_, challenger_.public_key)));
  auto audit = Audit(ForgedExport(f));
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  EXPECT_TRUE(audit->first_failure.ok()) << audit->first_failure.ToString();
  EXPECT_EQ(audit->sessions[0].outcome, "no verdict");
}

// ---------------------------------------------------------------------------------------------
// The document: keys, schema, envelopes.

// threat-model: T-AUDIT-FOREIGN-KEYS
TEST_F(LedgerAuditTest, DocumentsThatCannotBeAuditedAreRefused) {
  RunSession();
  const Json document = Export();

  Json other_schema = document;
  other_schema["schema_sha256"] = std::string(64, 'a');
  Status status = Audit(other_schema).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("written with the schema of SHA-256 aaaa"));

  LedgerExportOptions without_envelopes;
  without_envelopes.include_envelopes = false;
  without_envelopes.authority_key = authority_.public_key;
  status = Audit(Must(ExportLedgerJson(*ledger_, challenger_.public_key, without_envelopes, clock_))).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr(kExportWithoutRecords));

  // The auditor pins the authority key; an export naming another one is refused.
  status = Audit(document, testing::TestKeyPublic(0x44)).status();
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), HasSubstr("export lists authority key"));

  Json renamed_key = document;
  renamed_key["nodes"][0]["key_id"] = "0000000000000000";
  status = Audit(renamed_key).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("export nodes[0]: field 'key_id' is 0000000000000000"));
}

TEST_F(LedgerAuditTest, ExportCarriesTheKeysAndTheSchemaDigest) {
  RunSession();
  const Json document = Export();
  EXPECT_EQ(document["schema_file"], "proto/wipe.capnp");
  EXPECT_EQ(document["schema_sha256"], kWipeSchemaSha256);
  EXPECT_EQ(std::string(kWipeSchemaSha256).size(), 64u);
  EXPECT_EQ(document["authority_public_key"], HexEncode(authority_.public_key.data(), 32));
  EXPECT_EQ(document["authority_key_id"], proto::KeyIdHex(proto::KeyIdOf(authority_.public_key)));
  ASSERT_EQ(document["nodes"].size(), 2u);
  EXPECT_EQ(document["nodes"][0]["name"], "node-a");
  EXPECT_EQ(document["nodes"][0]["public_key"], HexEncode(testing::TestKeyPublic(0x33).data(), 32));
  EXPECT_EQ(document["nodes"][0]["key_id"], proto::KeyIdHex(proto::KeyIdOf(testing::TestKeyPublic(0x33))));
}

// threat-model: T-AUDIT-FOREIGN-KEYS
TEST_F(LedgerAuditTest, NodeKeysAreTiedToTheOrdersKeyId) {
  // An inventory built in code and never made a document: the lab delegation names none, so the node
  // key comes from the export's list (a signed inventory's own key: DeclarationsComeFromTheSignedInventory).
  inventory_.text.clear();
  inventory_.digest.reset();
  RunSession();
  // No node keys: nothing node-signed can be checked.
  Status status = FirstFailure(Export(*ledger_, false));
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("the export lists no key with that id (export with --inventory)"));
  // node-a's key listed under another node's name.
  Json swapped = Export();
  swapped["nodes"][0]["name"] = "node-b";
  status = FirstFailure(swapped);
  EXPECT_THAT(status.message(), HasSubstr("which the export lists for node node-b"));
}

// threat-model: T-INVENTORY-UNSIGNED
TEST_F(LedgerAuditTest, DeclarationsComeFromTheSignedInventory) {
  RunSession();
  // The delegation names the inventory the ledger recorded: its node key is used, the export's
  // node list is not needed.
  Json document = Export(*ledger_, false);
  ASSERT_EQ(document["documents"].size(), 1u);
  EXPECT_EQ(document["documents"][0]["kind"], "inventory");
  EXPECT_EQ(document["documents"][0]["digest"], HexEncode(inventory_.digest->data(), 32));
  EXPECT_TRUE(FirstFailure(document).ok()) << FirstFailure(document).ToString();

  // A challenger-key holder restating the declarations its own way, re-signing the order.
  Status status = AuditForged([](Forgery& f) {
    auto gpu = f.Order().getDevices()[1];
    gpu.setCapacityBytes(gpu.getCapacityBytes() - 1000);
  });
  EXPECT_THAT(status.message(), HasSubstr("the order's device 1 GPU-test-0 capacityBytes is " +
                                          std::to_string(96 * testing::kTestChunkLabels * 32) +
                                          ", the signed inventory declares " +
                                          std::to_string(96 * testing::kTestChunkLabels * 32 + 1000)));
  status = AuditForged([](Forgery& f) { f.Order().getDevices()[1].setAllowedReserveBytes(5000); });
  EXPECT_THAT(status.message(), HasSubstr("allowedReserveBytes is 5000, the signed inventory declares 1000"));
  status = AuditForged([](Forgery& f) { f.Order().setWaveName("rack-9"); });
  EXPECT_THAT(status.message(), HasSubstr("the order's waveName is 'rack-9', the signed inventory declares 'wave-1'"));
  // ... or claiming an assumption the declarations do not support (NVMe is not declared out of reach).
  status = AuditForged([](Forgery& f) { f.Verdict().getAssumptions()[2].setHeld(true); });
  EXPECT_THAT(status.message(), HasSubstr("assumption no-nvme-in-reach reads held, and recomputed from the "
                                          "authority's signed declarations it does not"));

  // ... or labels planned into the reserve (it would count twice toward host-memory-in-plan).
  status = AuditForged([](Forgery& f) {
    auto gpu = f.Order().getDevices()[1];
    gpu.setLabelCount(gpu.getLabelCount() + testing::kTestChunkLabels);
  });
  EXPECT_THAT(status.message(), HasSubstr("the order's device 1 GPU-test-0 labelCount is " +
                                          std::to_string(97 * testing::kTestChunkLabels) +
                                          ", the signed inventory declares a plan of " +
                                          std::to_string(96 * testing::kTestChunkLabels)));
  // ... or wave-complete held for a lone session of a two-node wave (wave-1: node-a, node-b).
  status = AuditForged([](Forgery& f) {
    f.Order().setWaveComplete(true);
    f.Verdict().getAssumptions()[1].setHeld(true);
  });
  EXPECT_THAT(status.message(), HasSubstr("its verdict says wave-complete held, and no wave verdict lists the session"));

  // The document altered, dropped, or re-digested after its text was changed.
  Json altered = Export(*ledger_, false);
  std::string text = altered["documents"][0]["text"];
  text.replace(text.find("\"test-gpu\": 1000"), std::string("\"test-gpu\": 1000").size(), "\"test-gpu\": 9000");
  altered["documents"][0]["text"] = text;
  auto audit = Audit(altered);
  ASSERT_FALSE(audit.ok());
  EXPECT_THAT(audit.status().message(), HasSubstr("is not its text's"));
  const proto::Digest redigested =
      proto::Blake2b256(proto::ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  altered["documents"][0]["digest"] = HexEncode(redigested.data(), 32);
  EXPECT_THAT(FirstFailure(altered).message(), HasSubstr("which the export does not carry"));
  Json dropped = Export(*ledger_, false);
  dropped.erase("documents");
  EXPECT_THAT(FirstFailure(dropped).message(),
              HasSubstr("stands under a delegation that names inventory " + HexEncode(inventory_.digest->data(), 32) +
                        ", which the export does not carry"));
}

// An inventory whose reach was established for round deadlines one microsecond shorter than the
// profile's: the verdict states neither reach assumption, and the audit, recomputing them from the
// signed inventory, agrees (the plan the challenger builds and the one the audit rebuilds both
// carry the bound) and refuses a verdict claiming one.
// threat-model: T-REACH-DEADLINE
class ReachDeadlineAuditTest : public LedgerAuditTest {
 protected:
  void SetUp() override {
    for (InventoryNode& n : inventory_.nodes) n.no_nvme_in_reach = true;
    inventory_.reach_round_deadline_us = testing::TestProfile().round_deadline_us - 1;
    SealInventory(&inventory_);
    LedgerAuditTest::SetUp();
  }
};

TEST_F(ReachDeadlineAuditTest, AReachShorterThanTheRoundDeadlineHoldsNeitherAssumption) {
  SessionOutcome outcome = RunSession();
  ASSERT_TRUE(outcome.pass) << outcome.failure.text;
  const std::string exceeded = "the round deadline of " + std::to_string(testing::TestProfile().round_deadline_us) +
                               " us is longer than the inventory's reach_round_deadline_us of " +
                               std::to_string(inventory_.reach_round_deadline_us) + " us";
  bool nvme_seen = false;
  for (const AssumptionResult& a : outcome.summary.assumptions) {
    if (a.name != kNoNvmeInReach) continue;
    nvme_seen = true;
    EXPECT_FALSE(a.held);
    EXPECT_THAT(a.detail, HasSubstr(exceeded));
  }
  EXPECT_TRUE(nvme_seen);
  Json document = Export(*ledger_, false);
  EXPECT_TRUE(FirstFailure(document).ok()) << FirstFailure(document).ToString();
  Status status = AuditForged([](Forgery& f) { f.Verdict().getAssumptions()[2].setHeld(true); });
  EXPECT_THAT(status.message(), HasSubstr("assumption no-nvme-in-reach reads held, and recomputed from the "
                                          "authority's signed declarations it does not"));
  // An order saying its wave was complete beyond the reach that completeness was established for.
  status = AuditForged([](Forgery& f) { f.Order().setWaveComplete(true); });
  EXPECT_THAT(status.message(),
              HasSubstr("waveComplete is true, the signed inventory declares wave 'wave-1' complete only for round "
                        "deadlines up to " +
                        std::to_string(inventory_.reach_round_deadline_us) + " us (reach_round_deadline_us)"));
}

// ---------------------------------------------------------------------------------------------
// Records and signatures.

TEST_F(LedgerAuditTest, RecordsOutOfPlaceFail) {
  RunSession();
  Status status = AuditForged([](Forgery& f) { f.kinds.push_back(LedgerRecordKind::RECEIPT); });
  EXPECT_THAT(status.message(), HasSubstr("a second receipt of the session"));
  status = AuditForged([](Forgery& f) { std::swap(f.kinds[0], f.kinds[1]); });  // the report first
  EXPECT_THAT(status.message(), HasSubstr("is not the session's first record"));
  status = AuditForged([](Forgery& f) { f.kinds.pop_back(); });  // the receipt dropped
  EXPECT_THAT(status.message(), HasSubstr("the session's verdict has no receipt"));
}

TEST_F(LedgerAuditTest, ARecordKindTheAuditorDoesNotCheckFailsClosed) {
  RunSession();
  auto audit = Audit(Export());
  ASSERT_TRUE(audit.ok());
  std::vector<VerifiedEntry> entries = audit->document.entries;
  VerifiedEntry wave = entries[1];
  wave.kind = LedgerRecordKind::WAVE_VERDICT;  // a wave's record filed under a session: not a session's kind
  entries.insert(entries.begin() + 1, wave);
  std::vector<const VerifiedEntry*> pointers;
  for (const VerifiedEntry& e : entries) pointers.push_back(&e);
  AuditKeys keys{authority_.public_key, challenger_.public_key, InventoryKeys()};
  SessionAuditOptions options;
  const SessionAudit s = AuditSession(pointers, keys, options);
  EXPECT_EQ(s.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.status.message(), HasSubstr("waveVerdict record (ledger entry 1): this auditor does not check"));
}

// threat-model: T-AUDIT-FOREIGN-KEYS
// threat-model: T-DELEGATION
TEST_F(LedgerAuditTest, OrderMustStandUnderThePinnedAuthoritysDelegationAndNameThePinnedChallenger) {
  RunSession();
  Status status = AuditForged([](Forgery& f) { f.order_signer = testing::TestKey(0x44); });
  EXPECT_THAT(status.message(), HasSubstr("order (ledger entry 0): does not verify under the challenger key"));
  // A delegation the challenger host made up for itself.
  status = AuditForged([](Forgery& f) {
    f.Order().setDelegation(proto::AsView(ledger_test::DelegationBytes(testing::TestKey(0x44), f.challenger.public_key)));
  });
  EXPECT_THAT(status.message(), HasSubstr("order (ledger entry 0): does not stand under the authority's delegation: "
                                          "the order's delegation does not verify under the authority key"));
  // A class the authority did not sign, named as if it had: the delegation does not list it.
  status = AuditForged([this](Forgery& f) {
    auto profile = f.Order().getProfile();
    profile.setAdversaryClass("made-up");
    profile.setTMinPs(1'000'000);
    const proto::KeyId id = proto::KeyIdOf(authority_.public_key);
    profile.setAuthorityKeyId(capnp::Data::Reader(id.data(), id.size()));
    profile.setDocumentDigest(proto::AsView(proto::Blake2b256(proto::AsView(id))));
  });
  EXPECT_THAT(status.message(), HasSubstr("is not one the delegation"));
  EXPECT_THAT(status.message(), HasSubstr("class 'made-up'"));
  status = AuditForged([](Forgery& f) {
    const proto::KeyId other = proto::KeyIdOf(testing::TestKeyPublic(0x44));
    f.Order().setChallengerKeyId(capnp::Data::Reader(other.data(), other.size()));
  });
  EXPECT_THAT(status.message(), HasSubstr("not the pinned challenger key"));
}

TEST_F(LedgerAuditTest, ReportMustBeTheNodesAndMatchTheOrder) {
  RunSession();
  Status status = AuditForged([](Forgery& f) { f.node = testing::TestKey(0x44); });
  EXPECT_THAT(status.message(),
              HasSubstr("fill report (ledger entry 3): does not verify under the node key of node-a"));
  status = AuditForged([](Forgery& f) {
    f.tamper = [](Forgery& g, Forgery::Stage stage) {
      if (stage == Forgery::kReport) g.Report().setOrderDigest(proto::AsView(Bytes(32, 0)));
    };
  });
  EXPECT_THAT(status.message(), HasSubstr("is not the digest of the order sent"));
  status = AuditForged([](Forgery& f) { f.Report().getDevices()[0].setSelector("GPU-elsewhere"); });
  EXPECT_THAT(status.message(), HasSubstr("devices[0] is GPU-elsewhere at label 0, the order planned host at label 0"));
}

TEST_F(LedgerAuditTest, RoundsMustStayInsideThePlan) {
  RunSession();
  const uint64_t end = 64 * testing::kTestChunkLabels;  // host: labels [0, 4096)
  Status status = AuditForged(
      [&](Forgery& f) { f.Log().getExchanges()[0].getRound().getDevices()[0].getLabelIndices().set(0, end); });
  EXPECT_THAT(status.message(),
              HasSubstr("round 0 (ledger entry 4): device 'host': label index 4096 is outside its range [0, 4096)"));
  status = AuditForged(
      [](Forgery& f) { f.Log().getExchanges()[BothDevices(f)].getRound().getDevices()[1].setDeviceIndex(7); });
  EXPECT_THAT(status.message(), HasSubstr("devices[1]: device index 7 out of range (the plan has 2)"));
  status = AuditForged(
      [](Forgery& f) { f.Log().getExchanges()[BothDevices(f)].getRound().getDevices()[1].setDeviceIndex(0); });
  EXPECT_THAT(status.message(), HasSubstr("device index 0 challenged twice"));
  status = AuditForged([](Forgery& f) { f.Log().setFirstRound(1); });
  EXPECT_THAT(status.message(), HasSubstr("starts at round 1, but 0 rounds were logged before it"));
}

TEST_F(LedgerAuditTest, TimingRowsMustAgreeWithTheRecords) {
  RunSession();
  Status status = AuditForged([](Forgery& f) { f.Log().getRounds()[3].setElapsedUs(1001); });
  EXPECT_THAT(status.message(), HasSubstr("round 3 (ledger entry 4): elapsedUs 1001 against the round deadline 1000 "
                                          "us, but its timing row says deadlineMet=true"));
  status = AuditForged([](Forgery& f) { f.Log().getRounds()[3].setLabelsChecked(1); });
  EXPECT_THAT(status.message(), HasSubstr("its timing row says 1 labels checked, the log holds 64 correct ones"));
}

// Each round's send time (sentAfterOrderUs) must fit the session: one round in flight at a time,
// a device challenged only from its notice on, a proof round only after the report and every
// notice; and a verdict must place its rounds (orderSentAtUnixUs), or no wave can line them up.
// threat-model: T-WAVE-TIMELINE
TEST_F(LedgerAuditTest, RoundSendTimesMustFitTheSession) {
  RunSession();  // on a simulated clock that rounds do not move: every round sent at the fill
  // The challenger re-signs a timeline of its own: both notices at 50 us, the report at 60 us,
  // round r sent at 100 + 10 r us and answered in 5 us. It fits the session.
  auto timeline = [](Forgery& f, uint64_t report_us) {
    auto rounds = f.Log().getRounds();
    for (unsigned r = 0; r < rounds.size(); ++r) {
      rounds[r].setSentAfterOrderUs(100 + 10 * r);
      rounds[r].setElapsedUs(5);
    }
    f.CopyTimingsToVerdicts();
    for (auto d : f.Verdict().getDevices()) d.setFilledAfterUs(50);
    f.Verdict().setFillMicros(report_us);
  };
  EXPECT_TRUE(AuditForged([&](Forgery& f) { timeline(f, 60); }).ok());
  // Round 3 sent before round 2 was answered.
  Status status = AuditForged([&](Forgery& f) {
    timeline(f, 60);
    f.Log().getRounds()[3].setSentAfterOrderUs(121);
    f.CopyTimingsToVerdicts();
  });
  EXPECT_THAT(status.message(),
              HasSubstr("round 3 (ledger entry 4): sent 121 us after the order, before round 2 was answered (125 us)"));
  // Device 1 challenged before its notice.
  status = AuditForged([&](Forgery& f) {
    timeline(f, 60);
    f.Verdict().getDevices()[1].setFilledAfterUs(1000);
  });
  EXPECT_THAT(status.message(), HasSubstr("challenges device 1 at "));
  EXPECT_THAT(status.message(), HasSubstr("before its fill notice (1000 us)"));
  // Proof rounds before the report (holding rounds may come before it).
  status = AuditForged([&](Forgery& f) { timeline(f, 100000); });
  EXPECT_THAT(status.message(), HasSubstr("a proof round sent "));
  EXPECT_THAT(status.message(), HasSubstr("before the node's report and every notice were in (100000 us)"));
  // A verdict that does not place its rounds.
  status = AuditForged([](Forgery& f) { f.Verdict().setOrderSentAtUnixUs(0); });
  EXPECT_THAT(status.message(), HasSubstr("verdict (ledger entry 5): states no orderSentAtUnixUs"));
}

TEST_F(LedgerAuditTest, ALoggedAnswerThatIsNotTheRecomputedLabelFails) {
  RunSession();
  // One answer byte changed in the round log; the challenger re-signs its whole ledger.
  Status status = AuditForged([](Forgery& f) { FirstAnswer(f).getLabels()[0] ^= 1; });
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("round 0 (ledger entry 4): its timing row says allCorrect=true but the "
                                          "logged answer recomputed from the seed says false: device host, label"));
  EXPECT_THAT(status.message(), HasSubstr("is not the label recomputed from the seed"));
}

TEST_F(LedgerAuditTest, APassWithAWrongLabelFailsEvenWhenTheNodeSignedIt) {
  RunSession();
  // A colluding node signs a transcript over a wrong answer; the challenger's log marks the round
  // wrong and its verdict still says pass.
  Status status = AuditForged([](Forgery& f) {
    FirstAnswer(f).getLabels()[0] ^= 1;
    f.Log().getRounds()[0].setAllCorrect(false);
    f.Log().getRounds()[0].setLabelsChecked(0);
    f.CopyTimingsToVerdicts();
    f.FixChunksChecked();
  });
  EXPECT_THAT(status.message(), HasSubstr("verdict (ledger entry 5): says pass, but round 0 (ledger entry 4): device "
                                          "host, label"));
}

TEST_F(LedgerAuditTest, APassWithALateRoundFails) {
  RunSession();
  Status status = AuditForged([](Forgery& f) {
    f.Log().getRounds()[15].setElapsedUs(5000);
    f.Log().getRounds()[15].setDeadlineMet(false);
    f.CopyTimingsToVerdicts();
    f.FixChunksChecked();
  });
  EXPECT_THAT(status.message(), HasSubstr("says pass, but round 15 (ledger entry 4) took 5000 us, the deadline is "
                                          "1000 us"));
}

// threat-model: T-WAVE-SHELL-GAME
TEST_F(LedgerAuditTest, APassNeedsRoundsOnEveryDevice) {
  RunSession();
  Status status = AuditForged([](Forgery& f) {
    f.Log().initRounds(0);
    f.Log().initExchanges(0);
    f.CopyTimingsToVerdicts();
    f.FixChunksChecked();
  });
  EXPECT_THAT(status.message(), HasSubstr("says pass, but no round was run"));

  // Device 1 (GPU-test-0) left out of every round; the node signs the shorter rounds.
  status = AuditForged([](Forgery& f) {
    auto log = f.Log();
    for (unsigned r = 0; r < log.getExchanges().size(); ++r) {
      auto exchange = log.getExchanges()[r];
      capnp::MallocMessageBuilder copy;
      copy.setRoot(exchange.getRound().asReader());
      auto old = copy.getRoot<proto::ChallengeRound>().getDevices();
      const size_t first_bytes = old[0].getLabelIndices().size() * proto::kLabelBytes;
      exchange.getRound().initDevices(1).setWithCaveats(0, old[0].asReader());
      Bytes labels(exchange.getAnswer().getLabels().begin(), exchange.getAnswer().getLabels().begin() + first_bytes);
      exchange.getAnswer().setLabels(proto::AsView(labels));
      log.getRounds()[r].setLabelsChecked(static_cast<uint32_t>(old[0].getLabelIndices().size()));
    }
    f.CopyTimingsToVerdicts();
    f.FixChunksChecked();
  });
  // No round is then a proof round (each must carry every device at its labelsPerRound).
  EXPECT_THAT(status.message(), HasSubstr("says pass, but device host was never challenged in a proof round"));
}

TEST_F(LedgerAuditTest, APassNeedsTheFillReportAndEveryDeviceHeld) {
  RunSession();
  Status status = AuditForged([](Forgery& f) {
    auto device = f.Report().getDevices()[1];
    device.setBytesHeld(device.getBytesHeld() - 32);
    f.Verdict().getDevices()[1].setBytesHeld(device.getBytesHeld());
  });
  EXPECT_THAT(status.message(), HasSubstr("says pass, but device GPU-test-0 holds 196576 bytes (6144 labels), needs "
                                          "196608 = capacity"));
  status = AuditForged([](Forgery& f) {
    f.kinds.erase(std::find(f.kinds.begin(), f.kinds.end(), LedgerRecordKind::FILL_REPORT));
    f.report.reset();
    f.Verdict().setReportDigest(capnp::Data::Reader());
    for (auto device : f.Verdict().getDevices()) device.setBytesHeld(0);
    f.resign_transcript = false;
  });
  EXPECT_THAT(status.message(), HasSubstr("says pass, but the ledger holds no fill report"));
}

// Protocol v2: each device is challenged from its own node-signed fill notice, against its own fill
// deadline from the time the notice arrived (the verdict's filledAfterUs).
TEST_F(LedgerAuditTest, APassNeedsEveryDevicesFillNoticeWithinItsOwnDeadline) {
  RunSession();
  Status status = AuditForged([](Forgery& f) {
    f.kinds.erase(std::find(f.kinds.begin(), f.kinds.end(), LedgerRecordKind::DEVICE_FILL_NOTICE));
    f.notices.erase(f.notices.begin());
  });
  EXPECT_THAT(status.message(), HasSubstr("says pass, but the ledger holds no fill notice of device"));
  status = AuditForged([](Forgery& f) {
    f.Order().getDevices()[1].setFillDeadlineUs(500);
    f.Verdict().getDevices()[1].setFilledAfterUs(501);
  });
  EXPECT_THAT(status.message(), HasSubstr("says pass, but device GPU-test-0 was filled after 501 us, its fill "
                                          "deadline is 500 us"));
}

TEST_F(LedgerAuditTest, APassOutsideTheFillDeadlinesFails) {
  RunSession();
  Status status = AuditForged([](Forgery& f) { f.Verdict().setFillMicros(f.Order().getFillDeadlineUs() + 1); });
  EXPECT_THAT(status.message(), HasSubstr("says pass, but the fill took 60000001 us, the order's fill deadline is "
                                          "60000000 us"));
  status = AuditForged([](Forgery& f) {
    f.Order().getDevices()[1].setFillDeadlineUs(500);
    f.Verdict().setFillMicros(1000);
  });
  EXPECT_THAT(status.message(), HasSubstr("says pass, but device GPU-test-0 was filled after 1000 us, its fill "
                                          "deadline is 500 us"));
}

TEST_F(LedgerAuditTest, TheNodeSignedTranscriptBindsEveryLoggedExchange) {
  RunSession();
  // A field no label check sees, changed by a forger without the node key.
  Status status = AuditForged([](Forgery& f) {
    FirstAnswer(f).setAgentMicros(FirstAnswer(f).getAgentMicros() + 1);
    f.resign_transcript = false;
  });
  EXPECT_THAT(status.message(), HasSubstr("transcript (ledger entry 6): the digest recomputed over the recorded "
                                          "order, fill notices, fill report and 17 logged rounds is"));
  EXPECT_THAT(status.message(), HasSubstr("a logged round or answer is not what the node answered"));
  status = AuditForged([](Forgery& f) {
    f.tamper = [](Forgery& g, Forgery::Stage stage) {
      if (stage == Forgery::kTranscript) g.Transcript().setRoundCount(15);
    };
  });
  EXPECT_THAT(status.message(), HasSubstr("the node signed 15 rounds, the round log holds 17"));
  status = AuditForged([](Forgery& f) {
    f.tamper = [](Forgery& g, Forgery::Stage stage) {
      if (stage == Forgery::kTranscript) g.Transcript().setVerdictDigest(proto::AsView(Bytes(32, 0)));
    };
  });
  EXPECT_THAT(status.message(), HasSubstr("is not the digest of the verdict sent in finish"));
  status = AuditForged([](Forgery& f) {
    f.kinds.erase(std::find(f.kinds.begin(), f.kinds.end(), LedgerRecordKind::TRANSCRIPT));
    f.transcript.reset();
  });
  EXPECT_THAT(status.message(), HasSubstr("says pass, but the ledger holds no node-signed transcript"));
}

TEST_F(LedgerAuditTest, TheVerdictMustAgreeWithTheRecords) {
  RunSession();
  struct Case {
    std::function<void(Forgery&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](Forgery& f) { f.Verdict().setNodeName("node-b"); }, "names node node-b"},
      {[](Forgery& f) { f.Verdict().getProfile().setName("other"); }, "its parameter profile is not the order's"},
      {[](Forgery& f) { f.Verdict().setRoundDeadlineUs(1001); }, "its deadlines are not the order's"},
      {[](Forgery& f) { f.Verdict().getRounds()[3].setElapsedUs(f.Verdict().getRounds()[3].getElapsedUs() + 1); },
       "round 3's timing differs from the round log's"},
      {[](Forgery& f) { f.Verdict().getDevices()[0].setCapacityBytes(1); },
       "device host: its plan (selector, planned bytes, capacity, reserve) is not the order's"},
      {[](Forgery& f) { f.Verdict().getDevices()[0].setBytesHeld(1); },
       "device host: bytesHeld 1, the fill report says"},
      {[](Forgery& f) { f.Verdict().getDevices()[1].setChunksChecked(1000); },
       "device GPU-test-0: chunksChecked 1000, the round log shows"},
      {[](Forgery& f) {
         f.tamper = [](Forgery& g, Forgery::Stage stage) {
           if (stage == Forgery::kVerdicts) g.Verdict().setOrderDigest(proto::AsView(Bytes(32, 0)));
         };
       },
       "orderDigest is not the recorded order's"},
  };
  for (const Case& c : cases) {
    Status status = AuditForged(c.edit);
    EXPECT_EQ(status.code(), StatusCode::kDataLoss) << c.message;
    EXPECT_THAT(status.message(), HasSubstr("verdict (ledger entry 5): "));
    EXPECT_THAT(status.message(), HasSubstr(c.message));
  }
}

TEST_F(LedgerAuditTest, AFailureTheRecordsContradictFails) {
  RunSession();
  auto fail_with = [](Forgery& f, FailureReason reason) {
    f.Verdict().setPass(false);
    f.Verdict().getFailure().setReason(reason);
    f.Verdict().setStatement("no bound: session failed");
    f.Receipt().setPass(false);
  };
  Status status = AuditForged([&](Forgery& f) {
    fail_with(f, FailureReason::WRONG_LABEL);
    auto failure = f.Verdict().getFailure();
    failure.setDevice("host");
    failure.setRoundIndex(3);
    failure.setLabelIndex(f.Log().getExchanges()[3].getRound().getDevices()[0].getLabelIndices()[0]);
  });
  EXPECT_THAT(status.message(), HasSubstr("fails with wrongLabel, but label"));
  EXPECT_THAT(status.message(), HasSubstr("of round 3 was answered right (recomputed from the seed)"));
  status = AuditForged([&](Forgery& f) {
    fail_with(f, FailureReason::LATE_ROUND);
    f.Verdict().getFailure().setRoundIndex(3);
  });
  EXPECT_THAT(status.message(), HasSubstr("fails with lateRound, but round 3 was answered in"));
  status = AuditForged([&](Forgery& f) { fail_with(f, FailureReason::LATE_FILL); });
  EXPECT_THAT(status.message(), HasSubstr("fails with lateFill, but the fill took 0 us, within the deadline"));
  status = AuditForged([&](Forgery& f) {
    fail_with(f, FailureReason::SHORT_CAPACITY);
    f.Verdict().getFailure().setDevice("host");
  });
  EXPECT_THAT(status.message(), HasSubstr("fails with shortCapacity, but the node-signed fill report shows device "
                                          "host holding its plan"));
}

TEST_F(LedgerAuditTest, AWrongLabelFailureMustNameTheRecomputedAndLoggedLabels) {
  ASSERT_EQ(RunSession(testing::BlankChunks()).failure.reason, FailureReason::WRONG_LABEL);
  Status status = AuditForged([](Forgery& f) { f.Verdict().getFailure().setExpected(proto::AsView(Bytes(32, 7))); });
  EXPECT_THAT(status.message(), HasSubstr("the expected and received labels it names are not the recomputed and "
                                          "logged ones"));
}

TEST_F(LedgerAuditTest, TheStatedBoundIsRecomputedByTheVerdictsOwnCode) {
  RunSession({}, testing::CalibratedTestProfile());
  Status status = AuditForged([](Forgery& f) {
    auto device = f.Verdict().getDevices()[0];
    device.setUnwipedBoundBytes(device.getUnwipedBoundBytes() - 1);
  });
  EXPECT_THAT(status.message(), HasSubstr("verdict (ledger entry 5): bound: device host unwipedBoundBytes is"));
  status = AuditForged([](Forgery& f) { f.Verdict().setTotalUnwipedBoundBytes(1); });
  EXPECT_THAT(status.message(), HasSubstr("bound: totalUnwipedBoundBytes is 1, recomputed from the order and the round "
                                          "log:"));
  status = AuditForged([](Forgery& f) { f.Verdict().setStatement("at 99% confidence nothing was left"); });
  EXPECT_THAT(status.message(), HasSubstr("bound: the statement is \"at 99% confidence nothing was left\""));
  status = AuditForged([](Forgery& f) { f.Verdict().setDeadlineRuleSatisfied(false); });
  EXPECT_THAT(status.message(), HasSubstr("bound: deadlineRuleSatisfied is false"));
}

// An occupancy window (challenger/session/occupancy_bound.h) is recomputed from the order, the
// verdict's window and the round log: its rounds are the log's occupancy rounds inside the window,
// its unprotected time covers their time in flight, and its figures are the verdict's own code's.
// (The test clock moves only as the agent charges it, so the window ends by real time with little
// of its length on the session's clock: it states nothing, and says so; the figures still agree.)
// threat-model: T-OCCUPANCY-FORGED
TEST_F(LedgerAuditTest, AnOccupancyWindowIsRecomputedFromTheRoundLog) {
  const SessionOutcome outcome =
      RunSession({}, testing::CalibratedTestProfile(), {100'000, 5'000, uint64_t{32} * 64 * 40, 4});
  ASSERT_TRUE(outcome.pass) << outcome.failure.Describe();
  auto audit = Audit(Export());
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  EXPECT_TRUE(audit->first_failure.ok()) << audit->first_failure.ToString();

  Status status = AuditForged([](Forgery& f) {
    auto o = f.Verdict().getOccupancy();
    o.setRounds(o.getRounds() + 1);
  });
  EXPECT_THAT(status.message(), HasSubstr("occupancy rounds"));
  EXPECT_THAT(status.message(), HasSubstr("answered right and in time inside the window"));
  status = AuditForged([](Forgery& f) { f.Verdict().getOccupancy().setUnprotectedUs(1'000'000'000); });
  EXPECT_THAT(status.message(),
              HasSubstr("occupancy unprotectedUs 1000000000 is not in [the occupancy rounds' time in flight"));
  status = AuditForged([](Forgery& f) { f.Verdict().getOccupancy().setShortUs(1); });
  EXPECT_THAT(status.message(), HasSubstr("occupancy: shortUs is 1, recomputed from the order"));
  status = AuditForged([](Forgery& f) { f.Verdict().getOccupancy().setStated(true); });
  EXPECT_THAT(status.message(), HasSubstr("occupancy: stated is true"));
  status = AuditForged([](Forgery& f) {
    auto o = f.Verdict().getOccupancy();
    o.setWindowStartAfterOrderUs(o.getWindowStartAfterOrderUs() + 1);
  });
  EXPECT_THAT(status.message(), HasSubstr("its occupancy window does not open at the last proof round's answer"));
  // Stretched by an hour: its rounds are far too few for that much running time.
  status = AuditForged([](Forgery& f) {
    auto o = f.Verdict().getOccupancy();
    o.setWindowEndAfterOrderUs(o.getWindowEndAfterOrderUs() + 3'600'000'000);
  });
  EXPECT_THAT(status.message(), HasSubstr("rounds where its gaps' running time asks about 720"));
  status = AuditForged([](Forgery& f) { f.Verdict().disownOccupancy(); });
  EXPECT_THAT(status.message(), HasSubstr("passed without the occupancy statement its order's window asks for"));
}

// A window stretched too little for its count of rounds to show (gaps as long as the window) still
// runs longer than its order allows: refused.
TEST_F(LedgerAuditTest, AnOccupancyWindowLongerThanItsOrderAllowsFails) {
  const SessionOutcome outcome =
      RunSession({}, testing::CalibratedTestProfile(), {100'000, 100'000, uint64_t{32} * 64 * 40, 4});
  ASSERT_TRUE(outcome.pass) << outcome.failure.Describe();
  ASSERT_TRUE(Audit(Export()).ok());
  Status status = AuditForged([](Forgery& f) {
    auto o = f.Verdict().getOccupancy();
    o.setWindowEndAfterOrderUs(o.getWindowStartAfterOrderUs() + 100'000 + f.Order().getRoundDeadlineUs() +
                               kOccupancyOverrunSlackUs + 1);
  });
  EXPECT_THAT(status.message(), HasSubstr("its occupancy window ran "));
  EXPECT_THAT(status.message(), HasSubstr("longer than its order's 100000 us allow"));
}

// The compute statement (challenger/session/compute_statement.h) rests on the bound and on what the
// signed inventory declares (label rates, isolation): both audits recompute it; a verdict that
// claims more work, another rate or interval, or a statement where none holds fails.
// threat-model: T-COMPUTE-FORGED
TEST_F(LedgerAuditTest, TheComputeStatementIsRecomputedFromTheSignedInventory) {
  inventory_.nodes[0].cpu_compressions_per_s = 1e6;
  inventory_.nodes[0].reach.network_isolated = true;
  inventory_.label_rates_by_model["test-gpu"] = {4e6, "a test figure"};
  SealInventory(&inventory_);
  ASSERT_TRUE(ledger_->RecordDocument("inventory", inventory_.text).ok());
  // The test clock moves only as the agent charges it: a fill of half a second (within its deadline)
  // gives the statement an interval.
  Deviation slow_fill;
  slow_fill.kind = DeviationKind::kLateFill;
  slow_fill.advance_us = 500'000;
  const SessionOutcome outcome = RunSession(slow_fill, testing::CalibratedTestProfile());
  ASSERT_TRUE(outcome.pass) << outcome.failure.Describe();
  auto verdict = proto::VerifyAndParse<proto::Verdict>(outcome.verdict, challenger_.public_key);
  ASSERT_TRUE(verdict.ok());
  ASSERT_TRUE(verdict->root().getBoundStated());
  EXPECT_GE(verdict->root().getCompute().getIntervalUs(), 500'000u);
  auto c = verdict->root().getCompute();
  ASSERT_TRUE(c.getStated()) << c.getStatement().cStr();
  EXPECT_EQ(c.getRateCompressionsPerS(), 5e6);  // CPUs 1e6 + one test-gpu 4e6
  EXPECT_GT(c.getWorkCompressions(), 0u);
  EXPECT_EQ(c.getMinComputeUs(), static_cast<uint64_t>(std::floor(c.getWorkCompressions() / 5e6 * 1e6)));
  auto audit = Audit(Export());
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  EXPECT_TRUE(audit->first_failure.ok()) << audit->first_failure.ToString();

  Status status = AuditForged([](Forgery& f) {
    auto c = f.Verdict().getCompute();
    c.setWorkCompressions(c.getWorkCompressions() + 1);
  });
  EXPECT_THAT(status.message(), HasSubstr("compute: workCompressions is"));
  status = AuditForged([](Forgery& f) { f.Verdict().getCompute().setRateCompressionsPerS(1); });
  EXPECT_THAT(status.message(), HasSubstr("compute: rateCompressionsPerS is"));
  status = AuditForged([](Forgery& f) {
    auto c = f.Verdict().getCompute();
    c.setIntervalUs(c.getIntervalUs() / 2);
  });
  EXPECT_THAT(status.message(), HasSubstr("compute: intervalUs is"));
  status = AuditForged([](Forgery& f) { f.Verdict().getCompute().setStatement("the fill used all of it"); });
  EXPECT_THAT(status.message(), HasSubstr("compute: the statement is \"the fill used all of it\""));
}

// Under an inventory that declares no label rate, the verdict says so, and a claimed statement fails.
TEST_F(LedgerAuditTest, NoComputeStatementWithoutDeclaredRates) {
  const SessionOutcome outcome = RunSession({}, testing::CalibratedTestProfile());
  ASSERT_TRUE(outcome.pass) << outcome.failure.Describe();
  auto verdict = proto::VerifyAndParse<proto::Verdict>(outcome.verdict, challenger_.public_key);
  ASSERT_TRUE(verdict.ok());
  auto c = verdict->root().getCompute();
  EXPECT_FALSE(c.getStated());
  EXPECT_EQ(std::string(c.getStatement().cStr()),
            "no compute statement: the inventory declares no CPU label rate (cpu_compressions_per_s) for node node-a");
  Status status = AuditForged([](Forgery& f) { f.Verdict().getCompute().setStated(true); });
  EXPECT_THAT(status.message(), HasSubstr("compute: stated is true"));
}

// A statement that is not stated claims nothing by its flag, but its words are signed text a reader
// sees: on an unsigned profile (why no bound is stated is then the challenger's own knowledge) the
// occupancy and compute statements must still be the reason why, quoting the verdict's own, word for
// word, and a failed session's bound statement is its failure.
// threat-model: T-COMPUTE-FORGED
TEST_F(LedgerAuditTest, AnUnstatedStatementMustGiveItsReasonWordForWord) {
  const SessionOutcome outcome =
      RunSession({}, testing::TestProfile(), {100'000, 5'000, uint64_t{32} * 64 * 40, 4});
  ASSERT_TRUE(outcome.pass) << outcome.failure.Describe();
  auto verdict = proto::VerifyAndParse<proto::Verdict>(outcome.verdict, challenger_.public_key);
  ASSERT_TRUE(verdict.ok());
  const std::string reason = verdict->root().getStatement().cStr();
  ASSERT_EQ(reason.rfind("no bound: ", 0), 0u) << reason;
  EXPECT_EQ(std::string(verdict->root().getCompute().getStatement().cStr()),
            "no compute statement: it rests on the bound, and none is stated (" + reason + ")");
  EXPECT_EQ(std::string(verdict->root().getOccupancy().getStatement().cStr()),
            "no occupancy statement: no bound is stated, and the occupancy statement needs the same conditions (" +
                reason + ")");
  auto audit = Audit(Export());
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  EXPECT_TRUE(audit->first_failure.ok()) << audit->first_failure.ToString();

  const std::string claim = "at 99% confidence node node-a's fill required at least 1e15 BLAKE3 compressions";
  Status status = AuditForged([&](Forgery& f) { f.Verdict().getCompute().setStatement(claim); });
  EXPECT_THAT(status.message(), HasSubstr("compute: the statement is \"" + claim + "\""));
  status = AuditForged([](Forgery& f) {
    f.Verdict().getOccupancy().setStatement("at 99% confidence node node-a's memory was held the whole window");
  });
  EXPECT_THAT(status.message(), HasSubstr("occupancy: the statement is \"at 99% confidence"));
  // The reason itself is the challenger's word; changed, the statements quoting it no longer agree.
  status = AuditForged([](Forgery& f) { f.Verdict().setStatement("no bound: the node is certainly clean"); });
  EXPECT_THAT(status.message(), HasSubstr(": the statement is \""));
  status = AuditForged([](Forgery& f) { f.Verdict().setStatement("at most 0 bytes of node node-a unwiped"); });
  EXPECT_THAT(status.message(), HasSubstr("bound: the statement is \"at most 0 bytes"));
}

// A failed session's bound statement is its failure, whatever the profile.
TEST_F(LedgerAuditTest, AFailedSessionsStatementIsItsFailure) {
  ASSERT_EQ(RunSession(testing::BlankChunks()).failure.reason, FailureReason::WRONG_LABEL);
  EXPECT_TRUE(Audit(Export()).ok());
  Status status = AuditForged([](Forgery& f) { f.Verdict().setStatement("no bound: the profile was not signed"); });
  EXPECT_THAT(status.message(), HasSubstr("bound: the statement is \"no bound: the profile was not signed\", "
                                          "recomputed from the order and the round log: \"no bound: session "
                                          "failed (wrongLabel)\""));
}

TEST_F(LedgerAuditTest, AnUncalibratedSessionCannotClaimABound) {
  RunSession();
  Status status = AuditForged([](Forgery& f) {
    f.Verdict().setBoundStated(true);
    f.Verdict().setTotalUnwipedBoundBytes(12345);
  });
  EXPECT_THAT(status.message(), HasSubstr("bound: boundStated is true, recomputed from the order and the round log: "
                                          "false"));
}

// The challenger signs the order under the authority's delegation; a profile endorsement in it that
// names another key (a profile signed by someone else, copied into an order) is not one the
// delegation lists: the order does not stand, and no bound may be stated from it.
// threat-model: T-PROFILE-UNSIGNED
TEST_F(LedgerAuditTest, AProfileEndorsedByAnotherKeyStatesNoBound) {
  const SessionOutcome outcome = RunSession({}, testing::CalibratedTestProfile());
  ASSERT_TRUE(outcome.pass) << outcome.failure.Describe();
  ASSERT_TRUE(Audit(Export()).ok());
  Status status = AuditForged([](Forgery& f) {
    const proto::KeyId other = proto::KeyIdOf(testing::TestKey(0x77).public_key);
    f.Order().getProfile().setAuthorityKeyId(capnp::Data::Reader(other.data(), other.size()));
    f.Verdict().getProfile().setAuthorityKeyId(capnp::Data::Reader(other.data(), other.size()));
  });
  EXPECT_THAT(status.message(), HasSubstr("does not stand under the authority's delegation: the order's profile "
                                          "'test-calibrated' (class 'test-cpu', tMinPs 40000, safety 1.500000) is "
                                          "not one the delegation"));
}

TEST_F(LedgerAuditTest, TheReceiptMustTieTheSessionTogether) {
  RunSession();
  Status status = AuditForged([](Forgery& f) { f.Receipt().setPass(false); });
  EXPECT_THAT(status.message(), HasSubstr("receipt (ledger entry 7): its pass flag is not the final verdict's"));
  auto at_receipt = [](std::function<void(proto::Receipt::Builder)> edit) {
    return [edit](Forgery& f) {
      f.tamper = [edit](Forgery& g, Forgery::Stage stage) {
        if (stage == Forgery::kReceipt) edit(g.Receipt());
      };
    };
  };
  status = AuditForged(at_receipt([](proto::Receipt::Builder r) { r.setLedgerSequence(0); }));
  EXPECT_THAT(status.message(), HasSubstr("names ledger entry 0 as the verdict, it is entry 5"));
  status = AuditForged(at_receipt([](proto::Receipt::Builder r) { r.setVerdictDigest(proto::AsView(Bytes(32, 0))); }));
  EXPECT_THAT(status.message(), HasSubstr("verdictDigest is not the final verdict's"));
  status =
      AuditForged(at_receipt([](proto::Receipt::Builder r) { r.getTranscript().setSignature(proto::AsView(Bytes(64, 1))); }));
  EXPECT_THAT(status.message(), HasSubstr("the transcript it embeds is not the recorded one"));
}

TEST_F(LedgerAuditTest, OnlyAFailureMaySupersedeAPass) {
  RunSession();
  Status status = AuditForged([](Forgery& f) {
    f.kinds.insert(std::find(f.kinds.begin(), f.kinds.end(), LedgerRecordKind::RECEIPT), LedgerRecordKind::VERDICT);
    auto copy = std::make_unique<capnp::MallocMessageBuilder>();
    copy->setRoot(f.Verdict().asReader());
    f.verdicts.push_back(std::move(copy));
  });
  EXPECT_THAT(status.message(), HasSubstr("a second verdict may only supersede a pass with a failure"));
}

// ---------------------------------------------------------------------------------------------
// The command line: export with keys, audit (table, JSON, exit codes), decode.

class LedgerAuditCliTest : public LedgerAuditTest {
 protected:
  void SetUp() override {
    LedgerAuditTest::SetUp();
    ASSERT_TRUE(proto::WritePublicKeyFile(authority_path_, authority_.public_key).ok());
    ASSERT_TRUE(proto::WritePublicKeyFile(challenger_path_, challenger_.public_key).ok());
    const uint64_t chunk = uint64_t{testing::kTestChunkLabels} * proto::kLabelBytes;
    std::ofstream(inventory_path_) << R"({"nodes": [{"name": "node-a", "address": "127.0.0.1:7700", "public_key": ")"
                                   << HexEncode(testing::TestKeyPublic(0x33).data(), 32) << R"(", "devices": [
               {"selector": "host", "model": "host-dram", "capacity_bytes": )"
                                   << 64 * chunk << R"(},
               {"selector": "GPU-test-0", "model": "test-gpu", "capacity_bytes": )"
                                   << 96 * chunk + 1000 << R"(}]}],
              "reserves": {"host-dram": 0, "test-gpu": 1000}})";
  }

  struct Result {
    int code;
    std::string out;
    std::string err;
  };
  Result Run(std::vector<std::string> args) {
    std::ostringstream out, err;
    const int code = RunLedgerCommand(args, out, err);
    return {code, out.str(), err.str()};
  }
  std::vector<std::string> Keys() const {
    return {"--authority_key=" + authority_path_, "--challenger_key=" + challenger_path_};
  }
  std::vector<std::string> With(std::vector<std::string> words, const std::vector<std::string>& more) const {
    words.insert(words.end(), more.begin(), more.end());
    return words;
  }

  std::string authority_path_ = dir_.File("authority.pub");
  std::string challenger_path_ = dir_.File("challenger.pub");
  std::string inventory_path_ = dir_.File("inventory.json");
  std::string export_path_ = dir_.File("export.json");
};

TEST_F(LedgerAuditCliTest, ExportWithKeysThenAuditPrintsATableAndExitsZero) {
  RunSession();
  Result exported = Run(
      With({"export", "--ledger=" + ledger_path_, "--inventory=" + inventory_path_, "--out=" + export_path_}, Keys()));
  ASSERT_EQ(exported.code, 0) << exported.err;
  Result audit = Run(With({"audit", "--export=" + export_path_, "--threads=2"}, Keys()));
  EXPECT_EQ(audit.code, 0) << audit.err << audit.out;
  EXPECT_THAT(audit.out, HasSubstr("whole chain verified up to the signed head"));
  EXPECT_THAT(audit.out, HasSubstr(std::string("schema: proto/wipe.capnp sha256 ") + kWipeSchemaSha256));
  EXPECT_THAT(audit.out, HasSubstr("node-a          pass                      17      1028  matches     OK"));
  EXPECT_THAT(audit.out, HasSubstr("audit: OK: 1 session(s)"));

  Result json = Run(With({"audit", "--export=" + export_path_, "--json"}, Keys()));
  ASSERT_EQ(json.code, 0) << json.err;
  const Json parsed = Json::parse(json.out);
  EXPECT_EQ(parsed["result"], "ok");
  EXPECT_EQ(parsed["sessions"][0]["labels_recomputed"], 1028);  // 16 x 64 proof labels, a holding round of 4
  EXPECT_EQ(parsed["sessions"][0]["transcript_checked"], true);
  EXPECT_EQ(parsed["export"]["whole_chain"], true);

  // The ledger itself, exported in memory with the inventory's keys.
  Result direct = Run(With({"audit", "--ledger=" + ledger_path_, "--inventory=" + inventory_path_}, Keys()));
  EXPECT_EQ(direct.code, 0) << direct.err;
}

TEST_F(LedgerAuditCliTest, AnAnswerByteChangedInTheExportFailsNamingTheEntry) {
  RunSession();
  ASSERT_EQ(Run(With({"export", "--ledger=" + ledger_path_, "--inventory=" + inventory_path_, "--out=" + export_path_},
                     Keys()))
                .code,
            0);
  Json document = Json::parse(std::ifstream(export_path_));
  // The first round's first answered label sits in the round log entry's envelope: change one byte.
  Forgery f = Forge();
  const auto label = FirstAnswer(f).getLabels();
  const std::string label_hex = HexEncode(label.begin(), 32);
  std::string envelope = document["entries"][4]["envelope"];
  const size_t at = envelope.find(label_hex);
  ASSERT_NE(at, std::string::npos);
  envelope[at] = envelope[at] == '0' ? '1' : '0';
  document["entries"][4]["envelope"] = envelope;
  std::ofstream(export_path_) << document.dump(2);
  Result audit = Run(With({"audit", "--export=" + export_path_}, Keys()));
  EXPECT_EQ(audit.code, 1);
  EXPECT_THAT(audit.err, HasSubstr("ledger entry 4"));
  EXPECT_THAT(audit.err, HasSubstr("signature does not verify"));
}

TEST_F(LedgerAuditCliTest, UsageAndUnverifiableExports) {
  RunSession();
  EXPECT_EQ(Run({"audit", "--export=x.json", "--challenger_key=" + challenger_path_}).code, 2);  // no authority key
  EXPECT_EQ(Run(With({"audit", "--ledger=" + ledger_path_}, Keys())).code, 2);                   // no inventory
  EXPECT_EQ(Run(With({"audit", "--export=x", "--ledger=y"}, Keys())).code, 2);
  ASSERT_EQ(
      Run(With({"export", "--ledger=" + ledger_path_, "--envelopes=false", "--out=" + export_path_}, Keys())).code, 0);
  Result audit = Run(With({"audit", "--export=" + export_path_}, Keys()));
  EXPECT_EQ(audit.code, 3);
  EXPECT_THAT(audit.out, HasSubstr("UNVERIFIED: export without records"));
}

TEST_F(LedgerAuditCliTest, DecodePrintsEntriesAndRecordsAsPlainJson) {
  RunSession();
  Result verdict = Run({"decode", "--ledger=" + ledger_path_, "--sequence=5"});
  ASSERT_EQ(verdict.code, 0) << verdict.err;
  const Json entry = Json::parse(verdict.out);
  EXPECT_EQ(entry["kind"], "ledgerEntry");
  EXPECT_EQ(entry["payload"]["sequence"], "5");  // 64-bit integers are strings, as in capnp's JSON
  EXPECT_EQ(entry["payload"]["kind"], "verdict");
  EXPECT_EQ(entry["payload"]["record"]["kind"], "verdict");
  EXPECT_EQ(entry["payload"]["record"]["payload"]["pass"], true);
  EXPECT_EQ(entry["payload"]["record"]["payload"]["nodeName"], "node-a");
  EXPECT_EQ(entry["payload"]["record"]["signerKeyId"], proto::KeyIdHex(proto::KeyIdOf(challenger_.public_key)));
  EXPECT_EQ(entry["payload"]["sessionId"].get<std::string>().size(), 32u);  // Data as hex

  Result all = Run({"decode", "--ledger=" + ledger_path_});
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(Json::parse(all.out).size(), 8u);

  Forgery f = Forge();
  const Bytes log = Must(proto::EncodeCanonical(f.Log().asReader()));
  const std::string record_path = dir_.File("round-log.bin");
  std::ofstream(record_path, std::ios::binary).write(reinterpret_cast<const char*>(log.data()), log.size());
  Result record = Run({"decode", "--record=" + record_path, "--kind=roundLog"});
  ASSERT_EQ(record.code, 0) << record.err;
  const Json rounds = Json::parse(record.out);
  EXPECT_EQ(rounds["rounds"].size(), 17u);
  // Round 0 is the holding round of the device whose fill notice came first: 32 / 8 labels, as hex.
  EXPECT_EQ(rounds["exchanges"][0]["answer"]["labels"].get<std::string>().size(), 4u * 64u);

  EXPECT_EQ(Run({"decode", "--record=" + record_path, "--kind=verdict"}).code, 2);  // not a verdict: fix the input
  EXPECT_EQ(Run({"decode", "--ledger=" + ledger_path_, "--sequence=99"}).code, 2);  // no such entry
  EXPECT_EQ(Run({"decode", "--record=" + record_path}).code, 2);  // no --kind
}

}  // namespace
}  // namespace wipeproof
