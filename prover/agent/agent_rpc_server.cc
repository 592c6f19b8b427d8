#include "prover/agent/agent_rpc_server.h"

#include <capnp/serialize-async.h>
#include <glog/logging.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <utility>

#include "proto/codec.h"
#include "prover/agent/agent_service.h"

namespace wipeproof {
namespace {

constexpr int64_t kLogIntervalUs = 1'000'000;  // rate-limited lines: at most one a second per kind
constexpr int64_t kBusyRecheckUs = 1'000'000;  // idle watch of a connection with a session or a call
constexpr rlim_t kSpareFds = 64;               // descriptors besides connections: listener, epoll, GPUs, logs

std::string Skipped(uint64_t skipped) {
  return skipped == 0 ? "" : " (" + std::to_string(skipped) + " more like this not logged)";
}

// `d` in seconds with one decimal, for log lines.
std::string Seconds(kj::Duration d) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", static_cast<double>(d / kj::MILLISECONDS) / 1000.0);
  return text;
}

}  // namespace

// The connection's message stream, logging why a message was refused on receipt (over the size
// limit, too many segments, a malformed frame): capnp then drops the connection without a word.
// Reads and writes are the plain stream's.
class AgentRpcServer::RefusalLoggingStream final : public capnp::MessageStream {
 public:
  RefusalLoggingStream(AgentRpcServer& server, ConnectionId id, kj::AsyncIoStream& stream)
      : server_(server), id_(id), inner_(stream) {}

  kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> tryReadMessage(kj::ArrayPtr<kj::AutoCloseFd> fd_space,
                                                                    capnp::ReaderOptions options,
                                                                    kj::ArrayPtr<capnp::word> scratch) override {
    return inner_.tryReadMessage(fd_space, options, scratch)
        .catch_([this](kj::Exception&& e) -> kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> {
          if (e.getType() != kj::Exception::Type::DISCONNECTED) server_.MessageRefused(id_, e);
          return kj::mv(e);
        });
  }
  kj::Promise<void> writeMessage(kj::ArrayPtr<const int> fds,
                                 kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments) override {
    return inner_.writeMessage(fds, segments);
  }
  kj::Promise<void> writeMessages(kj::ArrayPtr<kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>>> messages) override {
    return inner_.writeMessages(messages);
  }
  kj::Maybe<int> getSendBufferSize() override { return inner_.getSendBufferSize(); }
  kj::Promise<void> end() override { return inner_.end(); }

 private:
  AgentRpcServer& server_;
  const ConnectionId id_;
  capnp::AsyncIoMessageStream inner_;
};

struct AgentRpcServer::Connection {
  Connection(AgentRpcServer& server, ConnectionId connection_id, kj::Own<kj::AsyncIoStream> connection_stream)
      : id(connection_id),
        activity(std::make_shared<CallActivity>(server.provider_.getTimer())),
        stream(kj::mv(connection_stream)),
        messages(server, id, *stream),
        network(messages, capnp::rpc::twoparty::Side::SERVER, proto::RpcReaderOptions()),
        rpc(capnp::makeRpcServer(
            network, proto::ProverAgent::Client(kj::heap<AgentService>(server.core_, server.workers_, id, activity)))),
        opened(server.provider_.getTimer().now()) {
    auto paf = kj::newPromiseAndFulfiller<void>();
    evicted = kj::mv(paf.promise);
    evict = kj::mv(paf.fulfiller);
  }

  const ConnectionId id;
  const std::shared_ptr<CallActivity> activity;
  const kj::TimePoint opened;
  // Fulfilled to close the connection for a newer one at the cap; `evicted` resolves then.
  kj::Own<kj::PromiseFulfiller<void>> evict;
  kj::Promise<void> evicted = nullptr;
  kj::Own<kj::AsyncIoStream> stream;
  RefusalLoggingStream messages;
  capnp::TwoPartyVatNetwork network;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc;
};

AgentRpcServer::AgentRpcServer(AgentCore& core, kj::AsyncIoProvider& provider, AgentRpcServerOptions options)
    : core_(core), provider_(provider), options_(options), tasks_(*this) {
  CHECK_GE(options_.max_connections, 1u) << "AgentRpcServerOptions.max_connections must be at least 1";
  tasks_.add(TimeoutLoop());
}

AgentRpcServer::~AgentRpcServer() noexcept(false) {}

bool AgentRpcServer::MayLog(LogLimit& limit, uint64_t* skipped) {
  const int64_t now = (provider_.getTimer().now() - kj::origin<kj::TimePoint>()) / kj::MICROSECONDS;
  if (limit.next_us != INT64_MIN && now < limit.next_us) {
    ++limit.skipped;
    return false;
  }
  limit.next_us = now + kLogIntervalUs;
  *skipped = limit.skipped;
  limit.skipped = 0;
  return true;
}

void AgentRpcServer::MessageRefused(ConnectionId id, const kj::Exception& e) {
  ++messages_refused_;
  uint64_t skipped = 0;
  if (MayLog(message_log_, &skipped)) {
    constexpr size_t kMaxDescriptionChars = 200;  // the text may quote what the peer sent
    const kj::StringPtr description = e.getDescription();
    LOG(WARNING) << "agent RPC: closing connection " << id << ": message refused on receipt: "
                 << std::string(description.begin(), std::min(description.size(), kMaxDescriptionChars))
                 << Skipped(skipped);
  }
}

void AgentRpcServer::Accept(kj::Own<kj::AsyncIoStream> stream) {
  if (open_.size() >= options_.max_connections && !EvictForNewConnection()) {
    ++connections_refused_;
    uint64_t skipped = 0;
    if (MayLog(refuse_log_, &skipped)) {
      LOG(WARNING) << "agent RPC: " << open_.size() << " connections open, the most allowed (--max_connections), "
                   << "each owning a session or running a call: closing a new connection at once" << Skipped(skipped);
    }
    return;  // dropping the stream closes it
  }
  const ConnectionId id = next_connection_++;
  auto connection = kj::heap<Connection>(*this, id, kj::mv(stream));
  Connection& c = *connection;
  open_.emplace(id, &c);
  VLOG(1) << "connection " << id << " opened (" << open_.size() << " open)";
  kj::Promise<void> closed = c.network.onDisconnect().then([id]() { VLOG(1) << "connection " << id << " closed"; });
  kj::Promise<void> evicted = kj::mv(c.evicted);
  tasks_.add(closed.exclusiveJoin(IdleWatch(c))
                 .exclusiveJoin(kj::mv(evicted))
                 .then([this, id]() { core_.OnDisconnect(id); })
                 .attach(kj::mv(connection), kj::defer([this, id]() { open_.erase(id); })));
}

bool AgentRpcServer::EvictForNewConnection() {
  // Oldest first, whatever its calls: a connection that polls status() is no more entitled to a
  // slot than a silent one, and the newest (likely a challenger about to send its order) is the
  // last to go.
  for (auto it = open_.begin(); it != open_.end(); ++it) {
    Connection& c = *it->second;
    if (c.activity->in_flight() > 0 || core_.OwnsSession(c.id)) continue;
    const kj::TimePoint now = provider_.getTimer().now();
    ++connections_evicted_;
    uint64_t skipped = 0;
    if (MayLog(evict_log_, &skipped)) {
      LOG(INFO) << "agent RPC: evicting connection " << c.id << " (open " << Seconds(now - c.opened) << " s, idle "
                << Seconds(now - c.activity->last()) << " s, no session) for a new connection at the cap of "
                << options_.max_connections << " (--max_connections)" << Skipped(skipped);
    }
    c.evict->fulfill();  // closes it on the next turn of the event loop
    open_.erase(it);     // its slot is the new connection's from now on
    return true;
  }
  return false;
}

kj::Promise<void> AgentRpcServer::IdleWatch(Connection& c) {
  if (options_.idle_timeout_us <= 0) return kj::NEVER_DONE;
  const kj::Duration idle = options_.idle_timeout_us * kj::MICROSECONDS;
  return provider_.getTimer().atTime(c.activity->last() + idle).then([this, &c, idle]() -> kj::Promise<void> {
    kj::Timer& timer = provider_.getTimer();
    if (c.activity->in_flight() > 0 || core_.OwnsSession(c.id)) {
      // Governed by its call or its session (timeout); look again later.
      const kj::Duration recheck = std::min<kj::Duration>(idle, kBusyRecheckUs * kj::MICROSECONDS);
      return timer.afterDelay(recheck).then([this, &c]() { return IdleWatch(c); });
    }
    if (timer.now() - c.activity->last() < idle) return IdleWatch(c);  // a call came meanwhile
    ++connections_idled_out_;
    uint64_t skipped = 0;
    if (MayLog(idle_log_, &skipped)) {
      LOG(INFO) << "agent RPC: closing connection " << c.id << ": no call for " << options_.idle_timeout_us
                << " us and no session (--idle_timeout_s)" << Skipped(skipped);
    }
    return kj::READY_NOW;
  });
}

void AgentRpcServer::Serve(kj::Own<kj::ConnectionReceiver> receiver) {
  kj::ConnectionReceiver& r = *receiver;
  tasks_.add(AcceptLoop(r).attach(kj::mv(receiver)));
}

kj::Promise<unsigned> AgentRpcServer::Listen(kj::StringPtr address) {
  return provider_.getNetwork()
      .parseAddress(address, kDefaultAgentPort)
      .then([this](kj::Own<kj::NetworkAddress> parsed) {
        kj::Own<kj::ConnectionReceiver> receiver = parsed->listen();
        const unsigned port = receiver->getPort();
        Serve(kj::mv(receiver));
        struct rlimit files {};
        if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY &&
            files.rlim_cur < options_.max_connections + kSpareFds) {
          LOG(WARNING) << "agent RPC: the open-file limit (RLIMIT_NOFILE " << files.rlim_cur
                       << ") leaves little room for " << options_.max_connections
                       << " connections (--max_connections): accepting may fail with "
                       << "'Too many open files' (the agent keeps retrying); raise it (ulimit -n, LimitNOFILE=) "
                       << "to at least " << options_.max_connections + kSpareFds;
        }
        return port;
      });
}

kj::Promise<void> AgentRpcServer::AcceptLoop(kj::ConnectionReceiver& receiver) {
  // evalNow: kj's accept() throws some errors (EMFILE, ENFILE, ...) synchronously; they must be
  // caught here like a rejected promise, or they would end the loop and close the listener.
  return kj::evalNow([&receiver]() { return receiver.accept(); })
      .then([this](kj::Own<kj::AsyncIoStream> stream) { Accept(kj::mv(stream)); })
      .catch_([this](kj::Exception&& e) -> kj::Promise<void> {
        ++accept_errors_;
        uint64_t skipped = 0;
        if (MayLog(accept_log_, &skipped)) {
          LOG(WARNING) << "agent RPC: accept failed: " << e.getDescription().cStr() << "; still listening, retrying in "
                       << options_.accept_retry_delay_us << " us (" << open_.size() << " connections open)"
                       << Skipped(skipped);
        }
        return provider_.getTimer().afterDelay(options_.accept_retry_delay_us * kj::MICROSECONDS);
      })
      .then([this, &receiver]() { return AcceptLoop(receiver); });
}

kj::Promise<void> AgentRpcServer::TimeoutLoop() {
  return provider_.getTimer().afterDelay(options_.timeout_check_interval_us * kj::MICROSECONDS).then([this]() {
    core_.CheckTimeouts();
    return TimeoutLoop();
  });
}

void AgentRpcServer::taskFailed(kj::Exception&& exception) {
  LOG(WARNING) << "agent RPC: " << exception.getDescription().cStr();
}

}  // namespace wipeproof
