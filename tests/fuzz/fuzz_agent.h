// A prover agent for the agent-side fuzz targets: a fresh AgentCore per input (so no state leaks
// from one input to the next and every crash reproduces from its file alone), on a fixed FakeClock,
// with the real CPU backend for "host" and one fake GPU (tests/prover/agent_test_util.h), configured with
// agent_test's keys and node name.
//
// The fixed order (FuzzOrder) is small, so a fill costs little even instrumented: host labels
// [0, 64) and the GPU's [64, 128), m = 16 (4 chunks each), 4 labels per device per round, 3 rounds.
//
// Thread-safety: one fixture per thread.
#pragma once

#include <memory>

#include "common/clock.h"
#include "proto/signing.h"
#include "prover/agent/agent_core.h"
#include "tests/prover/agent_test_util.h"

namespace wipeproof::fuzz {

inline constexpr ConnectionId kOwner = 1;  // the connection that starts the session
// The key kOwner is authenticated as: the challenger the orders name.
inline PeerKeyId OwnerKey() { return proto::KeyIdOf(agent_test::ChallengerKey().public_key); }

// The order every agent target uses: its spec and the signed envelope (same bytes every time).
agent_test::OrderSpec FuzzOrderSpec();
const proto::SignedEnvelope& FuzzOrder();

struct AgentFixture {
  FakeClock clock;
  std::unique_ptr<AgentCore> core;
};

// A fresh agent, idle.
std::unique_ptr<AgentFixture> NewAgent();
// A fresh agent that accepted FuzzOrder() from kOwner and filled it (phase ready). Aborts the
// process if that fails: the fixture itself is broken then, not the code under test.
std::unique_ptr<AgentFixture> NewFilledAgent();

}  // namespace wipeproof::fuzz
