// Round latency in process (docs/benchmarks.md "Protocol"): a challenger-side RPC client against
// the real agent (AgentCore + AgentRpcServer, host memory through the real CPU backend) over an
// in-memory pipe on one event loop. Each round asks q = 256 labels in distinct random chunks and is
// timed on the monotonic clock from send to a verified answer (every label compared with the
// reference labeler's). The percentiles are printed and recorded as test properties, not asserted
// (this machine may be shared); the target is p99 <= 200 us (design-brief.md).
// The challenger side here is a plain RPC client, so the binary links the agent only.
#include <gtest/gtest.h>
#include <kj/async-io.h>
#include <sodium.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "proto/signing.h"
#include "prover/agent/agent_core.h"
#include "prover/agent/agent_rpc_server.h"
#include "tests/prover/agent_test_util.h"

namespace wipeproof {
namespace {

constexpr uint32_t kM = 256;
constexpr uint64_t kLabels = uint64_t{1} << 20;  // 32 MiB of host memory
constexpr uint32_t kQ = 256;
constexpr uint32_t kRounds = 2000;

uint64_t Percentile(std::vector<uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p * v.size() - 1e-9));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

TEST(CalibrationLatencyTest, RoundsOfQ256InProcessAgainstTheRealAgent) {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  const Clock& clock = SystemClock();
  AgentCore core(agent_test::TestConfig(), agent_test::HostBackends(nullptr, 64 * agent_test::kMiB), clock);
  auto server = kj::heap<AgentRpcServer>(core, *io.provider);
  auto pipe = io.provider->newTwoWayPipe();
  server->Accept(kj::mv(pipe.ends[0]));
  auto network =
      kj::heap<capnp::TwoPartyVatNetwork>(*pipe.ends[1], capnp::rpc::twoparty::Side::CLIENT, proto::RpcReaderOptions());
  auto rpc = kj::heap<capnp::RpcSystem<capnp::rpc::twoparty::VatId>>(capnp::makeRpcClient(*network));
  capnp::MallocMessageBuilder vat;
  vat.initRoot<capnp::rpc::twoparty::VatId>().setSide(capnp::rpc::twoparty::Side::SERVER);
  auto agent = rpc->bootstrap(vat.getRoot<capnp::rpc::twoparty::VatId>()).castAs<proto::ProverAgent>();

  agent_test::OrderSpec spec;
  spec.chunk_labels = kM;
  const uint32_t rounds = kRounds;
  spec.devices = {{"host", 0, kLabels, kQ}};
  const proto::SignedEnvelope order = agent_test::SignedOrder(spec, clock);
  auto start = agent.startSessionRequest();
  proto::WriteEnvelope(order, start.initOrder());
  start.send().wait(io.waitScope);
  const std::vector<uint8_t> expected = agent_test::ExpectedLabels(kM, 0, kLabels);

  std::vector<uint64_t> elapsed_us;
  for (uint32_t r = 0; r < kRounds; ++r) {
    std::set<uint64_t> chunks;
    while (chunks.size() < kQ) chunks.insert(randombytes_uniform(kLabels / kM));
    std::vector<uint64_t> indices;
    for (uint64_t c : chunks) indices.push_back(c * kM + randombytes_uniform(kM));
    auto request = agent.roundRequest();
    auto round = request.initRound();
    round.setSessionId(proto::AsView(spec.session_id));
    round.setRoundIndex(r);
    auto device = round.initDevices(1)[0];
    device.setDeviceIndex(0);
    auto list = device.initLabelIndices(kQ);
    for (uint32_t i = 0; i < kQ; ++i) list.set(i, indices[i]);
    const int64_t t0 = clock.MonotonicMicros();
    auto response = request.send().wait(io.waitScope);
    auto labels = response.getAnswer().getLabels();
    ASSERT_EQ(labels.size(), size_t{kQ} * 32);
    for (uint32_t i = 0; i < kQ; ++i) {
      ASSERT_EQ(0, std::memcmp(labels.begin() + 32 * i, expected.data() + 32 * indices[i], 32)) << "round " << r;
    }
    elapsed_us.push_back(static_cast<uint64_t>(clock.MonotonicMicros() - t0));
  }
  const uint64_t p50 = Percentile(elapsed_us, 0.5), p99 = Percentile(elapsed_us, 0.99),
                 p999 = Percentile(elapsed_us, 0.999), max = Percentile(elapsed_us, 1.0);
  std::printf("first rounds: %llu %llu %llu %llu us\n", static_cast<unsigned long long>(elapsed_us[0]),
              static_cast<unsigned long long>(elapsed_us[1]), static_cast<unsigned long long>(elapsed_us[2]),
              static_cast<unsigned long long>(elapsed_us[3]));
  std::printf(
      "in-process rounds against the real agent, q = %u labels, %u rounds, send to verified answer: "
      "p50 %llu us, p99 %llu us, p99.9 %llu us, max %llu us\n",
      kQ, kRounds, static_cast<unsigned long long>(p50), static_cast<unsigned long long>(p99),
      static_cast<unsigned long long>(p999), static_cast<unsigned long long>(max));
  ::testing::Test::RecordProperty("p50_us", std::to_string(p50));
  ::testing::Test::RecordProperty("p99_us", std::to_string(p99));
  auto abort = agent.abortRequest();
  abort.setSessionId(proto::AsView(spec.session_id));
  abort.setReason("latency measured");
  abort.send().wait(io.waitScope);
  agent = nullptr;
  rpc = nullptr;
  network = nullptr;
  server = nullptr;
}

}  // namespace
}  // namespace wipeproof
