#include "prover/agent/agent_rpc_server.h"

#include <capnp/serialize-async.h>
#include <glog/logging.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "common/terminal_text.h"
#include "proto/codec.h"
#include "prover/agent/agent_service.h"
#include "prover/agent/handshake_guard.h"
#include "prover/agent/prefixed_stream.h"
#include "prover/agent/round_channel.h"

namespace wipeproof {
namespace {

constexpr int64_t kLogIntervalUs = 1'000'000;  // rate-limited lines: at most one a second per kind
constexpr int64_t kBusyRecheckUs = 1'000'000;  // idle watch of a connection with a session or a call
constexpr rlim_t kSpareFds = 64;               // descriptors besides connections: listener, epoll, GPUs, logs
constexpr size_t kMaxDescriptionChars = 200;   // of exception texts in log lines: they may quote the peer

std::string Skipped(uint64_t skipped) {
  return skipped == 0 ? "" : " (" + std::to_string(skipped) + " more like this not logged)";
}

// `d` in seconds with one decimal, for log lines.
std::string Seconds(kj::Duration d) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", static_cast<double>(d / kj::MILLISECONDS) / 1000.0);
  return text;
}

std::string Shortened(kj::StringPtr text) {
  return std::string(text.begin(), std::min(text.size(), kMaxDescriptionChars));
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

// An authenticated connection: until its first 8 bytes arrive it is neither kind (but counted,
// and evictable like an idle connection); then an RPC connection (`rpc`) or a round channel
// (`channel`).
struct AgentRpcServer::Connection {
  Connection(AgentRpcServer& server, ConnectionId connection_id, kj::Own<kj::AsyncIoStream> connection_stream,
             PeerKeyId authenticated_as)
      : id(connection_id),
        activity(std::make_shared<CallActivity>(server.provider_.getTimer())),
        opened(server.provider_.getTimer().now()),
        peer_key(authenticated_as),
        stream(kj::mv(connection_stream)) {
    auto paf = kj::newPromiseAndFulfiller<void>();
    evicted = kj::mv(paf.promise);
    evict = kj::mv(paf.fulfiller);
  }

  // The ProverAgent RPC system over the connection, its first bytes (`first`) read again.
  struct Rpc {
    Rpc(AgentRpcServer& server, Connection& c)
        : messages(server, c.id, *c.stream),
          network(messages, capnp::rpc::twoparty::Side::SERVER, proto::RpcReaderOptions()),
          system(capnp::makeRpcServer(network, proto::ProverAgent::Client(kj::heap<AgentService>(
                                                   server.core_, server.workers_, c.id, c.peer_key, c.activity)))) {}
    RefusalLoggingStream messages;
    capnp::TwoPartyVatNetwork network;
    capnp::RpcSystem<capnp::rpc::twoparty::VatId> system;
  };

  const ConnectionId id;
  const std::shared_ptr<CallActivity> activity;
  const kj::TimePoint opened;
  const PeerKeyId peer_key;
  // Fulfilled to close the connection for a newer one at the cap; `evicted` resolves then.
  kj::Own<kj::PromiseFulfiller<void>> evict;
  kj::Promise<void> evicted = nullptr;
  kj::Own<kj::AsyncIoStream> stream;
  kj::Own<Rpc> rpc;               // an RPC connection's, after its first bytes
  kj::Own<RoundChannel> channel;  // a round channel's, after its preface
};

// A TLS handshake in progress (AcceptTls): its stream lives in the handshake's promise.
struct AgentRpcServer::Handshake {
  Handshake(uint64_t handshake_id, std::string peer_name, kj::TimePoint now)
      : id(handshake_id), peer(kj::mv(peer_name)), opened(now) {
    auto paf = kj::newPromiseAndFulfiller<void>();
    evicted = kj::mv(paf.promise);
    evict = kj::mv(paf.fulfiller);
  }
  const uint64_t id;
  const std::string peer;  // for log lines; may be empty
  const kj::TimePoint opened;
  HandshakeGuardStream* guard = nullptr;  // owned by the handshake's TLS stream
  bool timed_out = false;                 // ended by the handshake timeout
  uint64_t bytes_read = 0;                // from the peer, counted by the guard
  // Fulfilled to close the handshake for a newer one at the cap; `evicted` resolves then.
  kj::Own<kj::PromiseFulfiller<void>> evict;
  kj::Promise<void> evicted = nullptr;
};

AgentRpcServer::AgentRpcServer(AgentCore& core, kj::AsyncIoProvider& provider, AgentRpcServerOptions options)
    : core_(core),
      provider_(provider),
      options_(options),
      next_handshake_read_(provider.getTimer().now()),
      tasks_(*this) {
  CHECK_GE(options_.max_connections, 1u) << "AgentRpcServerOptions.max_connections must be at least 1";
  CHECK_GE(options_.max_handshakes, 1u) << "AgentRpcServerOptions.max_handshakes must be at least 1";
  CHECK_GT(options_.handshake_timeout_us, 0) << "AgentRpcServerOptions.handshake_timeout_us must be positive";
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
    LOG(WARNING) << "agent RPC: closing connection " << id
                 << ": message refused on receipt: " << Shortened(e.getDescription()) << Skipped(skipped);
  }
}

void AgentRpcServer::Accept(kj::Own<kj::AsyncIoStream> stream, PeerKeyId authenticated_as) {
  if (open_.size() >= options_.max_connections && !EvictForNewConnection()) {
    ++connections_refused_;
    uint64_t skipped = 0;
    if (MayLog(refuse_log_, &skipped)) {
      LOG(WARNING) << "agent RPC: " << open_.size() << " connections open, the most allowed (--max_connections), "
                   << "each owning a session, running a call or serving a session's rounds: closing a new connection "
                   << "at once" << Skipped(skipped);
    }
    return;  // dropping the stream closes it
  }
  const ConnectionId id = next_connection_++;
  auto connection = kj::heap<Connection>(*this, id, kj::mv(stream), authenticated_as);
  Connection& c = *connection;
  open_.emplace(id, &c);
  VLOG(1) << "connection " << id << " opened (" << open_.size() << " open, authenticated as "
          << (authenticated_as ? proto::KeyIdHex(*authenticated_as) : std::string("nobody")) << ")";
  kj::Promise<void> evicted = kj::mv(c.evicted);
  tasks_.add(ServeConnection(c)
                 .exclusiveJoin(IdleWatch(c))
                 .exclusiveJoin(kj::mv(evicted))
                 .then([this, id]() { core_.OnDisconnect(id); })
                 .attach(kj::mv(connection), kj::defer([this, id]() { open_.erase(id); })));
}

kj::Promise<void> AgentRpcServer::ServeConnection(Connection& c) {
  // The first 8 bytes tell a round channel (its preface, wipe.capnp roundChannelPreface) from an
  // RPC connection (a Cap'n Proto frame header; the client speaks first).
  const capnp::Data::Reader preface = proto::ROUND_CHANNEL_PREFACE.get();
  auto first = kj::heapArray<kj::byte>(preface.size());
  kj::byte* bytes = first.begin();
  return c.stream->tryRead(bytes, first.size(), first.size())
      .then([this, &c, first = kj::mv(first), preface](size_t n) mutable -> kj::Promise<void> {
        if (n == preface.size() && std::memcmp(first.begin(), preface.begin(), n) == 0) {
          ++round_channels_opened_;
          c.channel = kj::heap<RoundChannel>(core_, provider_.getTimer(), kj::mv(c.stream), c.peer_key,
                                             RoundChannelOptions{options_.handshake_timeout_us, kChannelWatchUs},
                                             [this, id = c.id](ConnectionId owner) { RoundChannelBound(id, owner); });
          return c.channel->Serve().then([this, &c]() {
            if (c.channel->refused()) ++round_channels_refused_;
            round_channel_rounds_ += c.channel->rounds_answered();
            VLOG(1) << "round channel " << c.id << " closed after " << c.channel->rounds_answered()
                    << " rounds: " << TerminalSafe(c.channel->closed_because());
          });
        }
        if (n == 0) return kj::READY_NOW;  // closed before a byte
        c.stream = kj::heap<PrefixedStream>(kj::mv(c.stream), kj::heapArray<kj::byte>(first.slice(0, n)));
        c.rpc = kj::heap<Connection::Rpc>(*this, c);
        const ConnectionId id = c.id;
        return c.rpc->network.onDisconnect().then([id]() { VLOG(1) << "connection " << id << " closed"; });
      });
}

bool AgentRpcServer::ServingRounds(const Connection& c) const {
  if (c.channel.get() == nullptr) return false;
  const std::optional<ConnectionId> owner = c.channel->owner();
  return owner && core_.OwnsSession(*owner);
}

void AgentRpcServer::RoundChannelBound(ConnectionId channel, ConnectionId owner) {
  ++round_channels_bound_;
  for (auto it = open_.begin(); it != open_.end();) {
    Connection& c = *it->second;
    if (c.id != channel && c.channel.get() != nullptr && c.channel->owner() == owner) {
      VLOG(1) << "round channel " << c.id << " closed for round channel " << channel << " of the same session owner";
      c.evict->fulfill();  // closes it on the next turn of the event loop
      it = open_.erase(it);
    } else {
      ++it;
    }
  }
}

void AgentRpcServer::AcceptTls(kj::Own<kj::AsyncIoStream> stream, std::string peer) {
  CHECK(options_.tls) << "AgentRpcServer: TLS connections need AgentRpcServerOptions.tls";
  if (handshaking_.size() >= options_.max_handshakes) EvictOldestHandshake();
  kj::Timer& timer = provider_.getTimer();
  auto handshake = kj::heap<Handshake>(next_handshake_++, kj::mv(peer), timer.now());
  Handshake& h = *handshake;
  handshaking_.emplace(h.id, &h);
  auto guard = kj::heap<HandshakeGuardStream>(
      kj::mv(stream), kMaxHandshakeBytes, [this]() { return PaceHandshakeRead(); }, &h.bytes_read);
  h.guard = guard.get();
  kj::Promise<kj::AuthenticatedStream> handshaken =
      options_.tls->context()
          .wrapServer(kj::AuthenticatedStream{kj::mv(guard), kj::UnknownPeerIdentity::newInstance()})
          .exclusiveJoin(timer.afterDelay(options_.handshake_timeout_us * kj::MICROSECONDS)
                             .then([this, &h]() -> kj::Promise<kj::AuthenticatedStream> {
                               ++handshakes_timed_out_;
                               h.timed_out = true;
                               return KJ_EXCEPTION(DISCONNECTED, "no TLS handshake within the handshake timeout",
                                                   options_.handshake_timeout_us);
                             }))
          .exclusiveJoin(kj::mv(h.evicted).then([]() -> kj::Promise<kj::AuthenticatedStream> {
            return KJ_EXCEPTION(OVERLOADED, "closed for a newer connection at the cap of handshakes");
          }));
  tasks_.add(handshaken
                 .then(
                     [this, &h](kj::AuthenticatedStream authenticated) {
                       // The guard lives inside the TLS stream: from here on it passes everything.
                       h.guard->Authenticated();
                       HandshakeEnded(h, nullptr);
                       Accept(kj::mv(authenticated.stream),
                              options_.tls->AuthenticatedKey(*authenticated.peerIdentity));
                     },
                     [this, &h](kj::Exception&& e) { HandshakeEnded(h, &e); })
                 .attach(kj::mv(handshake)));
}

void AgentRpcServer::HandshakeEnded(const Handshake& h, const kj::Exception* failure) {
  max_handshake_bytes_read_ = std::max(max_handshake_bytes_read_, h.bytes_read);
  if (handshaking_.erase(h.id) == 0 || failure == nullptr) return;  // evicted (counted then), or done
  ++handshakes_failed_;
  uint64_t skipped = 0;
  // Timeouts have their own line budget: a burst of refused handshakes does not hide them.
  if (MayLog(h.timed_out ? handshake_timeout_log_ : handshake_log_, &skipped)) {
    LOG(WARNING) << "agent RPC: closing an unauthenticated connection" << (h.peer.empty() ? "" : " from " + h.peer)
                 << " after " << Seconds(provider_.getTimer().now() - h.opened)
                 << " s: TLS handshake failed (the challenger's pinned certificate is required): "
                 << Shortened(failure->getDescription()) << Skipped(skipped);
  }
}

void AgentRpcServer::EvictOldestHandshake() {
  auto oldest = handshaking_.begin();
  if (oldest == handshaking_.end()) return;
  Handshake& h = *oldest->second;
  ++handshakes_evicted_;
  uint64_t skipped = 0;
  if (MayLog(handshake_evict_log_, &skipped)) {
    LOG(INFO) << "agent RPC: closing the oldest unauthenticated connection" << (h.peer.empty() ? "" : " from " + h.peer)
              << " (handshaking for " << Seconds(provider_.getTimer().now() - h.opened)
              << " s) for a new one at the cap of " << options_.max_handshakes << " handshakes (--max_handshakes)"
              << Skipped(skipped);
  }
  h.evict->fulfill();          // closes it on the next turn of the event loop
  handshaking_.erase(oldest);  // its place is the new handshake's from now on
}

bool AgentRpcServer::SessionRunning() const {
  for (const auto& [id, connection] : open_) {
    if (core_.OwnsSession(id)) return true;
  }
  return false;
}

kj::Promise<void> AgentRpcServer::PaceHandshakeRead() {
  if (options_.handshake_pace_us <= 0 || !SessionRunning()) return kj::READY_NOW;
  kj::Timer& timer = provider_.getTimer();
  const kj::TimePoint now = timer.now();
  const kj::TimePoint slot = std::max(now, next_handshake_read_);
  next_handshake_read_ = slot + options_.handshake_pace_us * kj::MICROSECONDS;
  if (slot <= now) return kj::READY_NOW;
  ++handshake_reads_paced_;
  return timer.atTime(slot);
}

bool AgentRpcServer::EvictForNewConnection() {
  // Oldest first, whatever its calls: a connection that polls status() is no more entitled to a
  // slot than a silent one, and the newest (likely a challenger about to send its order) is the
  // last to go.
  for (auto it = open_.begin(); it != open_.end(); ++it) {
    Connection& c = *it->second;
    if (c.activity->in_flight() > 0 || core_.OwnsSession(c.id) || ServingRounds(c)) continue;
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
    if (c.activity->in_flight() > 0 || core_.OwnsSession(c.id) || ServingRounds(c)) {
      // Governed by its call, its session (timeout) or its session's rounds; look again later.
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
  CHECK(options_.tls) << "AgentRpcServer: Serve needs AgentRpcServerOptions.tls";
  kj::ConnectionReceiver& r = *receiver;
  tasks_.add(AcceptLoop(r).attach(kj::mv(receiver)));
}

kj::Promise<unsigned> AgentRpcServer::Listen(kj::StringPtr address) {
  CHECK(options_.tls) << "AgentRpcServer: Listen needs AgentRpcServerOptions.tls";
  return provider_.getNetwork()
      .parseAddress(address, kDefaultAgentPort)
      .then([this](kj::Own<kj::NetworkAddress> parsed) {
        kj::Own<kj::ConnectionReceiver> receiver = parsed->listen();
        const unsigned port = receiver->getPort();
        Serve(kj::mv(receiver));
        struct rlimit files {};
        if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY &&
            files.rlim_cur < options_.max_connections + options_.max_handshakes + kSpareFds) {
          LOG(WARNING) << "agent RPC: the open-file limit (RLIMIT_NOFILE " << files.rlim_cur
                       << ") leaves little room for " << options_.max_connections << " connections and "
                       << options_.max_handshakes
                       << " handshakes (--max_connections, --max_handshakes): accepting may fail with "
                       << "'Too many open files' (the agent keeps retrying); raise it (ulimit -n, LimitNOFILE=) "
                       << "to at least " << options_.max_connections + options_.max_handshakes + kSpareFds;
        }
        return port;
      });
}

kj::Promise<void> AgentRpcServer::AcceptLoop(kj::ConnectionReceiver& receiver) {
  // evalNow: kj's accept() throws some errors (EMFILE, ENFILE, ...) synchronously; they must be
  // caught here like a rejected promise, or they would end the loop and close the listener.
  return kj::evalNow([&receiver]() { return receiver.acceptAuthenticated(); })
      .then([this](kj::AuthenticatedStream accepted) {
        std::string peer;
        try {
          peer = accepted.peerIdentity->toString().cStr();
        } catch (const kj::Exception&) {
          // No address to name (the peer is gone already): the handshake will fail anyway.
        }
        AcceptTls(kj::mv(accepted.stream), kj::mv(peer));
      })
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
