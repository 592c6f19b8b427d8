#include "tests/challenger/challenger_test_agent.h"

#include <capnp/message.h>

#include <cstring>
#include <future>

#include "common/hex.h"
#include "kernels/region_labeler.h"
#include "proto/codec.h"
#include "proto/rpc_status.h"
#include "proto/signing.h"
#include "proto/validate.h"

namespace wipeproof::testing {

namespace {

using proto::AsView;
using proto::ByteView;

capnp::Data::Reader DataOf(const uint8_t* data, size_t size) { return capnp::Data::Reader(data, size); }

kj::Exception Refusal(const Status& s) { return proto::StatusToException(s); }

}  // namespace

std::string HugeAgentText(size_t bytes) {
  std::string text = "agent text\n\x01\xff";
  if (text.size() < bytes) text.append(bytes - text.size(), 'x');
  return text;
}

TestAgent::TestAgent(proto::PublicKey authority, proto::PublicKey challenger, proto::KeyPair node,
                     TestAgentOptions options, TestAgentLog* log)
    : authority_(authority), challenger_(challenger), node_(std::move(node)), options_(std::move(options)), log_(log) {}

void TestAgent::Release() {
  devices_.clear();
  hasher_.reset();
  session_id_.clear();
  log_->holds_memory = false;
}

kj::Promise<void> TestAgent::startSession(StartSessionContext context) {
  ++log_->orders;
  if (options_.cheat == Cheat::kRefuseOrder) return Refusal(FailedPreconditionError("busy: test refusal"));
  const std::string huge = options_.cheat >= Cheat::kHugeRefusal ? HugeAgentText(options_.huge_text_bytes) : "";
  if (options_.cheat == Cheat::kHugeRefusal) return Refusal(FailedPreconditionError(huge));
  if (options_.cheat == Cheat::kHugeException) {
    return kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::heapString(huge.data(), huge.size()));
  }
  if (options_.cheat == Cheat::kHugeDisconnect) {
    return kj::Exception(kj::Exception::Type::DISCONNECTED, __FILE__, __LINE__,
                         kj::heapString(huge.data(), huge.size()));
  }
  if (hasher_) return Refusal(FailedPreconditionError("a session is already running"));
  auto order_or = proto::VerifyAndParse<proto::WipeOrder>(context.getParams().getOrder(), authority_);
  if (!order_or.ok()) return Refusal(order_or.status());
  proto::WipeOrder::Reader order = order_or->root();
  if (options_.cheat == Cheat::kDisconnectMidFill) {
    options_.disconnect();
    return kj::NEVER_DONE;
  }

  session_id_.assign(order.getSessionId().begin(), order.getSessionId().end());
  RegionSpec region;
  region.format = order.getFormat() == proto::LabelFormat::POSEDB_BLAKE3_N192 ? LabelFormat::k192 : LabelFormat::kC1;
  std::memcpy(region.seed, order.getSeed().begin(), kSeedBytes);
  region.chunk_labels = order.getChunkLabels();
  for (proto::DevicePlan::Reader plan : order.getDevices()) {
    Device d;
    d.first = plan.getFirstLabel();
    d.count = plan.getLabelCount();
    d.labels.resize(d.count * proto::kLabelBytes);
    region.first = d.first;
    region.count = d.count;
    Status filled = LabelRegion(region, d.labels.data());
    if (!filled.ok()) return Refusal(filled);
    if (options_.cheat == Cheat::kBlankChunks) {
      const uint64_t m = region.chunk_labels;
      for (uint64_t c = 0; c < d.count / m; c += options_.blank_every) {
        std::memset(d.labels.data() + c * m * proto::kLabelBytes, 0, m * proto::kLabelBytes);
      }
    }
    devices_.push_back(std::move(d));
  }
  log_->holds_memory = true;
  if (options_.cheat == Cheat::kLateFill) options_.clock->Advance(options_.advance_us);

  capnp::MallocMessageBuilder m;
  auto report = m.initRoot<proto::FillReport>();
  report.setSessionId(order.getSessionId());
  const proto::Digest order_digest = proto::Blake2b256(order_or->bytes());
  report.setOrderDigest(DataOf(order_digest.data(), order_digest.size()));
  const proto::KeyId id = proto::KeyIdOf(node_.public_key);
  report.setNodeKeyId(DataOf(id.data(), id.size()));
  report.setFillMicros(12345);
  report.setFinishedAtUnixUs(1'800'000'000'000'000);
  auto fills = report.initDevices(order.getDevices().size());
  for (unsigned i = 0; i < fills.size(); ++i) {
    proto::DevicePlan::Reader plan = order.getDevices()[i];
    uint64_t count = plan.getLabelCount();
    if ((options_.cheat == Cheat::kShortCapacity || options_.cheat == Cheat::kHugeNote) && i + 1 == fills.size()) {
      count -= order.getChunkLabels();
      // A fill report is at most 1 MiB (proto/codec.h): the note stays well under that.
      fills[i].setNote(options_.cheat == Cheat::kHugeNote ? huge.substr(0, size_t{512} << 10)
                                                          : "the driver holds some memory");
      fills[i].setBytesHeldByOthers(order.getChunkLabels() * proto::kLabelBytes);
    }
    fills[i].setSelector(plan.getSelector());
    fills[i].setFirstLabel(plan.getFirstLabel());
    fills[i].setLabelCount(count);
    fills[i].setBytesHeld(count * proto::kLabelBytes);
    fills[i].setReserveBytes(plan.getAllowedReserveBytes());
    fills[i].setTotalBytes(plan.getCapacityBytes());
  }
  auto signed_report = proto::SignMessage(report.asReader(), node_);
  if (!signed_report.ok()) return Refusal(signed_report.status());
  hasher_.emplace();
  (void)hasher_->AddOrder(order_or->bytes());
  (void)hasher_->AddReport(AsView(signed_report->payload));
  // Byte 8 is the low byte of fillMicros (first word of the data section): still a well-formed report.
  if (options_.cheat == Cheat::kTamperedReport) signed_report->payload[8] ^= 1;
  proto::WriteEnvelope(*signed_report, context.getResults().initReport());
  return kj::READY_NOW;
}

kj::Promise<void> TestAgent::round(RoundContext context) {
  if (!hasher_) return Refusal(FailedPreconditionError("no session"));
  proto::ChallengeRound::Reader request = context.getParams().getRound();
  Status shape = proto::WalkMessage(request);
  if (shape.ok()) shape = proto::ValidateShape(request);
  if (!shape.ok()) return Refusal(shape);
  const uint32_t r = request.getRoundIndex();
  ++log_->rounds;
  if (options_.cheat == Cheat::kHugeRoundError && r == options_.late_round) {
    return Refusal(InternalError(HugeAgentText(options_.huge_text_bytes)));
  }
  auto answer = context.getResults().initAnswer();
  answer.setSessionId(request.getSessionId());
  answer.setRoundIndex(options_.cheat == Cheat::kWrongRoundIndex ? r + 1 : r);
  size_t count = 0;
  for (auto d : request.getDevices()) count += d.getLabelIndices().size();
  auto labels = answer.initLabels(count * proto::kLabelBytes);
  size_t at = 0;
  for (auto d : request.getDevices()) {
    if (d.getDeviceIndex() >= devices_.size()) return Refusal(InvalidArgumentError("deviceIndex out of range"));
    const Device& dev = devices_[d.getDeviceIndex()];
    for (uint64_t g : d.getLabelIndices()) {
      if (g < dev.first || g >= dev.first + dev.count) {
        return Refusal(InvalidArgumentError("index " + std::to_string(g) + " outside the device's range"));
      }
      std::memcpy(labels.begin() + at, dev.labels.data() + (g - dev.first) * proto::kLabelBytes, proto::kLabelBytes);
      at += proto::kLabelBytes;
    }
  }
  if (options_.cheat == Cheat::kLateRound && r == options_.late_round) options_.clock->Advance(options_.advance_us);
  Status hashed = hasher_->AddRound(request, answer.asReader());
  if (!hashed.ok()) return Refusal(hashed);
  return kj::READY_NOW;
}

kj::Promise<void> TestAgent::finish(FinishContext context) {
  if (!hasher_) return Refusal(FailedPreconditionError("no session"));
  ++log_->finishes;
  if (options_.cheat == Cheat::kHugeFinishError) return Refusal(InternalError(HugeAgentText(options_.huge_text_bytes)));
  auto verdict = proto::VerifyAndParse<proto::Verdict>(context.getParams().getVerdict(), challenger_);
  if (!verdict.ok()) return Refusal(verdict.status());
  auto digest = hasher_->Finish();
  if (!digest.ok()) return Refusal(digest.status());
  if (options_.cheat == Cheat::kTranscriptMismatch) (*digest)[0] ^= 1;
  capnp::MallocMessageBuilder m;
  auto t = m.initRoot<proto::TranscriptDigest>();
  t.setSessionId(verdict->root().getSessionId());
  t.setDigest(DataOf(digest->data(), digest->size()));
  t.setRoundCount(hasher_->round_count());
  const proto::Digest vd = proto::Blake2b256(verdict->bytes());
  t.setVerdictDigest(DataOf(vd.data(), vd.size()));
  const proto::KeyId id = proto::KeyIdOf(node_.public_key);
  t.setNodeKeyId(DataOf(id.data(), id.size()));
  auto signed_t = proto::SignMessage(t.asReader(), node_);
  if (!signed_t.ok()) return Refusal(signed_t.status());
  proto::WriteEnvelope(*signed_t, context.getResults().initTranscript());
  Release();
  return kj::READY_NOW;
}

kj::Promise<void> TestAgent::abort(AbortContext context) {
  ++log_->aborts;
  log_->abort_reason = context.getParams().getReason().cStr();
  Release();
  if (options_.cheat == Cheat::kHugeRoundError) return Refusal(InternalError(HugeAgentText(options_.huge_text_bytes)));
  return kj::READY_NOW;
}

kj::Promise<void> TestAgent::status(StatusContext context) {
  context.getResults().initStatus().setPhase(hasher_ ? proto::AgentPhase::READY : proto::AgentPhase::IDLE);
  return kj::READY_NOW;
}

TcpTestAgent::TcpTestAgent(proto::KeyPair node_key, Cheat cheat, proto::PublicKey authority,
                           proto::PublicKey challenger) {
  std::promise<uint16_t> port;
  std::future<uint16_t> port_future = port.get_future();
  thread_ = std::thread([this, node_key, cheat, authority, challenger, &port] {
    kj::AsyncIoContext io = kj::setupAsyncIo();
    auto listener = io.provider->getNetwork().parseAddress("127.0.0.1", 0).wait(io.waitScope)->listen();
    port.set_value(static_cast<uint16_t>(listener->getPort()));
    kj::Own<kj::AsyncIoStream> stream;
    try {
      // Bounded, so a test whose client never connects fails instead of hanging in the destructor.
      stream = io.provider->getTimer().timeoutAfter(60 * kj::SECONDS, listener->accept()).wait(io.waitScope);
    } catch (const kj::Exception&) {
      return;
    }
    TestAgentOptions options;
    options.cheat = cheat;
    auto agent = kj::heap<TestAgent>(authority, challenger, node_key, options, &log_);
    capnp::TwoPartyVatNetwork network(*stream, capnp::rpc::twoparty::Side::SERVER, proto::RpcReaderOptions());
    auto rpc = capnp::makeRpcServer(network, proto::ProverAgent::Client(kj::mv(agent)));
    network.onDisconnect().wait(io.waitScope);
  });
  port_ = port_future.get();
}

TcpTestAgent::~TcpTestAgent() { thread_.join(); }

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

proto::KeyPair TestKey(uint8_t fill) {
  std::array<uint8_t, proto::kKeySeedBytes> seed;
  seed.fill(fill);
  return proto::KeyPairFromSeed(seed);
}

Inventory TestInventory() {
  const uint64_t chunk_bytes = uint64_t{kTestChunkLabels} * proto::kLabelBytes;
  Inventory inv;
  InventoryNode a;
  a.name = "node-a";
  a.address = "127.0.0.1:7700";
  a.public_key = TestKey(0x33).public_key;
  a.devices.push_back({"host", "host-dram", 64 * chunk_bytes});
  a.devices.push_back({"GPU-test-0", "test-gpu", 96 * chunk_bytes + 1000});
  InventoryNode b;
  b.name = "node-b";
  b.address = "127.0.0.1:7701";
  b.public_key = TestKey(0x44).public_key;
  b.devices.push_back({"host", "host-dram", 64 * chunk_bytes});
  inv.nodes = {a, b};
  inv.waves.push_back({"wave-1", {"node-a", "node-b"}, 3600, 600, true});
  inv.reserve_bytes_by_model = {{"host-dram", 0}, {"test-gpu", 1000}};
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

Profile CalibratedTestProfile() {
  Profile p = TestProfile();
  p.name = "test-calibrated";
  p.calibrated = true;
  p.adversary.safety_factor = 1;  // floor 3.84 us
  p.round_deadline_us = 3;
  p.honest_round_p999_us = 2;  // 3 >= 1.2 * 2
  return p;
}

}  // namespace wipeproof::testing
