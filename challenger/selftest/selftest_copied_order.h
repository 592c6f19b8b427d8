// The selftest's copied order (adversary 10, adversary/scenarios.h ScenarioSetting::kCopiedOrderFirst):
// a third party that obtained a copy of a session's signed order (valid, within its lifetime) sends
// it to the agent to make it fill and hold its memory. The agent is served as in production by the
// real TLS channel (proto/tls_channel.h, through adversary/agent_server.h), which admits only the
// challenger certificate the agent pins; the third party presents its own key.
//
// Thread-safety: uses the calling thread's kj event loop (`io`); `server` runs on its own thread.
#pragma once

#include <kj/async-io.h>

#include <string>

#include "adversary/agent_server.h"
#include "adversary/cheating_agent.h"
#include "common/status.h"
#include "proto/signing.h"

namespace wipeproof::selftest {

// Serves `make`'s agent as the node `node` that pins the certificate of `challenger` (as the real
// agent does), then connects to it presenting `third_party` and sends startSession with `order`.
// Returns "" when the attempt failed and nothing of it reached the agent (its TLS channel admitted
// no connection, `seen` counts no order; read once the server has stopped), else what went wrong,
// in words. Errors: INTERNAL when a certificate cannot be made.
StatusOr<std::string> SendCopiedOrder(kj::AsyncIoContext& io, adversary::LoopbackAgentServer::MakeAgent make,
                                      const proto::KeyPair& node, const proto::KeyPair& challenger,
                                      const proto::KeyPair& third_party, const proto::SignedEnvelope& order,
                                      const adversary::AgentLog& seen);

}  // namespace wipeproof::selftest
