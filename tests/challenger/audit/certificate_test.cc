// Certificates (challenger/audit/certificate.h, `ledger certificate`, `ledger audit --certificate`):
// real sessions of the challenger against the test agent, recorded in a real ledger (its inventory
// recorded as wipe records it), certified through the command line and checked on their own. A
// certificate verifies and says what its records say; one with a byte changed (whitespace, a summary
// field, a byte of an embedded envelope, a public key) fails; a failed session's certificate
// verifies as a failed session. The canonical text is Python's json.dumps on awkward strings too
// (tests/testdata/canonical-json.json, which the recipe checks the same way in audit_test.sh).
#include "challenger/audit/certificate.h"

#include <capnp/dynamic.h>
#include <capnp/schema.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <kj/async-io.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "challenger/audit/certificate_text.h"
#include "challenger/cli/cli_ledger.h"
#include "challenger/fleet/plan_builder.h"
#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_record_sink.h"
#include "challenger/session/occupancy_bound.h"
#include "challenger/session/session_runner.h"
#include "common/hex.h"
#include "proto/key_files.h"
#include "proto/signing.h"
#include "tests/support/challenger_fixtures.h"
#include "tests/support/ledger_test_util.h"

namespace wipeproof {
namespace {

using Json = nlohmann::json;
using proto::FailureReason;
using testing::Deviation;
using testing::DeviationKind;
using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool HasFloat(const Json& value) {
  if (value.is_number_float()) return true;
  for (const Json& item : value) {
    if (value.is_structured() && HasFloat(item)) return true;
  }
  return false;
}

TEST(CertificateTextTest, CanonicalTextIsPythonsJsonDumpsOnAwkwardStrings) {
  // Written by Python's json.dumps(value, sort_keys=True, indent=2, ensure_ascii=True) + "\n".
  const std::string text = ReadFile(std::string(WIPEPROOF_TESTDATA_DIR) + "/canonical-json.json");
  ASSERT_GT(text.size(), 1000u);
  const Json parsed = Json::parse(text);
  EXPECT_EQ(CanonicalJsonText(parsed), text);
  EXPECT_EQ(parsed["strings"]["astral"].get<std::string>().substr(0, 4), "\xF0\x9F\x98\x80");  // U+1F600, UTF-8
  EXPECT_EQ(parsed["numbers"][3].get<uint64_t>(), UINT64_MAX);
  // Floats are text both tools write alike: %.17g.
  EXPECT_EQ(FloatText(0.99), "0.98999999999999999");
  EXPECT_EQ(FloatText(1.5), "1.5");
  EXPECT_EQ(FloatText(1e-05), "1.0000000000000001e-05");
  EXPECT_EQ(FloatText(1.0 / 3), "0.33333333333333331");
  EXPECT_EQ(FloatText(0.0), "0");
  EXPECT_EQ(FloatText(std::nan("")), "nan");
  EXPECT_EQ(FirstTextDifference("ab\ncd", "ab\ncx"), "byte 4 (line 2, column 2): 'd' (0x64), canonical: 'x' (0x78)");
  EXPECT_EQ(FirstTextDifference("{\n\t", "{\n  "), "byte 2 (line 2, column 1): a tab (0x09), canonical: a space (0x20)");
  EXPECT_EQ(FirstTextDifference("{\xc3", "{}"), "byte 1 (line 1, column 2): 0xc3, canonical: '}' (0x7d)");
  EXPECT_EQ(FirstTextDifference("{}", "{}\n"), "byte 2 (line 1, column 3): the end, canonical: a newline (0x0a)");
  EXPECT_EQ(FirstJsonDifference(Json::parse(R"({"a": [1, {"b": 2}]})"), Json::parse(R"({"a": [1, {"b": 2.0}]})")),
            "a[1].b is 2, recomputed: 2.0");
}

// threat-model: T-AUDIT-REWRITE
class CertificateTest : public ::testing::Test {
 protected:
  CertificateTest() : io_(kj::setupAsyncIo()) {}
  ~CertificateTest() noexcept override {}

  void SetUp() override {
    ledger_ = ledger_test::Must(Ledger::Open(ledger_path_, challenger_, clock_), "ledger");
    ASSERT_TRUE(ledger_->RecordDocument("inventory", inventory_.text).ok());  // as wipe records it
    ASSERT_TRUE(proto::WritePublicKeyFile(authority_path_, authority_.public_key).ok());
    ASSERT_TRUE(proto::WritePublicKeyFile(challenger_path_, challenger_.public_key).ok());
  }

  // One session of node-a against the test agent with `deviation`, under a calibrated profile, its
  // order asking for an occupancy window of 100 ms at a mean gap of 5 ms (as ledger_audit_test).
  SessionOutcome RunSession(Deviation deviation = {}) {
    auto plan = BuildPlan(inventory_, "node-a", testing::CalibratedTestProfile(),
                          LoneSessionWaveContext(inventory_, "node-a"), clock_);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_TRUE(SetOccupancySchedule(&*plan, {100'000, 5'000, uint64_t{32} * 64 * 40, 4}).ok());
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
  // `ledger certificate` of the session into certificate_path_; its exit code.
  int Certify(const std::string& session_hex) {
    std::vector<std::string> args = {"certificate", "--ledger=" + ledger_path_, "--session=" + session_hex,
                                     "--out=" + certificate_path_, "--threads=2"};
    for (const std::string& key : Keys()) args.push_back(key);
    Result r = Run(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code;
  }
  // `ledger audit --certificate` of `text`, written to a file.
  Result Check(const std::string& text) {
    std::ofstream(checked_path_, std::ios::binary) << text;
    std::vector<std::string> args = {"audit", "--certificate=" + checked_path_, "--threads=2"};
    for (const std::string& key : Keys()) args.push_back(key);
    return Run(args);
  }
  // The certificate with `edit` applied to its content, written canonically (so only the content differs).
  Result CheckEdited(const std::string& text, const std::function<void(Json&)>& edit) {
    Json document = Json::parse(text);
    edit(document);
    return Check(CanonicalJsonText(document));
  }

  kj::AsyncIoContext io_;
  FakeClock clock_{1'800'000'000'000'000};
  ledger_test::TempDir dir_;
  Inventory inventory_ = testing::TestInventory();
  proto::KeyPair authority_ = testing::TestKey(0x11);
  proto::KeyPair challenger_ = testing::TestKey(0x22);
  std::string ledger_path_ = dir_.File("ledger.db");
  std::string authority_path_ = dir_.File("authority.pub");
  std::string challenger_path_ = dir_.File("challenger.pub");
  std::string certificate_path_ = dir_.File("certificate.json");
  std::string checked_path_ = dir_.File("checked.json");
  std::unique_ptr<Ledger> ledger_;
};

TEST_F(CertificateTest, ASessionsCertificateVerifiesAndSaysWhatItsRecordsSay) {
  const SessionOutcome outcome = RunSession();
  ASSERT_TRUE(outcome.pass) << outcome.failure.Describe();
  const std::string session = HexEncode(outcome.session_id.data(), outcome.session_id.size());
  ASSERT_EQ(Certify(session), 0);
  const std::string text = ReadFile(certificate_path_);
  Result checked = Check(text);
  EXPECT_EQ(checked.code, 0) << checked.err;
  EXPECT_THAT(checked.out, HasSubstr("certificate " + checked_path_ + ": OK: session " + session + ": pass\n"));
  EXPECT_THAT(checked.out, HasSubstr("certificate: OK: every byte of it is what its signed records make it"));

  // What it says is what the signed verdict and order say.
  const auto verdict =
      ledger_test::Must(proto::VerifyAndParse<proto::Verdict>(outcome.verdict, challenger_.public_key), "verdict");
  const auto v = verdict.root();
  const Json c = Json::parse(text);
  EXPECT_EQ(CanonicalJsonText(c), text);
  EXPECT_EQ(c["format"], "wipeproof-certificate/v1");
  EXPECT_EQ(c["certified"]["subject"], Json({{"kind", "session"}, {"session_id", session}}));
  EXPECT_EQ(c["certified"]["outcome"], Json({{"pass", true}, {"result", "pass"}}));
  EXPECT_TRUE(c["certified"]["wave"].is_null());
  ASSERT_EQ(c["certified"]["sessions"].size(), 1u);
  const Json& s = c["certified"]["sessions"][0];
  EXPECT_EQ(s["node"], "node-a");
  EXPECT_EQ(s["node_key_id"], proto::KeyIdHex(proto::KeyIdOf(testing::TestKeyPublic(0x33))));
  ASSERT_EQ(s["devices"].size(), 2u);
  EXPECT_EQ(s["devices"][0]["selector"], "host");
  EXPECT_EQ(s["devices"][0]["planned_bytes"], 64u * 64u * 32u);  // 64 chunks of m = 64
  EXPECT_EQ(s["devices"][1]["selector"], "GPU-test-0");
  EXPECT_EQ(s["devices"][1]["planned_bytes"], 96u * 64u * 32u);
  EXPECT_EQ(s["devices"][1]["capacity_bytes"], 96u * 64u * 32u + 1000u);
  EXPECT_EQ(s["devices"][1]["allowed_reserve_bytes"], 1000u);
  EXPECT_EQ(s["devices"][0]["chunks_checked"], v.getDevices()[0].getChunksChecked());
  EXPECT_EQ(s["times"]["order_sent_at_unix_us"], v.getOrderSentAtUnixUs());
  EXPECT_EQ(s["times"]["order_sent_at"], FormatUnixMicrosUtc(v.getOrderSentAtUnixUs()));
  EXPECT_EQ(s["times"]["fill_us"], v.getFillMicros());
  EXPECT_EQ(s["times"]["rounds"], v.getRounds().size());
  EXPECT_EQ(s["outcome"],
            Json({{"pass", true}, {"failure_reason", "none"}, {"failure_text", ""}, {"superseded_pass", false}}));
  EXPECT_EQ(s["statements"]["bound"]["stated"], true);
  EXPECT_EQ(s["statements"]["bound"]["statement"], v.getStatement().cStr());
  EXPECT_THAT(s["statements"]["bound"]["statement"].get<std::string>(), HasSubstr("bytes of node node-a's planned"));
  EXPECT_EQ(s["statements"]["bound"]["total_unwiped_bound_bytes"], v.getTotalUnwipedBoundBytes());
  EXPECT_EQ(s["statements"]["bound"]["confidence"], FloatText(v.getConfidence()));
  ASSERT_TRUE(v.hasOccupancy());
  const Json& o = s["statements"]["occupancy"];
  EXPECT_EQ(o["rounds"], v.getOccupancy().getRounds());
  EXPECT_GT(o["rounds"].get<uint32_t>(), 0u);
  EXPECT_EQ(o["statement"], v.getOccupancy().getStatement().cStr());
  EXPECT_EQ(o["detection"], FloatText(v.getOccupancy().getDetection()));
  EXPECT_EQ(s["times"]["occupancy_window"]["start_at_unix_us"],
            v.getOrderSentAtUnixUs() + static_cast<int64_t>(v.getOccupancy().getWindowStartAfterOrderUs()));
  // "further": exactly the verdict's fields after occupancy @20 that capnp's JSON writes (a pointer
  // field when set), no float left a number.
  std::set<std::string> further_fields;
  auto dynamic = capnp::toDynamic(v);
  for (auto field : capnp::Schema::from<proto::Verdict>().getFields()) {
    if (field.getIndex() > 20 && dynamic.has(field)) further_fields.insert(field.getProto().getName().cStr());
  }
  std::set<std::string> further_listed;
  for (auto it = s["statements"]["further"].begin(); it != s["statements"]["further"].end(); ++it) {
    further_listed.insert(it.key());
    EXPECT_FALSE(HasFloat(it.value())) << it.value().dump();
  }
  EXPECT_EQ(further_listed, further_fields);
  ASSERT_EQ(s["assumptions"].size(), v.getAssumptions().size());
  EXPECT_EQ(s["assumptions"][0]["name"], "host-memory-in-plan");
  EXPECT_EQ(s["declarations"]["inventory_digest"],
            Hex(proto::Blake2b256(
                proto::ByteView(reinterpret_cast<const uint8_t*>(inventory_.text.data()), inventory_.text.size()))));
  // The evidence: the session's entries, each with its envelope, the keys its orders name.
  const Json& e = c["evidence"];
  EXPECT_EQ(e["session_filter"], session);
  EXPECT_FALSE(e.contains("ledger"));  // nothing unsigned
  EXPECT_FALSE(e.contains("exported_at"));
  EXPECT_EQ(e["authority_public_key"], Hex(authority_.public_key));
  EXPECT_EQ(e["nodes"], Json::parse(R"([{"name": "node-a", "key_id": ")" +
                                    proto::KeyIdHex(proto::KeyIdOf(testing::TestKeyPublic(0x33))) +
                                    R"(", "public_key": ")" + Hex(testing::TestKeyPublic(0x33)) + R"("}])"));
  ASSERT_EQ(e["documents"].size(), 1u);
  EXPECT_EQ(e["documents"][0]["text"], inventory_.text);
  EXPECT_EQ(e["entries"].size(), 8u);  // order, 2 notices, report, round log, verdict, transcript, receipt
  for (const Json& entry : e["entries"]) EXPECT_TRUE(entry.contains("envelope"));
}

TEST_F(CertificateTest, AnyChangedByteFails) {
  const SessionOutcome outcome = RunSession();
  ASSERT_TRUE(outcome.pass) << outcome.failure.Describe();
  ASSERT_EQ(Certify(HexEncode(outcome.session_id.data(), outcome.session_id.size())), 0);
  const std::string text = ReadFile(certificate_path_);
  ASSERT_EQ(Check(text).code, 0);
  auto fails = [&](const Result& r, const std::string& words) {
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_THAT(r.out, HasSubstr(": FAILED: "));
    EXPECT_THAT(r.err, HasSubstr(words));
  };
  // Whitespace: an indentation space made a tab, a space added at the end; the same content.
  std::string tab = text;
  const size_t indent = tab.find("\n  ");
  tab[indent + 2] = '\t';
  fails(Check(tab), "not in canonical form (docs/certificate.md), first at byte " + std::to_string(indent + 2));
  fails(Check(text + " "), "not in canonical form");
  fails(Check(text.substr(0, text.size() - 1)), "not in canonical form");
  fails(Check("\xEF\xBB\xBF" + text), "it begins with a byte-order mark (U+FEFF");
  // Another kind of document is named as what it is.
  fails(CheckEdited(text, [](Json& c) { c["format"] = "wipeproof-ledger-export/v1"; }),
        "not a certificate: its format is 'wipeproof-ledger-export/v1'");
  fails(CheckEdited(text, [](Json& c) { c.erase("format"); }), "not a certificate: it has no field 'format'");
  // Summary fields.
  fails(
      CheckEdited(text, [](Json& c) { c["certified"]["sessions"][0]["statements"]["bound"]["statement"] = "nothing"; }),
      "certified.sessions[0].statements.bound.statement is \"nothing\", recomputed: \"at ");
  fails(CheckEdited(text, [](Json& c) { c["certified"]["outcome"]["pass"] = false; }),
        "certified.outcome.pass is false, recomputed: true");
  fails(CheckEdited(text,
                    [](Json& c) {
                      auto& planned = c["certified"]["sessions"][0]["devices"][1]["planned_bytes"];
                      planned = planned.get<uint64_t>() + 32;
                    }),
        "certified.sessions[0].devices[1].planned_bytes is 196640, recomputed: 196608");
  fails(CheckEdited(text,
                    [](Json& c) {
                      auto& stated = c["certified"]["sessions"][0]["statements"]["occupancy"]["stated"];
                      stated = !stated.get<bool>();
                    }),
        "certified.sessions[0].statements.occupancy.stated is ");
  // A byte of an embedded envelope (the round log's entry).
  fails(CheckEdited(text,
                    [](Json& c) {
                      std::string envelope = c["evidence"]["entries"][4]["envelope"];
                      const size_t at = envelope.size() / 2;
                      envelope[at] = envelope[at] == '0' ? '1' : '0';
                      c["evidence"]["entries"][4]["envelope"] = envelope;
                    }),
        "entries[4]");
  // An unsigned field of the evidence that an export would carry.
  fails(CheckEdited(text, [](Json& c) { c["evidence"]["ledger"] = "elsewhere.db"; }),
        "evidence.ledger is not expected");
  // Public keys: the authority's, another node's key in place of node-a's (its key id with it), the
  // challenger's.
  const proto::PublicKey other = testing::TestKeyPublic(0x44);
  fails(CheckEdited(text,
                    [&](Json& c) {
                      c["evidence"]["authority_public_key"] = Hex(other);
                      c["evidence"]["authority_key_id"] = proto::KeyIdHex(proto::KeyIdOf(other));
                    }),
        "export lists authority key");
  fails(CheckEdited(text,
                    [&](Json& c) {
                      c["evidence"]["nodes"][0]["public_key"] = Hex(other);
                      c["evidence"]["nodes"][0]["key_id"] = proto::KeyIdHex(proto::KeyIdOf(other));
                    }),
        "the evidence lists no public key of node node-a with key id " +
            proto::KeyIdHex(proto::KeyIdOf(testing::TestKeyPublic(0x33))));
  fails(CheckEdited(text, [&](Json& c) { c["evidence"]["challenger_public_key"] = Hex(other); }),
        "field 'challenger_public_key' is not the key");
  // The inventory the delegation names, one byte of its text.
  fails(CheckEdited(text,
                    [](Json& c) {
                      std::string inventory = c["evidence"]["documents"][0]["text"];
                      inventory[inventory.find("node-b")] = 'N';
                      c["evidence"]["documents"][0]["text"] = inventory;
                    }),
        "is not its text's");
}

TEST_F(CertificateTest, AFailedSessionsCertificateVerifiesAsAFailedSession) {
  const SessionOutcome wrong = RunSession(testing::BlankChunks());
  ASSERT_EQ(wrong.failure.reason, FailureReason::WRONG_LABEL);
  const SessionOutcome superseded = RunSession(testing::Cheat(DeviationKind::kTranscriptMismatch));
  ASSERT_EQ(superseded.failure.reason, FailureReason::PROTOCOL_ERROR);
  ASSERT_TRUE(superseded.superseded_verdict.has_value());

  ASSERT_EQ(Certify(HexEncode(wrong.session_id.data(), wrong.session_id.size())), 0);
  Result checked = Check(ReadFile(certificate_path_));
  EXPECT_EQ(checked.code, 0) << checked.err;
  EXPECT_THAT(checked.out,
              HasSubstr(": OK: session " + HexEncode(wrong.session_id.data(), 16) + ": fail (wrongLabel)\n"));
  EXPECT_THAT(checked.out, HasSubstr("differs from the label recomputed from the seed"));  // the audit's confirmation
  Json c = Json::parse(ReadFile(certificate_path_));
  EXPECT_EQ(c["certified"]["outcome"], Json({{"pass", false}, {"result", "fail (wrongLabel)"}}));
  EXPECT_EQ(c["certified"]["sessions"][0]["outcome"]["failure_reason"], "wrongLabel");
  EXPECT_EQ(c["certified"]["sessions"][0]["statements"]["bound"]["stated"], false);

  ASSERT_EQ(Certify(HexEncode(superseded.session_id.data(), superseded.session_id.size())), 0);
  checked = Check(ReadFile(certificate_path_));
  EXPECT_EQ(checked.code, 0) << checked.err;
  c = Json::parse(ReadFile(certificate_path_));
  EXPECT_EQ(c["certified"]["outcome"]["result"], "fail (protocolError)");
  EXPECT_EQ(c["certified"]["sessions"][0]["outcome"]["superseded_pass"], true);
  // Made to read as a pass, it fails.
  Result edited = CheckEdited(ReadFile(certificate_path_), [](Json& d) {
    d["certified"]["outcome"] = {{"pass", true}, {"result", "pass"}};
  });
  EXPECT_EQ(edited.code, 1);
  EXPECT_THAT(edited.err, HasSubstr("certified.outcome.pass is true, recomputed: false"));
}

TEST_F(CertificateTest, WhatIsNotThereOrNotGivenIsAClearError) {
  RunSession();
  std::vector<std::string> base = {"certificate", "--ledger=" + ledger_path_};
  auto with = [&](std::vector<std::string> more, bool keys = true) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    if (keys) args.insert(args.end(), {"--authority_key=" + authority_path_, "--challenger_key=" + challenger_path_});
    return Run(args);
  };
  const std::string nobody(32, 'a');
  Result missing = with({"--session=" + nobody});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "wipeproof-challenger ledger certificate: ledger " + ledger_path_ +
                             " holds no record of session " + nobody + "\n");
  Result no_wave = with({"--wave=wave-1"});
  EXPECT_EQ(no_wave.code, 2);
  EXPECT_EQ(no_wave.err, "wipeproof-challenger ledger certificate: ledger " + ledger_path_ +
                             " holds no wave verdict of wave 'wave-1' (it holds no wave verdict)\n");
  Result neither = with({});
  EXPECT_EQ(neither.code, 2);
  EXPECT_THAT(neither.err, HasSubstr("give --session=HEX (a session's certificate) or --wave=NAME (a wave's)"));
  Result no_authority =
      Run({"certificate", "--ledger=" + ledger_path_, "--session=" + nobody, "--challenger_key=" + challenger_path_});
  EXPECT_EQ(no_authority.code, 2);
  EXPECT_THAT(no_authority.err, HasSubstr("--authority_key=FILE.pub is required"));
  Result bad_session = with({"--session=12"});
  EXPECT_EQ(bad_session.code, 2);
  // audit --certificate: on its own, and a file that is not there.
  Result mixed = Run({"audit", "--certificate=" + certificate_path_, "--export=x.json",
                      "--authority_key=" + authority_path_, "--challenger_key=" + challenger_path_});
  EXPECT_EQ(mixed.code, 2);
  EXPECT_THAT(mixed.err, HasSubstr("--certificate checks a certificate on its own: drop --export"));
  Result absent = Run({"audit", "--certificate=" + dir_.File("absent.json"), "--authority_key=" + authority_path_,
                       "--challenger_key=" + challenger_path_});
  EXPECT_EQ(absent.code, 2);
  EXPECT_THAT(absent.err, HasSubstr("absent.json"));
  Result not_json = Check("{\"format\": ");
  EXPECT_EQ(not_json.code, 1);
  EXPECT_THAT(not_json.err, HasSubstr("certificate: not valid JSON"));
}

}  // namespace
}  // namespace wipeproof
