// Fleet-facing outputs of wipeproof-challenger (issue 13): `ledger show --node --json`, `ledger
// verify` and `ledger audit` over several ledgers (a challenger StatefulSet's replicas, with a
// session copied into another replica's ledger caught), the challenger cores `plan` asks for a
// fleet, and the pass-due rule shared by `status` and the metrics, with every metric series present
// from the start.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <kj/async-io.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "challenger/calibration/parameter_planner.h"
#include "challenger/cli/cli_ledger.h"
#include "challenger/fleet/fleet_metrics.h"
#include "challenger/fleet/fleet_status.h"
#include "challenger/fleet/plan_builder.h"
#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_record_sink.h"
#include "challenger/ledger/ledger_records.h"
#include "challenger/ledger/ledger_sessions.h"
#include "challenger/ledger/ledger_verify.h"
#include "challenger/session/session_runner.h"
#include "common/hex.h"
#include "common/metrics_registry.h"
#include "proto/key_files.h"
#include "proto/signing.h"
#include "tests/support/challenger_fixtures.h"
#include "tests/support/ledger_test_util.h"
#include "tests/support/run_binary.h"

namespace wipeproof {
namespace {

using Json = nlohmann::json;
using ledger_test::Keys;
using ledger_test::SessionId;
using ledger_test::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

template <typename T>
T Must(StatusOr<T> value) {
  return ledger_test::Must(std::move(value), "test set-up");
}

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result RunLedger(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunLedgerCommand(args, out, err);
  return {code, out.str(), err.str()};
}

// A verdict of `node`'s session, signed by `signer`, issued at `at_unix_us`.
proto::Bytes VerdictAt(const proto::Bytes& session, const std::string& node, bool pass, int64_t at_unix_us,
                       const proto::KeyPair& signer) {
  capnp::MallocMessageBuilder message;
  auto verdict = message.initRoot<proto::Verdict>();
  verdict.setSessionId(proto::AsView(session));
  verdict.setNodeName(node);
  verdict.setPass(pass);
  verdict.initFailure().setReason(pass ? proto::FailureReason::NONE : proto::FailureReason::LATE_ROUND);
  proto::Bytes digest(proto::kDigestBytes, 0x22);
  verdict.setOrderDigest(proto::AsView(digest));
  verdict.setStatement(pass ? "no bound: parameters not calibrated" : "failed: a late round");
  verdict.setIssuedAtUnixUs(at_unix_us);
  return ledger_test::SignToEnvelopeBytes(verdict, signer);
}

void AppendVerdict(Ledger& ledger, const proto::Bytes& session, const std::string& node, bool pass, int64_t at,
                   const proto::KeyPair& signer) {
  ASSERT_TRUE(ledger
                  .Append(proto::LedgerRecordKind::VERDICT, proto::AsView(VerdictAt(session, node, pass, at, signer)),
                          proto::AsView(session))
                  .ok());
}

// Copies every entry of `session` from `from` into `to` (re-signed and chained there by `to`'s
// key): what a replica holding the shared challenger key could do to count one wipe twice. With
// `challenger`, the receipt is re-signed to name the verdict's new ledger entry, so the copy
// audits on its own.
void CopySession(const Ledger& from, Ledger& to, const proto::Bytes& session, const proto::PublicKey& pub,
                 const proto::KeyPair* challenger = nullptr) {
  uint64_t verdict_at = 0;
  ASSERT_TRUE(from.ForEachRow(session,
                              [&](const LedgerRow& row) -> Status {
                                WP_ASSIGN_OR_RETURN(VerifiedEntry entry, VerifyLedgerRow(row, pub));
                                proto::Bytes record = entry.record;
                                if (entry.kind == proto::LedgerRecordKind::RECEIPT && challenger != nullptr) {
                                  WP_ASSIGN_OR_RETURN(proto::SignedEnvelope envelope,
                                                      proto::DecodeEnvelope(proto::AsView(entry.record)));
                                  WP_ASSIGN_OR_RETURN(auto receipt, proto::ParseMessage<proto::Receipt>(
                                                                        proto::AsView(envelope.payload)));
                                  capnp::MallocMessageBuilder message;
                                  message.setRoot(receipt.root());
                                  auto edited = message.getRoot<proto::Receipt>();
                                  edited.setLedgerSequence(verdict_at);
                                  record = ledger_test::SignToEnvelopeBytes(edited, *challenger);
                                }
                                WP_ASSIGN_OR_RETURN(uint64_t at, to.Append(entry.kind, proto::AsView(record),
                                                                           proto::AsView(entry.session_id)));
                                if (entry.kind == proto::LedgerRecordKind::VERDICT) verdict_at = at;
                                return Status::Ok();
                              })
                  .ok());
}

// ---------------------------------------------------------------------------------------------
// ledger show --json, --node; ledger verify of several ledgers (synthetic sessions: records of
// every kind, signed, as tests/support/ledger_test_util.h writes them).

class LedgerFleetCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(proto::WritePublicKeyFile(key_path_, keys_.challenger.public_key).ok());
    ASSERT_TRUE(proto::WritePublicKeyFile(other_key_path_, keys_.other.public_key).ok());
    auto a = Must(Ledger::Open(a_path_, keys_.challenger, clock_));
    ledger_test::AppendSession(*a, SessionId(1), keys_);
    // A failed session: order and a failing verdict only.
    clock_.Advance(5'000'000);
    ASSERT_TRUE(a->Append(proto::LedgerRecordKind::ORDER, proto::AsView(ledger_test::OrderRecord(SessionId(2), keys_)),
                          proto::AsView(SessionId(2)))
                    .ok());
    AppendVerdict(*a, SessionId(2), "node-a", false, 1'800'000'006'000'000, keys_.challenger);
    auto b = Must(Ledger::Open(b_path_, keys_.challenger, clock_));
    ledger_test::AppendSession(*b, SessionId(3), keys_);
  }

  std::string KeyFlag() const { return "--challenger_key=" + key_path_; }

  Keys keys_;
  FakeClock clock_{1'800'000'000'000'000};
  TempDir dir_;
  std::string a_path_ = dir_.File("replica-0.db");
  std::string b_path_ = dir_.File("replica-1.db");
  std::string key_path_ = dir_.File("challenger.pub");
  std::string other_key_path_ = dir_.File("other.pub");
};

TEST_F(LedgerFleetCliTest, ShowNodeJsonListsTheNodesSessions) {
  Result shown = RunLedger({"show", "--ledger=" + a_path_, KeyFlag(), "--node=node-a", "--json"});
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_EQ(shown.err, "");
  ASSERT_EQ(std::count(shown.out.begin(), shown.out.end(), '\n'), 1) << "one compact document: " << shown.out;
  const Json doc = Json::parse(shown.out);
  EXPECT_EQ(doc["node"], "node-a");
  EXPECT_EQ(doc["ledger"]["path"], a_path_);
  EXPECT_EQ(doc["ledger"]["entries"], 8);  // six records of session 1, two of session 2
  EXPECT_EQ(doc["ledger"]["verified"], true);
  ASSERT_EQ(doc["sessions"].size(), 2u);
  const Json& passed = doc["sessions"][0];
  EXPECT_EQ(passed["session_id"], HexEncode(SessionId(1)));
  EXPECT_EQ(passed["node"], "node-a");
  EXPECT_EQ(passed["wave"], "wave-1");
  EXPECT_EQ(passed["outcome"], "pass");
  EXPECT_EQ(passed["failure"]["reason"], "none");
  EXPECT_EQ(passed["bound_stated"], false);
  EXPECT_TRUE(passed["bound_bytes"].is_null());
  EXPECT_EQ(passed["statement"], "no bound: parameters not calibrated");
  EXPECT_EQ(passed["times"]["order_issued"], "2027-01-15T08:00:00.000000Z");
  EXPECT_EQ(passed["times"]["order_issued_unix_us"], 1'800'000'000'000'000);
  EXPECT_TRUE(passed["times"]["verdict_issued"].is_null());  // the synthetic verdict carries no time
  EXPECT_EQ(passed["ledger"]["first_sequence"], 0);
  EXPECT_EQ(passed["ledger"]["last_sequence"], 5);
  EXPECT_EQ(passed["ledger"]["entries"], 6);
  EXPECT_EQ(passed["ledger"]["verdict_sequence"], 3);
  EXPECT_EQ(passed["ledger"]["first_recorded_unix_us"], 1'800'000'000'000'000);
  const Json& failed = doc["sessions"][1];
  EXPECT_EQ(failed["outcome"], "fail");
  EXPECT_EQ(failed["pass"], false);
  EXPECT_EQ(failed["failure"]["reason"], "lateRound");
  EXPECT_EQ(failed["ledger"]["first_sequence"], 6);
  EXPECT_EQ(failed["ledger"]["verdict_sequence"], 7);
  EXPECT_EQ(failed["ledger"]["first_recorded"], "2027-01-15T08:00:05.000000Z");
  EXPECT_EQ(failed["times"]["verdict_issued"], "2027-01-15T08:00:06.000000Z");
  EXPECT_EQ(failed["times"]["verdict_issued_unix_us"], 1'800'000'006'000'000);
  EXPECT_TRUE(failed["times"]["fill_report_signed"].is_null());

  // --session narrows the list; without --node every node's sessions.
  Result one = RunLedger({"show", "--ledger=" + a_path_, KeyFlag(), "--json", "--session=" + HexEncode(SessionId(2))});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(Json::parse(one.out)["sessions"].size(), 1u);
  EXPECT_TRUE(Json::parse(one.out)["node"].is_null());

  // The table with --node: only that node's entries.
  Result table = RunLedger({"show", "--ledger=" + a_path_, KeyFlag(), "--node=node-a"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr(HexEncode(SessionId(2))));
  EXPECT_THAT(table.out, HasSubstr("chain: OK: 8 entries"));
}

TEST_F(LedgerFleetCliTest, ShowOfANodeTheLedgerLacksIsAConfigurationError) {
  Result unknown = RunLedger({"show", "--ledger=" + a_path_, KeyFlag(), "--node=node-z", "--json"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_EQ(unknown.out, "");
  // (Asserted without the status code name, which the exit-code table prints as words.)
  EXPECT_THAT(unknown.err, ::testing::StartsWith("wipeproof-challenger ledger show: "));
  EXPECT_THAT(unknown.err, HasSubstr("no session of node 'node-z' in ledger " + a_path_ + " (its nodes: node-a)\n"));
  EXPECT_EQ(RunLedger({"show", "--ledger=" + a_path_, KeyFlag(), "--node=node-z"}).code, 2);
  // A ledger written under another key prints no JSON (its exit code is the exit-code table's for a
  // wrong key).
  Result wrong_key = RunLedger({"show", "--ledger=" + a_path_, "--challenger_key=" + other_key_path_, "--json"});
  EXPECT_NE(wrong_key.code, 0);
  EXPECT_EQ(wrong_key.out, "");
  EXPECT_THAT(wrong_key.err, HasSubstr("(wrong key given?)"));
}

TEST_F(LedgerFleetCliTest, VerifyOfSeveralLedgersChecksEachAndTheirSessionsTogether) {
  Result both = RunLedger({"verify", "--ledger=" + a_path_ + "," + b_path_, KeyFlag()});
  ASSERT_EQ(both.code, 0) << both.out << both.err;
  EXPECT_THAT(both.out, HasSubstr("ledger " + a_path_ + ": OK: 8 entries; head entry 7"));
  EXPECT_THAT(both.out, HasSubstr("ledger " + b_path_ + ": OK: 6 entries; head entry 5"));
  EXPECT_THAT(both.out, HasSubstr("total: OK: 2 ledgers, 2 verified (14 entries, 3 sessions); no session in two "
                                  "ledgers\n"));
  // The flag repeated, and one key per ledger, say the same.
  Result repeated = RunLedger(
      {"verify", "--ledger=" + a_path_, "--ledger=" + b_path_, "--challenger_key=" + key_path_ + "," + key_path_});
  EXPECT_EQ(repeated.code, 0) << repeated.err;
  EXPECT_EQ(repeated.out, both.out);

  // Session 1 of replica 0 copied into replica 1's ledger: each ledger verifies on its own; together
  // they do not.
  {
    auto a = Must(Ledger::OpenReadOnly(a_path_));
    auto b = Must(Ledger::Open(b_path_, keys_.challenger, clock_));
    CopySession(*a, *b, SessionId(1), keys_.challenger.public_key);
  }
  EXPECT_EQ(RunLedger({"verify", "--ledger=" + b_path_, KeyFlag()}).code, 0);
  Result copied = RunLedger({"verify", "--ledger=" + a_path_ + "," + b_path_, KeyFlag()});
  EXPECT_EQ(copied.code, 1);
  EXPECT_THAT(copied.out, HasSubstr("FAILED: session " + HexEncode(SessionId(1)) + " is recorded in ledger " + a_path_ +
                                    " and ledger " + b_path_ + ": a session is recorded by one challenger only"));
  EXPECT_THAT(copied.out, HasSubstr("total: FAILED: 2 ledgers, 2 verified (20 entries, 3 sessions); 1 session(s) in "
                                    "two or more ledgers\n"));
  EXPECT_EQ(copied.err,
            "wipeproof-challenger ledger verify: 0 of 2 ledgers failed to verify; 1 session(s) recorded in two or "
            "more ledgers\n");

  // A ledger that does not verify is named on its own line; the others are still checked.
  ASSERT_EQ(ledger_test::ExecSql(a_path_, "DELETE FROM entries WHERE sequence = 2"), "");
  Result broken = RunLedger({"verify", "--ledger=" + a_path_ + "," + b_path_, KeyFlag()});
  EXPECT_EQ(broken.code, 1);
  EXPECT_THAT(broken.out, HasSubstr("ledger " + a_path_ + ": FAILED: "));
  EXPECT_THAT(broken.out, HasSubstr("ledger entry 2 is missing: the ledger goes from entry 1 to 3 (deleted)\n"));
  EXPECT_THAT(broken.out, HasSubstr("ledger " + b_path_ + ": OK: 12 entries"));
  EXPECT_THAT(broken.out, HasSubstr("total: FAILED: 2 ledgers, 1 verified (12 entries, 2 sessions), 1 FAILED; no "
                                    "session in two ledgers\n"));
}

TEST_F(LedgerFleetCliTest, SeveralLedgersUsageErrors) {
  auto usage = [&](std::vector<std::string> args, const std::string& message) {
    Result r = RunLedger(args);
    EXPECT_EQ(r.code, 2) << message;
    EXPECT_THAT(r.err, HasSubstr(message));
  };
  usage({"verify", "--ledger=" + a_path_ + "," + b_path_,
         "--challenger_key=" + key_path_ + "," + key_path_ + "," + key_path_},
        "give one --challenger_key for every ledger, or one for all (2 ledgers, 3 keys)");
  usage({"verify", "--ledger=" + a_path_ + ",," + b_path_, KeyFlag()}, "--ledger has an empty item");
  usage({"verify", "--ledger=" + a_path_ + "," + a_path_, KeyFlag()}, "--ledger names " + a_path_ + " twice");
  // One file under two names (a link, or ./ in front) is named as such, not as a copied session.
  const std::string link = a_path_ + ".link";
  ASSERT_EQ(::symlink(a_path_.c_str(), link.c_str()), 0);
  usage({"verify", "--ledger=" + a_path_ + "," + b_path_ + "," + link, KeyFlag()},
        "--ledger names one file twice: " + a_path_ + " and " + link + " are the same file");
  const size_t slash = a_path_.rfind('/');
  const std::string dotted = a_path_.substr(0, slash) + "/./" + a_path_.substr(slash + 1);
  usage({"verify", "--ledger=" + dotted + "," + a_path_, KeyFlag()},
        "--ledger names one file twice: " + dotted + " and " + a_path_ + " are the same file");
  EXPECT_EQ(::unlink(link.c_str()), 0);
  usage({"verify", "--ledger=" + a_path_ + "," + b_path_, KeyFlag(), "--expect_head=x.json"},
        "--expect_head goes with one --ledger");
  usage({"show", "--ledger=" + a_path_, "--ledger=" + b_path_, KeyFlag()}, "--ledger is given twice");
  // A missing ledger among several exits as it would alone (2, a file to fix), not as tampering.
  usage({"verify", "--ledger=" + a_path_ + "," + a_path_ + ".missing", KeyFlag()}, "ledgers failed to verify");
}

// ---------------------------------------------------------------------------------------------
// ledger audit of several ledgers: real sessions against the test agent, one ledger per replica.

class LedgerFleetAuditTest : public ::testing::Test {
 protected:
  LedgerFleetAuditTest() : io_(kj::setupAsyncIo()) {}
  ~LedgerFleetAuditTest() noexcept override {}

  void SetUp() override {
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

  // One honest session of node-a recorded in `ledger`; returns its session id.
  proto::Bytes RunSession(Ledger& ledger) {
    auto plan =
        BuildPlan(inventory_, "node-a", testing::TestProfile(), LoneSessionWaveContext(inventory_, "node-a"), clock_);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    auto agent =
        testing::TestAgent({}, nullptr, &clock_, testing::TestKey(0x33), authority_.public_key, challenger_.public_key);
    testing::PipeConnector pipe(io_, kj::mv(agent));
    LedgerRecordSink sink(&ledger);
    SessionEnv env;
    env.clock = &clock_;
    env.timer = &io_.provider->getTimer();
    env.wait_scope = &io_.waitScope;
    env.records = &sink;
    env.threads = 2;
    SessionRunner runner(*plan, SessionKeys{authority_, challenger_}, env);
    auto outcome = runner.Run(pipe);
    EXPECT_TRUE(outcome.ok()) << outcome.status().ToString();
    EXPECT_TRUE(outcome.ok() && outcome->pass);
    return outcome.ok() ? proto::Bytes(outcome->session_id.begin(), outcome->session_id.end()) : proto::Bytes();
  }

  std::vector<std::string> Audit(const std::vector<std::string>& more) const {
    std::vector<std::string> words = {"audit", "--authority_key=" + authority_path_,
                                      "--challenger_key=" + challenger_path_, "--inventory=" + inventory_path_};
    words.insert(words.end(), more.begin(), more.end());
    return words;
  }

  kj::AsyncIoContext io_;
  FakeClock clock_{1'800'000'000'000'000};
  TempDir dir_;
  Inventory inventory_ = testing::TestInventory();
  proto::KeyPair authority_ = testing::TestKey(0x11);
  proto::KeyPair challenger_ = testing::TestKey(0x22);
  std::string authority_path_ = dir_.File("authority.pub");
  std::string challenger_path_ = dir_.File("challenger.pub");
  std::string inventory_path_ = dir_.File("inventory.json");
  std::string a_path_ = dir_.File("replica-0.db");
  std::string b_path_ = dir_.File("replica-1.db");
};

TEST_F(LedgerFleetAuditTest, AuditOfSeveralLedgersCatchesASessionCopiedIntoAnotherReplica) {
  auto a = Must(Ledger::Open(a_path_, challenger_, clock_));
  auto b = Must(Ledger::Open(b_path_, challenger_, clock_));
  for (Ledger* l : {a.get(), b.get()}) {  // as `serve` records the inventory it plans from (LedgerFromFlag)
    ASSERT_TRUE(l->RecordDocument("inventory", inventory_.text).ok());
  }
  const proto::Bytes first = RunSession(*a);
  RunSession(*b);

  Result both = RunLedger(Audit({"--ledger=" + a_path_ + "," + b_path_, "--threads=2"}));
  ASSERT_EQ(both.code, 0) << both.out << both.err;
  EXPECT_THAT(both.out, HasSubstr("ledger " + a_path_ + ": OK: "));
  EXPECT_THAT(both.out, HasSubstr("ledger " + b_path_ + ": OK: "));
  EXPECT_THAT(both.out, HasSubstr("total: OK: 2 sources, 2 audited OK; 2 session(s) and 0 wave verdict(s); no "
                                  "session in two sources\n"));

  // Replica 0's session, replayed into replica 1's ledger: the copy audits on its own (every
  // signature and label holds), but not together with the ledger it came from.
  CopySession(*a, *b, first, challenger_.public_key, &challenger_);
  Result alone = RunLedger(Audit({"--ledger=" + b_path_, "--threads=2"}));
  EXPECT_EQ(alone.code, 0) << alone.out << alone.err;
  Result copied = RunLedger(Audit({"--ledger=" + a_path_, "--ledger=" + b_path_, "--threads=2", "--json"}));
  EXPECT_EQ(copied.code, 1) << copied.out;
  const Json doc = Json::parse(copied.out);
  EXPECT_EQ(doc["result"], "failed");
  ASSERT_EQ(doc["sources"].size(), 2u);
  EXPECT_EQ(doc["sources"][0]["result"], "ok");
  EXPECT_EQ(doc["sources"][1]["result"], "ok");
  EXPECT_EQ(doc["sources"][1]["sessions"].size(), 2u);
  ASSERT_EQ(doc["sessions_in_several_sources"].size(), 1u);
  EXPECT_EQ(doc["sessions_in_several_sources"][0]["session_id"], HexEncode(first));
  EXPECT_EQ(doc["sessions_in_several_sources"][0]["sources"], Json::array({"ledger " + a_path_, "ledger " + b_path_}));
  EXPECT_EQ(doc["total"]["sessions"], 3);
  EXPECT_THAT(copied.err, HasSubstr("session " + HexEncode(first) + " is recorded in ledger " + a_path_ +
                                    " and ledger " + b_path_));
}

// ---------------------------------------------------------------------------------------------
// plan: challenger cores for a fleet.

// A fleet past a million cores (or a period so short the quotient overflows) is refused, not
// printed as 0 cores.
TEST(FleetCoresTest, AnAbsurdFleetIsRefused) {
  EXPECT_EQ(ChallengerCoresForFleet(UINT64_MAX, 1, 120).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ChallengerCoresForFleet(10, 1e-300, 120).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(ChallengerCoresForFleet(1'000'000, 3600, 1).ok());  // exactly a million cores
}

TEST(FleetCoresTest, CoresAreTheFleetsNodeWipesPerHourOverOneCoresThroughputRoundedUp) {
  // 10000 nodes every hour at 120 node wipes per core-hour: 10000 / 120 = 83.3 -> 84 cores.
  FleetCores f = Must(ChallengerCoresForFleet(10000, 3600, 120));
  EXPECT_DOUBLE_EQ(f.node_wipes_per_hour, 10000);
  EXPECT_EQ(f.cores, 84u);
  EXPECT_NEAR(f.utilisation, 10000.0 / (84 * 120), 1e-12);
  // 1000 nodes a day: 41.7 wipes/h, one core 34.7% busy.
  f = Must(ChallengerCoresForFleet(1000, 86400, 120));
  EXPECT_EQ(f.cores, 1u);
  EXPECT_NEAR(f.utilisation, 1000.0 / 24 / 120, 1e-12);
  // Exactly whole: 2400 nodes every 2 h at 100 per core-hour = 12 cores, all busy.
  f = Must(ChallengerCoresForFleet(2400, 7200, 100));
  EXPECT_EQ(f.cores, 12u);
  EXPECT_DOUBLE_EQ(f.utilisation, 1);
  EXPECT_FALSE(ChallengerCoresForFleet(0, 3600, 120).ok());
  EXPECT_FALSE(ChallengerCoresForFleet(10, 0, 120).ok());
  EXPECT_FALSE(ChallengerCoresForFleet(10, 3600, std::nan("")).ok());
}

TEST(FleetCoresTest, PlanPrintsTheCoresAFleetNeedsFromItsOwnThroughput) {
  TempDir dir;
  const std::string flags =
      "plan --gpus=8 --host_memory_gib=0 --verify_rate=100000000 --round_p999_us=200 --challenger_cores=4 "
      "--fleet_nodes=5000 --period_s=21600";
  testing::BinaryRun json = testing::RunBinary(WIPEPROOF_CHALLENGER_BIN, flags + " --json", dir.File(""));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const Json doc = Json::parse(json.out);
  EXPECT_EQ(doc["inputs"]["fleet_nodes"], 5000);
  EXPECT_EQ(doc["inputs"]["period_s"], 21600.0);
  int feasible = 0;
  for (const Json& c : doc["classes"]) {
    if (!c["feasible"].get<bool>()) continue;
    ++feasible;
    const double per_core = c["verification_node_wipes_per_core_hour"];
    ASSERT_GT(per_core, 0);
    const double wipes_per_hour = 5000.0 * 3600 / 21600;  // 833.3
    EXPECT_DOUBLE_EQ(c["fleet"]["node_wipes_per_hour"].get<double>(), wipes_per_hour);
    EXPECT_EQ(c["fleet"]["challenger_cores_needed"], static_cast<uint64_t>(std::ceil(wipes_per_hour / per_core)));
    EXPECT_NEAR(c["fleet"]["utilisation"].get<double>(),
                wipes_per_hour / per_core / std::ceil(wipes_per_hour / per_core), 1e-9);
  }
  EXPECT_GT(feasible, 0);
  testing::BinaryRun table = testing::RunBinary(WIPEPROOF_CHALLENGER_BIN, flags, dir.File(""));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("fleet: 5000 node(s), each wiped every 21600 s: 833.3 node wipes/h"));
  EXPECT_THAT(table.out, HasSubstr("fleet: challenger cores"));
  testing::BinaryRun alone = testing::RunBinary(WIPEPROOF_CHALLENGER_BIN,
                                                "plan --gpus=8 --verify_rate=100000000 --fleet_nodes=10", dir.File(""));
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_THAT(alone.err, HasSubstr("--fleet_nodes and --period_s go together"));
}

// ---------------------------------------------------------------------------------------------
// status and the metrics: one pass-due rule; every series from the start.

Wave TestWave() {
  Wave w;
  w.name = "rack";
  w.nodes = {"gpu-01", "gpu-02"};
  w.period_s = 3600;
  w.jitter_s = 60;
  return w;
}

// The value of `series` (name{labels} as rendered) in `text`; NaN as NaN; fails when absent.
double Sample(const std::string& text, const std::string& series) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(series + " ", 0) == 0) {
      const std::string value = line.substr(series.size() + 1);
      return value == "NaN" ? std::numeric_limits<double>::quiet_NaN() : std::stod(value);
    }
  }
  ADD_FAILURE() << "no series " << series << " in:\n" << text;
  return -1;
}

TEST(PassDueTest, StatusAndTheMetricUseOneRule) {
  const Wave wave = TestWave();
  // period 3600 + jitter 60 + 600 s for the run itself.
  EXPECT_EQ(PassDueUnixUs(wave, 1'000'000'000), 1'000'000'000 + 4'260'000'000);

  MetricsRegistry registry;
  const int64_t start = 1'800'000'000'000'000;
  FleetMetrics metrics(registry, "test", {&wave}, start);
  const int64_t passed = start - 7'200'000'000;  // two hours before the start: overdue already
  metrics.SeedLastPass("gpu-01", passed);
  EXPECT_EQ(Sample(registry.Render(), R"(wipeproof_challenger_pass_due_timestamp_seconds{node="gpu-01"})"),
            static_cast<double>(PassDueUnixUs(wave, passed)) / 1e6);
  // A node that never passed since its first try an hour and a half ago is due from that try.
  const int64_t tried = start - 5'400'000'000;
  metrics.SeedNeverPassed("gpu-02", tried);
  EXPECT_EQ(Sample(registry.Render(), R"(wipeproof_challenger_pass_due_timestamp_seconds{node="gpu-02"})"),
            static_cast<double>(PassDueUnixUs(wave, tried)) / 1e6);
  // ... but a later first try never moves the due time out.
  metrics.SeedNeverPassed("gpu-02", start + 1'000'000);
  EXPECT_EQ(Sample(registry.Render(), R"(wipeproof_challenger_pass_due_timestamp_seconds{node="gpu-02"})"),
            static_cast<double>(PassDueUnixUs(wave, tried)) / 1e6);
}

TEST(PassDueTest, StatusShowsTheSameDueTimeAsTheMetric) {
  Keys keys;
  TempDir dir;
  FakeClock clock{1'800'000'000'000'000};
  auto ledger = Must(Ledger::Open(dir.File("ledger.db"), keys.challenger, clock));
  const Wave wave = TestWave();
  const int64_t passed = 1'800'000'000'000'000, failed = 1'800'000'100'000'000;
  AppendVerdict(*ledger, SessionId(1), "gpu-01", true, passed, keys.challenger);
  AppendVerdict(*ledger, SessionId(2), "gpu-02", false, failed, keys.challenger);  // never passed
  Inventory inventory;
  for (const std::string& name : wave.nodes) {
    InventoryNode node;
    node.name = name;
    inventory.nodes.push_back(node);
  }
  inventory.waves.push_back(wave);
  // Just past gpu-02's due time (its first try + 3600 + 60 + 600 s), before gpu-01's.
  const int64_t now = failed + 4'261'000'000;
  FleetStatus status = Must(ReadFleetStatus(*ledger, keys.challenger.public_key, inventory, now));
  ASSERT_EQ(status.nodes.size(), 2u);
  EXPECT_EQ(status.nodes[0].next_due_unix_us, passed + 4'260'000'000);
  EXPECT_EQ(status.nodes[0].next_due_unix_us, PassDueUnixUs(wave, passed));
  EXPECT_EQ(status.nodes[1].next_due_unix_us, PassDueUnixUs(wave, failed));
  const auto json = FleetStatusJson(status);
  EXPECT_EQ(json["nodes"][0]["overdue"], true);  // 100 s older than gpu-02's try
  EXPECT_EQ(json["nodes"][1]["overdue"], true);
  auto earlier = Must(ReadFleetStatus(*ledger, keys.challenger.public_key, inventory, failed + 4'259'000'000));
  EXPECT_EQ(FleetStatusJson(earlier)["nodes"][1]["overdue"], false);  // a second before gpu-02's due time

  // The metric of a challenger started now, seeded from the ledger as serve seeds it, says the same.
  MetricsRegistry registry;
  FleetMetrics metrics(registry, "test", {&wave}, now);
  metrics.SeedFromLedger(status);
  const std::string text = registry.Render();
  EXPECT_EQ(Sample(text, R"(wipeproof_challenger_pass_due_timestamp_seconds{node="gpu-01"})"),
            static_cast<double>(status.nodes[0].next_due_unix_us) / 1e6);
  EXPECT_EQ(Sample(text, R"(wipeproof_challenger_pass_due_timestamp_seconds{node="gpu-02"})"),
            static_cast<double>(status.nodes[1].next_due_unix_us) / 1e6);
}

// A node the operator keeps from its wipes (always "out of service", so never ordered) has no verdict
// and no order, yet it falls due from the first inventory recorded in the ledger that names it: status
// shows it OVERDUE once that is a period (+ jitter + slack) old, a later inventory does not move it,
// and the metric of a serve started later says the same (a restart does not restart its clock).
// threat-model: T-NEVER-WIPED
TEST(PassDueTest, ANodeNeverOrderedFallsDueFromTheFirstInventoryNamingIt) {
  Keys keys;
  TempDir dir;
  FakeClock clock{1'800'000'000'000'000};
  auto ledger = Must(Ledger::Open(dir.File("ledger.db"), keys.challenger, clock));
  const Wave wave = TestWave();
  const int64_t named = clock.UnixMicros();
  const std::string both = R"({"nodes": [{"name": "gpu-01"}, {"name": "gpu-02"}], "waves": []})";
  ASSERT_TRUE(ledger->RecordDocument("inventory", both).ok());
  clock.Advance(3'000'000'000);  // a later, changed inventory, and gpu-01's pass
  ASSERT_TRUE(ledger->RecordDocument("inventory", R"({"nodes": [{"name": "gpu-02"}, {"name": "gpu-01"}]})").ok());
  const int64_t passed = clock.UnixMicros();
  AppendVerdict(*ledger, SessionId(1), "gpu-01", true, passed, keys.challenger);
  Inventory inventory;
  for (const std::string& name : {std::string("gpu-01"), std::string("gpu-02"), std::string("gpu-03")}) {
    InventoryNode node;
    node.name = name;
    inventory.nodes.push_back(node);
  }
  Wave three = wave;
  three.nodes = {"gpu-01", "gpu-02", "gpu-03"};
  inventory.waves.push_back(three);

  const int64_t now = PassDueUnixUs(three, named) + 1'000'000;
  FleetStatus status = Must(ReadFleetStatus(*ledger, keys.challenger.public_key, inventory, now));
  ASSERT_EQ(status.nodes.size(), 3u);
  EXPECT_EQ(status.nodes[0].next_due_unix_us, PassDueUnixUs(three, passed));  // from its pass
  EXPECT_EQ(status.nodes[1].due_from_unix_us, named);                         // the first inventory, not the later one
  EXPECT_EQ(status.nodes[1].next_due_unix_us, PassDueUnixUs(three, named));
  EXPECT_EQ(status.nodes[2].next_due_unix_us, 0);  // no recorded inventory names gpu-03
  const auto json = FleetStatusJson(status);
  EXPECT_EQ(json["nodes"][0]["overdue"], false);
  EXPECT_EQ(json["nodes"][1]["overdue"], true);
  EXPECT_NE(FleetStatusTable(status).find("(OVERDUE)"), std::string::npos) << FleetStatusTable(status);
  auto before = Must(ReadFleetStatus(*ledger, keys.challenger.public_key, inventory, now - 2'000'000));
  EXPECT_EQ(FleetStatusJson(before)["nodes"][1]["overdue"], false);

  // A serve started now seeds the metric from the ledger as serve does: the same due time.
  MetricsRegistry registry;
  FleetMetrics metrics(registry, "test", {&three}, now);
  metrics.SeedFromLedger(status);
  EXPECT_EQ(Sample(registry.Render(), R"(wipeproof_challenger_pass_due_timestamp_seconds{node="gpu-02"})"),
            static_cast<double>(PassDueUnixUs(three, named)) / 1e6);
}

// Renaming a node keeps its key: an inventory that names a never-ordered node's key under a new name
// does not restart its due clock (a host renamed each period would otherwise never fall due).
// threat-model: T-NEVER-WIPED
TEST(PassDueTest, ARenamedNodeKeepsItsDueTimeByItsKey) {
  Keys keys;
  TempDir dir;
  FakeClock clock{1'800'000'000'000'000};
  auto ledger = Must(Ledger::Open(dir.File("ledger.db"), keys.challenger, clock));
  proto::PublicKey key{};
  key.fill(0xAB);
  const std::string key_hex = HexEncode(key.data(), key.size());
  const int64_t named = clock.UnixMicros();
  ASSERT_TRUE(
      ledger->RecordDocument("inventory", R"({"nodes": [{"name": "gpu-02", "public_key": ")" + key_hex + R"("}]})")
          .ok());
  clock.Advance(3'000'000'000);
  // The renamed inventory, recorded later (the key in upper case: the same key).
  std::string upper = key_hex;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ASSERT_TRUE(
      ledger->RecordDocument("inventory", R"({"nodes": [{"name": "gpu-02b", "public_key": ")" + upper + R"("}]})")
          .ok());
  const int64_t renamed = clock.UnixMicros();
  Inventory inventory;
  InventoryNode node;
  node.name = "gpu-02b";
  node.public_key = key;
  inventory.nodes.push_back(node);
  InventoryNode other;  // another key, named nowhere before: due from nothing
  other.name = "gpu-03";
  other.public_key.fill(0xCD);
  inventory.nodes.push_back(other);
  Wave wave = TestWave();
  wave.nodes = {"gpu-02b", "gpu-03"};
  inventory.waves.push_back(wave);
  FleetStatus status = Must(ReadFleetStatus(*ledger, keys.challenger.public_key, inventory, renamed));
  ASSERT_EQ(status.nodes.size(), 2u);
  EXPECT_EQ(status.nodes[0].due_from_unix_us, named);
  EXPECT_EQ(status.nodes[0].next_due_unix_us, PassDueUnixUs(wave, named));
  EXPECT_EQ(status.nodes[1].due_from_unix_us, 0);
}

// A session whose order is recorded but that has no verdict (a challenger killed mid-wipe) is shown
// beside an older verdict, in the table and the JSON: RUNNING while its order's lifetime (expiresAt +
// sessionTimeout) has not ended, then INTERRUPTED and counted as a failed wipe of its node
// (docs/threat-model.md); a busy node's row says plainly that no wipe ran.
TEST(StatusTest, ShowsASessionWithoutVerdictAndWordsBusyPlainly) {
  Keys keys;
  TempDir dir;
  FakeClock clock{1'800'000'000'000'000};
  auto ledger = Must(Ledger::Open(dir.File("ledger.db"), keys.challenger, clock));
  const int64_t order_at = 1'800'000'000'000'000;  // ledger_test::OrderRecord's issuedAt, node-a
  AppendVerdict(*ledger, SessionId(1), "node-a", true, order_at - 1'000'000'000, keys.challenger);
  ASSERT_TRUE(ledger
                  ->Append(proto::LedgerRecordKind::ORDER, proto::AsView(ledger_test::OrderRecord(SessionId(2), keys)),
                           proto::AsView(SessionId(2)))
                  .ok());
  {  // node-b: refused the order as busy (nodeBusy): a failed wipe, shown busy.
    capnp::MallocMessageBuilder message;
    auto verdict = message.initRoot<proto::Verdict>();
    verdict.setSessionId(proto::AsView(SessionId(3)));
    verdict.setNodeName("node-b");
    verdict.initFailure().setReason(proto::FailureReason::NODE_BUSY);
    verdict.getFailure().setText("session 0102 in progress (fill)");
    proto::Bytes digest(proto::kDigestBytes, 0x22);
    verdict.setOrderDigest(proto::AsView(digest));
    verdict.setIssuedAtUnixUs(order_at);
    ASSERT_TRUE(ledger
                    ->Append(proto::LedgerRecordKind::VERDICT,
                             proto::AsView(ledger_test::SignToEnvelopeBytes(verdict, keys.challenger)),
                             proto::AsView(SessionId(3)))
                    .ok());
  }
  Inventory inventory;
  for (const char* name : {"node-a", "node-b"}) {
    InventoryNode node;
    node.name = name;
    inventory.nodes.push_back(node);
  }
  // Within the order's lifetime (ledger_test::OrderRecord: expires 60 s after its issuedAt, no session
  // timeout) the session may still run: shown, not counted.
  const int64_t expires = order_at + 60'000'000;
  FleetStatus running = Must(ReadFleetStatus(*ledger, keys.challenger.public_key, inventory, expires - 1));
  EXPECT_EQ(running.nodes[0].state, NodeState::kRunning);
  EXPECT_EQ(running.nodes[0].failures, 0u);
  EXPECT_EQ(running.nodes[0].sessions, 1u);
  EXPECT_THAT(FleetStatusTable(running),
              HasSubstr("node-a: session " + HexEncode(SessionId(2)) + " ordered at " + FormatUnixMicrosUtc(order_at) +
                        ": running, no verdict yet (a failed wipe if none is recorded by " +
                        FormatUnixMicrosUtc(expires) + ")\n"));
  EXPECT_THAT(FleetStatusTable(running), HasSubstr("RUNNING"));
  EXPECT_EQ(FleetStatusJson(running)["nodes"][0]["state"], "running");
  EXPECT_EQ(FleetStatusJson(running)["nodes"][0]["unfinished_session"]["running"], true);
  // From its end on: interrupted, a failed wipe of node-a.
  FleetStatus status = Must(ReadFleetStatus(*ledger, keys.challenger.public_key, inventory, expires));
  ASSERT_EQ(status.nodes.size(), 2u);
  EXPECT_EQ(status.nodes[0].unfinished_session, HexEncode(SessionId(2)));
  EXPECT_EQ(status.nodes[0].unfinished_at_unix_us, order_at);
  EXPECT_TRUE(status.nodes[0].last->pass);  // the last verdict is still the older pass
  EXPECT_EQ(status.nodes[0].state, NodeState::kInterrupted);
  EXPECT_EQ(status.nodes[0].failures, 1u);
  EXPECT_EQ(status.nodes[0].interrupted, 1u);
  EXPECT_EQ(status.nodes[0].sessions, 2u);
  const std::string table = FleetStatusTable(status);
  EXPECT_THAT(table, HasSubstr("node-a: last session " + HexEncode(SessionId(2)) + " ordered at " +
                               FormatUnixMicrosUtc(order_at) +
                               ": no verdict, interrupted (the challenger stopped before its verdict): counted as a "
                               "failed wipe\n"));
  EXPECT_THAT(table, ::testing::ContainsRegex("\nnode-a +\\(none\\) +INTERRUPTED +60 s +no verdict +1 of 2 \\(1 "
                                              "interrupted\\) "));
  EXPECT_THAT(table, HasSubstr("node-b: busy: its agent refused the order, saying it runs another session, so no "
                               "wipe ran: counted as a failed wipe (nodeBusy: session 0102 in progress (fill))\n"));
  EXPECT_THAT(table, Not(HasSubstr("node-b: last verdict failed")));
  const auto json = FleetStatusJson(status);
  EXPECT_EQ(json["nodes"][0]["unfinished_session"]["session_id"], HexEncode(SessionId(2)));
  EXPECT_EQ(json["nodes"][0]["unfinished_session"]["order_issued_unix_us"], order_at);
  EXPECT_EQ(json["nodes"][0]["unfinished_session"]["running"], false);
  EXPECT_EQ(json["nodes"][0]["state"], "interrupted");
  EXPECT_EQ(json["nodes"][0]["failures"], 1);
  EXPECT_EQ(json["nodes"][0]["interrupted"], 1);
  EXPECT_EQ(json["nodes"][1]["state"], "busy");
  EXPECT_EQ(json["nodes"][1]["failures"], 1);
  EXPECT_EQ(json["nodes"][1]["busy"], 1);
  EXPECT_TRUE(json["nodes"][1]["unfinished_session"].is_null());
  // A verdict after that order (the next session) ends the question.
  AppendVerdict(*ledger, SessionId(4), "node-a", true, order_at + 100'000'000, keys.challenger);
  status = Must(ReadFleetStatus(*ledger, keys.challenger.public_key, inventory, order_at + 200'000'000));
  EXPECT_EQ(status.nodes[0].unfinished_session, "");
  EXPECT_EQ(status.nodes[0].state, NodeState::kPass);
  EXPECT_THAT(FleetStatusTable(status), Not(HasSubstr("no verdict")));
  // The interrupted session stays a failed wipe of node-a.
  EXPECT_EQ(status.nodes[0].failures, 1u);
  EXPECT_EQ(status.nodes[0].sessions, 3u);
  EXPECT_THAT(FleetStatusTable(status),
              HasSubstr("node-a: 1 session(s) without a verdict in all (interrupted), counted as failed wipes\n"));
}

// `ledger show` and `status` print what the ledger holds as a terminal may show it, in one form
// (common/terminal_text.h): a node name with ESC sequences, a newline, C1 controls, bidi overrides,
// bytes that are not UTF-8 or a backslash (a ledger written before inventories refused such names)
// is escaped (the JSON was escaped already).
// `status --inventory` shows whether the ledger's wipes ran under the inventory given: only the
// orders whose delegation names its digest count; another file's nodes, waves and holds are said to
// be that file's word (an operator could pass one that hides a node from "held").
TEST(StatusTest, SaysWhetherTheLedgersOrdersRanUnderTheInventory) {
  Keys keys;
  TempDir dir;
  FakeClock clock{1'800'000'000'000'000};
  auto ledger = Must(Ledger::Open(dir.File("ledger.db"), keys.challenger, clock));
  proto::Digest named{};
  named.fill(0x3c);
  for (uint8_t k = 1; k <= 2; ++k) {  // two orders under the named inventory, one under none
    ASSERT_TRUE(ledger
                    ->Append(proto::LedgerRecordKind::ORDER,
                             proto::AsView(ledger_test::OrderRecord(SessionId(k), keys, &named)),
                             proto::AsView(SessionId(k)))
                    .ok());
  }
  ASSERT_TRUE(ledger
                  ->Append(proto::LedgerRecordKind::ORDER, proto::AsView(ledger_test::OrderRecord(SessionId(3), keys)),
                           proto::AsView(SessionId(3)))
                  .ok());
  Inventory inventory;
  InventoryNode node;
  node.name = "node-a";
  inventory.nodes.push_back(node);
  const int64_t now = 1'800'000'100'000'000;

  inventory.digest = named;
  FleetStatus ran = Must(ReadFleetStatus(*ledger, keys.challenger.public_key, inventory, now));
  EXPECT_EQ(ran.orders_naming_inventory, 2u);
  EXPECT_THAT(FleetStatusTable(ran), HasSubstr("inventory " + HexEncode(named.data(), named.size()) +
                                               ": the delegation of 2 of 3 order(s) of this ledger names it "
                                               "(whether the authority signed those delegations is ledger audit's "
                                               "check)\n"));
  EXPECT_EQ(FleetStatusJson(ran)["inventory"]["orders_naming_it"], 2);
  EXPECT_EQ(FleetStatusJson(ran)["inventory"]["orders"], 3);
  EXPECT_EQ(FleetStatusJson(ran)["inventory"]["digest"], HexEncode(named.data(), named.size()));

  proto::Digest other = named;
  other[31] ^= 1;  // one bit of the file differs
  inventory.digest = other;
  FleetStatus unchecked = Must(ReadFleetStatus(*ledger, keys.challenger.public_key, inventory, now));
  EXPECT_EQ(unchecked.orders_naming_inventory, 0u);
  EXPECT_THAT(FleetStatusTable(unchecked),
              HasSubstr("no order of this ledger ran under it (no order's delegation names it): its nodes, waves "
                        "and holds are this file's, unchecked"));

  inventory.digest.reset();  // keys by file: no digest a delegation could name
  FleetStatus by_file = Must(ReadFleetStatus(*ledger, keys.challenger.public_key, inventory, now));
  EXPECT_EQ(by_file.orders_naming_inventory, 0u);
  EXPECT_THAT(FleetStatusTable(by_file), HasSubstr("inventory: no digest a delegation could name"));
  EXPECT_TRUE(FleetStatusJson(by_file)["inventory"]["digest"].is_null());
}

TEST(StatusTest, LedgerShowEscapesControlCharactersInNames) {
  Keys keys;
  TempDir dir;
  FakeClock clock{1'800'000'000'000'000};
  const std::string path = dir.File("ledger.db"), key = dir.File("challenger.pub");
  ASSERT_TRUE(proto::WritePublicKeyFile(key, keys.challenger.public_key).ok());
  {
    auto ledger = Must(Ledger::Open(path, keys.challenger, clock));
    AppendVerdict(*ledger, SessionId(1), "evil\x1b[2Jnode\nforged", true, 1'800'000'000'000'000, keys.challenger);
    AppendVerdict(*ledger, SessionId(2),
                  "c1\xc2\x9b"
                  "31m\xc2\x85"
                  "bidi\xe2\x80\xae"
                  "x\\u001b\xff",
                  false, 1'800'000'001'000'000, keys.challenger);
  }
  const std::string evil = "evil\\u001b[2Jnode\\u000aforged";
  const std::string evil2 = "c1\\u009b31m\\u0085bidi\\u202ex\\\\u001b\\xff";
  Result show = RunLedger({"show", "--ledger=" + path, "--challenger_key=" + key});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr(evil));
  // (show's summaries are made valid UTF-8 when the record is summarized: the 0xff byte is U+FFFD there)
  EXPECT_THAT(show.out, HasSubstr(evil2.substr(0, evil2.size() - 4) + "\xef\xbf\xbd"));
  EXPECT_EQ(show.out.find('\x1b'), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("\xc2\x9b"), std::string::npos) << show.out;
  // status: the table's rows and lines, one line per node.
  Inventory inventory;
  auto ledger = Must(Ledger::OpenReadOnly(path));
  const std::string table =
      FleetStatusTable(Must(ReadFleetStatus(*ledger, keys.challenger.public_key, inventory, 1'800'000'002'000'000)));
  EXPECT_THAT(table, HasSubstr("\n" + evil + " "));   // its row
  EXPECT_THAT(table, HasSubstr("\n" + evil2 + " "));  // its row
  EXPECT_THAT(table, HasSubstr("\n" + evil2 + ": last verdict failed: lateRound\n"));
  // header, 2 rows, 1 failure, ledger, inventory
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 6) << table;
  for (const char* raw : {"\x1b", "\xc2\x9b", "\xc2\x85", "\xe2\x80\xae", "\xff"}) {
    EXPECT_EQ(table.find(raw), std::string::npos) << table;
  }
  Result node = RunLedger({"show", "--ledger=" + path, "--challenger_key=" + key, "--node=x"});
  EXPECT_EQ(node.code, 2);
  EXPECT_EQ(node.err.find('\x1b'), std::string::npos) << node.err;
}

TEST(FleetMetricsTest, EverySeriesOfEveryNodeExistsBeforeTheFirstVerdict) {
  const Wave wave = TestWave();
  MetricsRegistry registry;
  const int64_t start = 1'800'000'000'000'000;
  FleetMetrics metrics(registry, "test", {&wave}, start);
  const std::string text = registry.Render();
  for (const char* node : {"gpu-01", "gpu-02"}) {
    const std::string n = std::string("{node=\"") + node + "\"}";
    EXPECT_TRUE(std::isnan(Sample(text, "wipeproof_challenger_verdict_pass" + n)));
    EXPECT_TRUE(std::isnan(Sample(text, "wipeproof_challenger_verdict_unwiped_bound_bytes" + n)));
    EXPECT_TRUE(std::isnan(Sample(text, "wipeproof_challenger_fill_seconds" + n)));
    EXPECT_EQ(Sample(text, "wipeproof_challenger_last_verdict_timestamp_seconds" + n), 0);
    EXPECT_EQ(Sample(text, "wipeproof_challenger_last_pass_timestamp_seconds" + n), 0);
    EXPECT_EQ(Sample(text, "wipeproof_challenger_round_seconds_count" + n), 0);
    EXPECT_EQ(Sample(text, std::string("wipeproof_challenger_sessions_total{node=\"") + node + "\",outcome=\"fail\"}"),
              0);
    // A node that never passes is due from the challenger's start: the alert fires for it.
    EXPECT_EQ(Sample(text, "wipeproof_challenger_pass_due_timestamp_seconds" + n),
              static_cast<double>(PassDueUnixUs(wave, start)) / 1e6);
  }
  EXPECT_EQ(Sample(text, R"(wipeproof_challenger_wave_runs_total{wave="rack",outcome="fail"})"), 0);
}

}  // namespace
}  // namespace wipeproof
