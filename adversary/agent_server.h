// Serves ProverAgent servers (a CheatingAgent, a RelayAgent in front of one, ...) to TCP
// connections on 127.0.0.1, for tests that run the real challenger binary or TCP connector against
// them. Connections are TLS 1.3 like the real agent's (proto/tls_channel.h): the server presents the
// certificate of `node` and requires the client certificate `challenger`; a connection whose
// handshake fails is dropped. Each authenticated connection gets a fresh server from `make`, called
// on the server's own thread with that thread's event-loop timer; connections are served with the
// RPC limits of the real agent (proto::RpcReaderOptions).
//
// Thread-safety: construct and destroy on one thread; address() and connections() from any.
#pragma once

#include <kj/async-io.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "proto/crypto.h"
#include "proto/tls_certificate.h"
#include "proto/tls_channel.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::adversary {

class LoopbackAgentServer {
 public:
  using MakeAgent = std::function<kj::Own<proto::ProverAgent::Server>(kj::Timer& timer)>;

  // Listens on a free port before returning. REQUIRES: `challenger` is not empty.
  LoopbackAgentServer(MakeAgent make, const proto::KeyPair& node, const proto::PinnedCertificate& challenger);
  // Stops accepting, drops open connections and joins the thread.
  ~LoopbackAgentServer();
  LoopbackAgentServer(const LoopbackAgentServer&) = delete;
  LoopbackAgentServer& operator=(const LoopbackAgentServer&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Connections accepted so far.
  int connections() const { return connections_.load(); }

 private:
  struct Connection;
  struct IgnoreErrors final : kj::TaskSet::ErrorHandler {
    void taskFailed(kj::Exception&&) override {}
  };

  MakeAgent make_;
  std::unique_ptr<proto::TlsChannel> tls_;
  IgnoreErrors errors_;
  kj::PromiseFulfiller<void>* stop_ = nullptr;
  kj::Own<const kj::Executor> executor_;
  std::atomic<int> connections_{0};
  uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace wipeproof::adversary
