#include "tests/support/challenger_fixtures.h"

#include <glog/logging.h>

#include <utility>

#include "challenger/parameters/authority_documents.h"
#include "challenger/parameters/profile_json_writer.h"
#include "proto/label_wire.h"
#include "proto/signed_document.h"

namespace wipeproof::testing {

Deviation Cheat(DeviationKind kind) {
  Deviation d;
  d.kind = kind;
  d.round = 2;
  d.huge_text_bytes = size_t{5} << 20;
  return d;
}

Deviation BlankChunks() {
  Deviation d = Cheat(DeviationKind::kHideChunks);
  d.placement = adversary::Placement::kStrided;
  d.stride = 10;
  d.hidden_answer = adversary::HiddenAnswer::kZeros;
  return d;
}

Deviation ShortCapacity(std::string note) {
  Deviation d = Cheat(DeviationKind::kUnderfillHeldByOthers);
  d.short_chunks = 1;
  d.note = std::move(note);
  return d;
}

kj::Own<adversary::CheatingAgent> TestAgent(Deviation deviation, AgentLog* log, FakeClock* clock, proto::KeyPair node,
                                            proto::PublicKey authority, proto::PublicKey challenger) {
  adversary::CheatingAgentOptions options;
  options.deviation = std::move(deviation);
  options.timing.fill_us = 0;
  options.timing.round_us = 0;
  options.sim_clock = clock;
  options.log = log;
  return kj::heap<adversary::CheatingAgent>(adversary::AgentKeys{authority, challenger, std::move(node)},
                                            std::move(options));
}

proto::PinnedCertificate TestCertificate(uint8_t fill) {
  const proto::KeyPair key = TestKey(fill);
  auto pem = proto::CertificatePem(key);
  CHECK(pem.ok()) << pem.status().ToString();
  auto pinned = proto::PinCertificate(*pem, key.public_key, "test certificate");
  CHECK(pinned.ok()) << pinned.status().ToString();
  return *pinned;
}

std::unique_ptr<adversary::LoopbackAgentServer> ServeTestAgent(proto::KeyPair node, Deviation deviation,
                                                               proto::PublicKey authority,
                                                               proto::PinnedCertificate challenger, AgentLog* log) {
  const proto::PublicKey challenger_key = challenger.public_key;
  return std::make_unique<adversary::LoopbackAgentServer>(
      [=](kj::Timer&) -> kj::Own<proto::ProverAgent::Server> {
        return TestAgent(deviation, log, nullptr, node, authority, challenger_key);
      },
      node, challenger);
}

StatusOr<uint64_t> MemoryRecordSink::Append(proto::LedgerRecordKind kind, proto::ByteView record,
                                            proto::ByteView session_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fail_with.ok()) return fail_with;
  records_.push_back(
      {kind, proto::Bytes(record.begin(), record.end()), proto::Bytes(session_id.begin(), session_id.end())});
  return records_.size() - 1;
}

std::vector<StoredRecord> MemoryRecordSink::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

Inventory TestInventoryAt(const adversary::LoopbackAgentServer& a, const adversary::LoopbackAgentServer& b) {
  Inventory inventory = TestInventory();
  inventory.nodes[0].address = a.address();
  inventory.nodes[1].address = b.address();
  SealInventory(&inventory);
  return inventory;
}

TcpSessionOptions TcpTestOptions() {
  TcpSessionOptions options;
  options.clock = &SystemClock();
  options.threads = 1;
  return options;
}

Inventory TestInventory() {
  const uint64_t chunk_bytes = uint64_t{kTestChunkLabels} * proto::kLabelBytes;
  Inventory inv;
  InventoryNode a;
  a.name = "node-a";
  a.address = "127.0.0.1:7700";
  a.public_key = TestKey(0x33).public_key;
  a.certificate = TestCertificate(0x33);
  a.devices.push_back({"host", "host-dram", 64 * chunk_bytes});
  a.devices.push_back({"GPU-test-0", "test-gpu", 96 * chunk_bytes + 1000});
  InventoryNode b;
  b.name = "node-b";
  b.address = "127.0.0.1:7701";
  b.public_key = TestKey(0x44).public_key;
  b.certificate = TestCertificate(0x44);
  b.devices.push_back({"host", "host-dram", 64 * chunk_bytes});
  inv.nodes = {a, b};
  inv.waves.push_back({"wave-1", {"node-a", "node-b"}, 3600, 600, true});
  inv.reserve_bytes_by_model = {{"host-dram", 0}, {"test-gpu", 1000}};
  SealInventory(&inv);  // a document the tests' lab delegations name, as `delegate --inventory` would
  return inv;
}

Profile TestProfile() {
  Profile p = DefaultProfile();
  p.name = "test-uncalibrated";
  p.chunk_labels = kTestChunkLabels;
  p.rounds = 16;
  p.labels_per_round = 32;
  p.round_deadline_us = 1000;
  p.fill_deadline_us = 60'000'000;
  return p;
}

std::string SignedTestClasses(const proto::KeyPair& authority, const std::string& classes_json) {
  const std::string text = classes_json.empty()
                               ? R"({"classes": [{"name": "test-cpu", "t_min_ps": 40000, "safety_factor": 1.5}]})"
                               : classes_json;
  auto signed_document = proto::SignDocument(proto::DocumentType::kAdversaryClasses, text, authority);
  return signed_document.ok() ? *signed_document : std::string();
}

Profile Endorsed(const Profile& profile, const proto::KeyPair& authority, const std::string& classes_json) {
  AuthorityKey key;
  key.public_key = authority.public_key;
  auto classes = ParseAdversaryClassesDocument(SignedTestClasses(authority, classes_json), "test classes", &key);
  auto document =
      proto::SignDocument(proto::DocumentType::kParameterProfile, ProfileToJson(profile).dump(2) + "\n", authority);
  if (!classes.ok() || !document.ok()) return profile;
  auto loaded = ParseProfileDocument(*document, "test profile", &key, *classes);
  return loaded.ok() ? *loaded : profile;
}

Profile CalibratedTestProfile() {
  Profile p = TestProfile();
  p.name = "test-calibrated";
  p.calibrated = true;
  p.adversary = {"test-cpu", 40'000, 1.5};  // floor 1.5 * 64 * 40 ns / 1.5 = 2.56 us
  p.round_deadline_us = 2;
  p.honest_round_p999_us = 1;  // 2 >= 1.2 * 1
  return Endorsed(p);
}

}  // namespace wipeproof::testing
