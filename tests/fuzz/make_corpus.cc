// Writes the seed corpus of every fuzz target: small valid inputs (and a few near misses) built
// with the same code and keys the targets use. Usage: make_fuzz_corpus <tests/fuzz/corpus>
// (scripts/fuzz.sh --regenerate-corpus). Existing seed files of the same name are overwritten;
// crash reproducers added by hand (crash-*, named by what they found) are left alone.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "challenger/parameters/profile_json_writer.h"
#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_export.h"
#include "challenger/parameters/parameter_profile.h"
#include "common/clock.h"
#include "proto/label_wire.h"
#include "proto/node_profile.h"
#include "proto/rpc_status.h"
#include "tests/fuzz/fuzz_agent.h"
#include "tests/fuzz/fuzz_util.h"

namespace wipeproof::fuzz {
namespace {

std::string g_root;

void Write(const std::string& target, const std::string& name, const proto::Bytes& bytes) {
  const std::string dir = g_root + "/" + target;
  ::mkdir(dir.c_str(), 0755);
  std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::cerr << "cannot write " << dir << "/" << name << "\n";
    std::exit(1);
  }
}
void Write(const std::string& target, const std::string& name, const std::string& text) {
  Write(target, name, proto::Bytes(text.begin(), text.end()));
}
proto::Bytes With(uint8_t mode, proto::Bytes bytes) {
  bytes.insert(bytes.begin(), mode);
  return bytes;
}
template <typename T>
T Must(StatusOr<T> value) {
  if (!value.ok()) {
    std::cerr << "make_fuzz_corpus: " << value.status().ToString() << "\n";
    std::exit(1);
  }
  return std::move(value).value();
}
// A message in RPC stream framing (segment table + segments), as it travels on a connection.
proto::Bytes Framed(capnp::MessageBuilder& message) {
  kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return proto::Bytes(bytes.begin(), bytes.end());
}
proto::Bytes FramedEnvelope(const proto::SignedEnvelope& envelope) {
  capnp::MallocMessageBuilder m;
  proto::WriteEnvelope(envelope, m.initRoot<proto::Envelope>());
  return Framed(m);
}
proto::Bytes SessionId() {
  proto::Bytes id(proto::kSessionIdBytes, 0xA5);
  id.back() = 1;
  return id;
}
// Round `r` of the fixed order's session: 4 labels on each of its two devices.
void BuildSeedRound(proto::ChallengeRound::Builder round, uint32_t r) {
  round.setSessionId(proto::AsView(SessionId()));
  round.setRoundIndex(r);
  auto devices = round.initDevices(2);
  for (unsigned d = 0; d < 2; ++d) {
    devices[d].setDeviceIndex(static_cast<uint16_t>(d));
    auto indices = devices[d].initLabelIndices(4);
    for (unsigned k = 0; k < 4; ++k) indices.set(k, d * 64 + k * 16 + r);
  }
}

void AgentSide() {
  const proto::SignedEnvelope& order = FuzzOrder();
  // Envelopes: an order in both framings, and one of another kind.
  Write("fuzz_signed_envelope", "order-bytes", With(0, proto::EncodeEnvelope(order)));
  Write("fuzz_signed_envelope", "order-rpc", With(1, FramedEnvelope(order)));
  Write("fuzz_wipe_order", "order", order.payload);
  {
    agent_test::OrderSpec spec = FuzzOrderSpec();
    spec.devices = {{"host", 0, 64, 4}};  // omits the GPU: refused by the plan check
    FakeClock clock;
    Write("fuzz_wipe_order", "order-host-only", agent_test::SignedOrder(spec, clock).payload);
  }
  // Rounds: a valid round 0 and round 1 back to back, and a round with an index out of range.
  proto::Bytes rounds;
  for (uint32_t r = 0; r < 2; ++r) {
    capnp::MallocMessageBuilder m;
    auto round = m.initRoot<proto::ChallengeRound>();
    BuildSeedRound(round, r);
    auto devices = round.getDevices();
    const proto::Bytes framed = Framed(m);
    rounds.insert(rounds.end(), framed.begin(), framed.end());
    if (r == 0) {
      Write("fuzz_challenge_round", "round0", framed);
      devices[1].getLabelIndices().set(3, 4096);
      Write("fuzz_challenge_round", "round0-out-of-range", Framed(m));
    }
  }
  Write("fuzz_challenge_round", "rounds-0-1", rounds);
  // The same two rounds on a round channel, after its hello, read whole and 3 bytes at a time.
  {
    capnp::MallocMessageBuilder hello;
    auto body = hello.initRoot<proto::RoundChannelRequest>().initHello();
    body.setSessionId(proto::AsView(SessionId()));
    body.setToken(proto::AsView(SessionId()));
    proto::Bytes channel = Framed(hello);
    for (uint32_t r = 0; r < 2; ++r) {
      capnp::MallocMessageBuilder m;
      BuildSeedRound(m.getRoot<proto::RoundChannelRequest>().initRound(), r);
      const proto::Bytes framed = Framed(m);
      channel.insert(channel.end(), framed.begin(), framed.end());
    }
    Write("fuzz_round_channel_stream", "hello-rounds-0-1-whole", With(255, channel));
    Write("fuzz_round_channel_stream", "hello-rounds-0-1-by-3", With(2, channel));
  }
  // Finish and abort.
  const proto::SignedEnvelope verdict = agent_test::SignedVerdict(order, true);
  Write("fuzz_agent_finish", "verdict-pass", With(0, verdict.payload));
  Write("fuzz_agent_finish", "verdict-fail", With(0, agent_test::SignedVerdict(order, false).payload));
  Write("fuzz_agent_finish", "verdict-rpc", With(1, FramedEnvelope(verdict)));
  proto::Bytes abort = SessionId();
  abort.insert(abort.begin(), 16);
  const std::string reason = "challenger: test abort";
  abort.insert(abort.end(), reason.begin(), reason.end());
  Write("fuzz_agent_finish", "abort-owner", With(2, abort));
  abort[0] |= 0x80;
  Write("fuzz_agent_finish", "abort-other", With(2, abort));
}

proto::Bytes FillReportPayload() {
  capnp::MallocMessageBuilder m;
  auto report = m.initRoot<proto::FillReport>();
  report.setSessionId(proto::AsView(SessionId()));
  report.setOrderDigest(proto::AsView(proto::Blake2b256(proto::AsView(FuzzOrder().payload))));
  report.setNodeKeyId(proto::AsView(proto::KeyIdOf(FuzzKey(kNodeSeed).public_key)));
  auto devices = report.initDevices(2);
  devices[0].setSelector("host");
  devices[0].setLabelCount(64);
  devices[0].setBytesHeld(64 * 32);
  devices[1].setSelector(agent_test::kGpuId);
  devices[1].setFirstLabel(64);
  devices[1].setLabelCount(60);
  devices[1].setBytesHeld(60 * 32);
  devices[1].setNote("short: \x01 another process holds 3 MiB \xff");
  report.setFillMicros(1234);
  return Must(proto::EncodeCanonical(report.asReader()));
}

proto::Bytes TranscriptPayload() {
  capnp::MallocMessageBuilder m;
  auto t = m.initRoot<proto::TranscriptDigest>();
  t.setSessionId(proto::AsView(SessionId()));
  t.setDigest(proto::AsView(proto::Blake2b256(proto::AsView(SessionId()))));
  t.setRoundCount(3);
  t.setVerdictDigest(proto::AsView(proto::Blake2b256(proto::AsView(FuzzOrder().payload))));
  t.setNodeKeyId(proto::AsView(proto::KeyIdOf(FuzzKey(kNodeSeed).public_key)));
  return Must(proto::EncodeCanonical(t.asReader()));
}

void ChallengerSide() {
  const proto::KeyPair& node = FuzzKey(kNodeSeed);
  const proto::Bytes report = FillReportPayload();
  Write("fuzz_fill_report", "report-signed", With(1, report));
  Write("fuzz_fill_report", "report-rpc",
        With(0, FramedEnvelope(Must(proto::SignEnvelope(proto::MessageKind::FILL_REPORT, proto::AsView(report), node)))));
  const proto::Bytes transcript = TranscriptPayload();
  Write("fuzz_transcript", "transcript-signed", With(1, transcript));
  Write("fuzz_transcript", "transcript-rpc",
        With(0, FramedEnvelope(
                    Must(proto::SignEnvelope(proto::MessageKind::TRANSCRIPT_DIGEST, proto::AsView(transcript), node)))));
  {
    capnp::MallocMessageBuilder m;
    auto answer = m.initRoot<proto::RoundAnswer>();
    answer.setSessionId(proto::AsView(SessionId()));
    answer.initLabels(8 * proto::kLabelBytes)[5] = 7;
    answer.setAgentMicros(42);
    Write("fuzz_round_answer", "answer", Framed(m));
    answer.initLabels(33);
    Write("fuzz_round_answer", "answer-ragged", Framed(m));
  }
  // Byte 0: exception type (0 FAILED), byte 1: limit / 8.
  Write("fuzz_agent_text", "status",
        std::string("\x00\x40", 2) + "remote exception: wipeproof:RESOURCE_EXHAUSTED: device 'GPU-1' short of capacity");
  Write("fuzz_agent_text", "utf8", std::string("\x01\x08")+ "caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80 \xed\xa0\x80 \xc0\xaf \x1b[31m \xc2\x85");
}

void Files() {
  Write("fuzz_inventory_json", "inventory", std::string(R"({
  "nodes": [
    {"name": "gpu-01", "address": "10.0.0.11:7300",
     "public_key": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
     "no_nvme_in_reach": false,
     "devices": [
       {"selector": "host", "model": "host-dram", "capacity_bytes": 549755813888},
       {"selector": "GPU-8c6f2a51-0d4e-4a6b-93a2-5f1e0c7d9b11", "model": "NVIDIA H200", "capacity_bytes": 150754820096}]},
    {"name": "gpu-02", "address": "[::1]:7300", "public_key_file": "keys/gpu-02.pub",
     "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": 1073741824}]}
  ],
  "waves": [{"name": "rack-1", "nodes": ["gpu-01"], "period_s": 86400, "jitter_s": 43200, "complete": true}],
  "reserves": {"host-dram": 8589934592, "NVIDIA H200": 536870912}
}
)"));
  Write("fuzz_inventory_json", "duplicate-key", std::string(R"({"nodes": [], "nodes": []})"));
  Write("fuzz_profile_json", "default", ProfileToJson(DefaultProfile()).dump(2));
  Write("fuzz_adversary_classes_json", "classes", std::string(R"({"classes": [
  {"name": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2, "description": "one fast CPU core"},
  {"name": "fpga-asic", "t_min_ps": 5000}]}
)"));
  const std::string profile = R"({"format": "wipeproof-node-profile-v1", "node_key_id": "0011223344556677",
 "software_version": "wipeproof-prover 0.1.0", "created_at_unix_us": 1700000000000000,
 "created_at": "2023-11-14T22:13:20Z",
 "machine": {"hostname": "gpu-01", "cpu_model": "x", "hardware_threads": 16},
 "host_sequential_compression": {"ps_per_compression": 61000},
 "devices": [
  {"kind": "host", "id": "host", "name": "host", "total_bytes": 34359738368,
   "fill": [{"format": "posedb-blake3-c1", "chunk_labels": 4096, "bytes": 1073741824,
             "acquire_s": 0.1, "fill_s": 1.5, "bytes_per_s": 715827882.7}],
   "lookup": {"labels_per_lookup": 256, "samples": 2000, "p50_us": 20, "p90_us": 25, "p99_us": 40,
              "p999_us": 90, "max_us": 200},
   "one_chunk": {"chunk_labels": 65536, "fill_us": 90000, "sequential_depth": 98304, "step_ps": 915000}},
  {"kind": "cuda", "id": "GPU-00000000-fake-0000-0000-000000000001", "name": "NVIDIA H200",
   "total_bytes": 150754820096,
   "fill": [{"format": "posedb-blake3-192", "chunk_labels": 1048576, "bytes": 8589934592,
             "acquire_s": 0.5, "fill_s": 3, "bytes_per_s": 2863311530}]}]}
)";
  Write("fuzz_node_profile", "profile-signed-here", With(1, proto::Bytes(profile.begin(), profile.end())));
  Write("fuzz_node_profile", "signed-document", With(0, [&] {
          const std::string doc = Must(proto::SignNodeProfile(profile, FuzzKey(kNodeSeed)));
          return proto::Bytes(doc.begin(), doc.end());
        }()));
  Write("fuzz_key_file", "public", std::string("# wipeproof public key\npublic_key = "
                                               "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"));
}

// A real ledger (SQLite in a temporary folder) with one session's records; its rows, records and
// export are the ledger targets' seeds.
void LedgerSeeds() {
  char dir_template[] = "/tmp/wipeproof-fuzz-corpus-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr) std::exit(1);
  const std::string path = std::string(dir) + "/ledger.db";
  FakeClock clock;
  const proto::KeyPair& challenger = FuzzKey(kChallengerSeed);
  {
    auto ledger = Must(wipeproof::Ledger::Open(path, challenger, clock));
    const proto::Bytes sid = SessionId();
    const capnp::Data::Reader sid_data(sid.data(), sid.size());
    const proto::Bytes order = proto::EncodeEnvelope(FuzzOrder());
    const proto::Bytes report = proto::EncodeEnvelope(
        Must(proto::SignEnvelope(proto::MessageKind::FILL_REPORT, proto::AsView(FillReportPayload()), FuzzKey(kNodeSeed))));
    capnp::MallocMessageBuilder log_message;
    auto log = log_message.initRoot<proto::RoundLog>();
    log.setSessionId(sid_data);
    auto timings = log.initRounds(2);
    timings[0].setElapsedUs(900);
    timings[0].setDeadlineMet(true);
    timings[1].setRoundIndex(1);
    const proto::Bytes round_log = Must(proto::EncodeCanonical(log.asReader()));
    // The verdict the agent target uses, re-signed by this challenger key (the ledger checks it).
    const proto::Bytes verdict = proto::EncodeEnvelope(Must(proto::SignEnvelope(
        proto::MessageKind::VERDICT, proto::AsView(agent_test::SignedVerdict(FuzzOrder(), false).payload), challenger)));
    const proto::Bytes transcript = proto::EncodeEnvelope(Must(
        proto::SignEnvelope(proto::MessageKind::TRANSCRIPT_DIGEST, proto::AsView(TranscriptPayload()), FuzzKey(kNodeSeed))));
    const std::pair<proto::LedgerRecordKind, const proto::Bytes*> records[] = {
        {proto::LedgerRecordKind::ORDER, &order},           {proto::LedgerRecordKind::FILL_REPORT, &report},
        {proto::LedgerRecordKind::ROUND_LOG, &round_log},   {proto::LedgerRecordKind::VERDICT, &verdict},
        {proto::LedgerRecordKind::TRANSCRIPT, &transcript}};
    for (const auto& [kind, bytes] : records) {
      Must(ledger->Append(kind, proto::AsView(*bytes), sid_data));
      Write("fuzz_ledger_record", "record-" + std::to_string(static_cast<int>(kind)),
            With(static_cast<uint8_t>(kind), *bytes));
    }
    LedgerExportOptions options;
    options.include_envelopes = true;
    Write("fuzz_ledger_export", "export", Must(ExportLedgerJson(*ledger, challenger.public_key, options, clock)).dump(1));
  }
  // Rows: the genesis entry's envelope as stored, and its payload for the signing variant.
  {
    capnp::MallocMessageBuilder m;
    auto entry = m.initRoot<proto::LedgerEntry>();
    entry.setPrevEntryDigest(proto::AsView(proto::Digest{}));
    entry.setKind(proto::LedgerRecordKind::ORDER);
    const proto::Bytes order = proto::EncodeEnvelope(FuzzOrder());
    entry.setRecord(proto::AsView(order));
    entry.setSessionId(proto::AsView(SessionId()));
    entry.setRecordedAtUnixUs(clock.UnixMicros());
    const proto::Bytes payload = Must(proto::EncodeCanonical(entry.asReader()));
    Write("fuzz_ledger_row", "entry-signed-here", With(1, payload));
    Write("fuzz_ledger_row", "envelope",
          With(0, proto::EncodeEnvelope(
                      Must(proto::SignEnvelope(proto::MessageKind::LEDGER_ENTRY, proto::AsView(payload), challenger)))));
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace wipeproof::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_fuzz_corpus <tests/fuzz/corpus>\n";
    return 2;
  }
  wipeproof::fuzz::g_root = argv[1];
  ::mkdir(argv[1], 0755);
  wipeproof::fuzz::AgentSide();
  wipeproof::fuzz::ChallengerSide();
  wipeproof::fuzz::Files();
  wipeproof::fuzz::LedgerSeeds();
  std::cout << "make_fuzz_corpus: wrote the seeds under " << argv[1] << "\n";
  return 0;
}
