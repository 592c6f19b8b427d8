#include "tests/fuzz/fuzz_agent.h"

#include <cstdio>
#include <cstdlib>

namespace wipeproof::fuzz {

agent_test::OrderSpec FuzzOrderSpec() {
  agent_test::OrderSpec spec;
  spec.chunk_labels = 16;
  spec.devices = {{"host", 0, 64, 4}, {agent_test::kGpuId, 64, 64, 4}};
  return spec;
}

const proto::SignedEnvelope& FuzzOrder() {
  static const proto::SignedEnvelope order = [] {
    FakeClock clock;
    return agent_test::SignedOrder(FuzzOrderSpec(), clock);
  }();
  return order;
}

std::unique_ptr<AgentFixture> NewAgent() {
  auto fixture = std::make_unique<AgentFixture>();
  AgentConfig config = agent_test::TestConfig();
  config.host_fill_threads = 1;
  agent_test::FakeDeviceOptions gpu;
  gpu.total_bytes = gpu.available_bytes = 64 << 10;  // bytes: little to allocate per input
  fixture->core = std::make_unique<AgentCore>(config, agent_test::HostAndGpuBackends(gpu), fixture->clock);
  return fixture;
}

std::unique_ptr<AgentFixture> NewFilledAgent() {
  auto fixture = NewAgent();
  auto report = fixture->core->StartSession(FuzzOrder(), kOwner, OwnerKey());
  if (!report.ok()) {
    std::fprintf(stderr, "fuzz fixture: the fixed order failed: %s\n", report.status().ToString().c_str());
    std::abort();
  }
  return fixture;
}

}  // namespace wipeproof::fuzz
