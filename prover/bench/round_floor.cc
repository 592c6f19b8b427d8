#include "prover/bench/round_floor.h"

#include <capnp/message.h>
#include <capnp/serialize-async.h>
#include <capnp/serialize.h>
#include <kj/async-io.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "proto/codec.h"
#include "prover/bench/floor_messages.h"

namespace wipeproof {
namespace {

// The echo: reads a ChallengeRound as a flat message (with the RPC layer's bounds), answers its
// round index with as many labels as it asks, from `labels` (q x 32 bytes), until the stream ends.
kj::Promise<void> Echo(kj::AsyncIoStream& stream, const std::vector<uint8_t>& labels) {
  return capnp::tryReadMessage(stream, proto::RpcReaderOptions())
      .then([&stream, &labels](kj::Maybe<kj::Own<capnp::MessageReader>> maybe) -> kj::Promise<void> {
        KJ_IF_MAYBE (reader, maybe) {
          auto round = (*reader)->getRoot<proto::ChallengeRound>();
          auto message = kj::heap<capnp::MallocMessageBuilder>(FloorAnswerWords(round, labels));
          BuildFloorAnswer(round, labels, *message);
          auto written = capnp::writeMessage(stream, *message);
          return written.attach(kj::mv(message)).then([&stream, &labels]() { return Echo(stream, labels); });
        }
        return kj::READY_NOW;  // the client closed the stream
      });
}

// The client's rounds over `stream` (on `io`'s loop): each round q random indices (a seeded draw) in a
// fresh message, written, then the answer read and checked for its round index and size.
StatusOr<RoundPathResult> Rounds(kj::AsyncIoContext& io, kj::AsyncIoStream& stream, const RoundBenchOptions& options,
                                 const std::string& path, const clockid_t* echo_cpu_clock) {
  const uint32_t q = options.labels_per_round;
  std::mt19937_64 random(1);
  std::vector<int64_t> round_ns, build_ns;
  round_ns.reserve(options.rounds);
  build_ns.reserve(options.rounds);
  const int64_t client_cpu_before = CpuClockNs(CLOCK_THREAD_CPUTIME_ID);
  const int64_t echo_cpu_before = echo_cpu_clock != nullptr ? CpuClockNs(*echo_cpu_clock) : 0;
  try {
    for (uint32_t r = 0; r < options.rounds; ++r) {
      const int64_t t0 = MonotonicNs();
      capnp::MallocMessageBuilder message(q + 32);
      BuildFloorRound(message, r, q, options.session_labels, random);
      const int64_t t1 = MonotonicNs();
      capnp::writeMessage(stream, message).wait(io.waitScope);
      auto reader = capnp::readMessage(stream, proto::RpcReaderOptions()).wait(io.waitScope);
      const int64_t t2 = MonotonicNs();
      WP_RETURN_IF_ERROR(CheckFloorAnswer(reader->getRoot<proto::RoundAnswer>(), r, q));
      build_ns.push_back(t1 - t0);
      round_ns.push_back(t2 - t1);
    }
  } catch (const kj::Exception& e) {
    return UnavailableError(path + ": " + e.getDescription().cStr());
  }
  RoundPathResult out =
      FloorResult(path, options, std::move(round_ns), CpuClockNs(CLOCK_THREAD_CPUTIME_ID) - client_cpu_before);
  out.client_build = PercentilesOf(build_ns);
  if (echo_cpu_clock != nullptr) {
    out.agent_cpu_us = static_cast<double>(CpuClockNs(*echo_cpu_clock) - echo_cpu_before) / 1000.0 / options.rounds;
  }
  return out;
}

// Writes all of `bytes` to the blocking socket `fd`, or returns false.
bool WriteAll(int fd, const uint8_t* bytes, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, bytes, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    bytes += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Reads exactly `n` bytes from the blocking socket `fd`, or returns false.
bool ReadAll(int fd, uint8_t* bytes, size_t n) {
  while (n > 0) {
    const ssize_t r = ::read(fd, bytes, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    bytes += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// The machine's own floor: the byte counts of a round's two flat messages written and read on a
// blocking socketpair by one thread (write the round, read it, write the answer, read it): no
// event loop, no serialization, only the system calls.
StatusOr<RoundPathResult> RawInProcess(const RoundBenchOptions& options) {
  const uint32_t q = options.labels_per_round;
  // The sizes capnp::writeMessage gives the two messages (one segment each, a word of table).
  capnp::MallocMessageBuilder round_message(q + 32);
  auto round = round_message.initRoot<proto::ChallengeRound>();
  const uint8_t session_id[proto::kSessionIdBytes] = {};
  round.setSessionId(proto::ByteView(session_id, sizeof session_id));
  round.initDevices(1)[0].initLabelIndices(q);
  capnp::MallocMessageBuilder answer_message(q * 4 + 32);
  auto answer = answer_message.initRoot<proto::RoundAnswer>();
  answer.setSessionId(proto::ByteView(session_id, sizeof session_id));
  answer.initLabels(q * static_cast<unsigned>(kLabelBytes));
  const size_t round_bytes = capnp::computeSerializedSizeInWords(round_message) * 8;
  const size_t answer_bytes = capnp::computeSerializedSizeInWords(answer_message) * 8;
  // One thread writes each message whole before reading it: it must fit the socket's buffer
  // (Linux: ~208 KiB by default; q = 4096 makes a 128 KiB answer).
  if (answer_bytes > (size_t{160} << 10)) {
    return InvalidArgumentError("floor-raw-in-process: an answer of " + std::to_string(answer_bytes) +
                                " bytes does not fit a socket buffer");
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
    return UnavailableError("socketpair: " + std::string(strerror(errno)));
  std::vector<uint8_t> a(round_bytes, 1), b(answer_bytes, 2);
  std::vector<int64_t> round_ns;
  round_ns.reserve(options.rounds);
  const int64_t cpu_before = CpuClockNs(CLOCK_THREAD_CPUTIME_ID);
  bool ok = true;
  for (uint32_t r = 0; r < options.rounds && ok; ++r) {
    const int64_t t0 = MonotonicNs();
    ok = WriteAll(fds[0], a.data(), a.size()) && ReadAll(fds[1], a.data(), a.size()) &&
         WriteAll(fds[1], b.data(), b.size()) && ReadAll(fds[0], b.data(), b.size());
    round_ns.push_back(MonotonicNs() - t0);
  }
  const int64_t cpu_ns = CpuClockNs(CLOCK_THREAD_CPUTIME_ID) - cpu_before;
  const int saved = errno;
  close(fds[0]);
  close(fds[1]);
  if (!ok) return UnavailableError("socketpair round: " + std::string(strerror(saved)));
  return FloorResult("floor-raw-in-process", options, std::move(round_ns), cpu_ns);
}

StatusOr<RoundPathResult> InProcess(const RoundBenchOptions& options, const std::vector<uint8_t>& labels) {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  auto pipe = io.provider->newTwoWayPipe();
  kj::Promise<void> echo = Echo(*pipe.ends[0], labels).eagerlyEvaluate([](kj::Exception&&) {});
  auto result = Rounds(io, *pipe.ends[1], options, "floor-in-process", nullptr);
  pipe.ends[1]->shutdownWrite();
  return result;
}

// The echo on its own thread and event loop: accepts one connection on 127.0.0.1 (TLS when
// `tls`), echoes until it closes; joined by the destructor.
class LoopbackEcho {
 public:
  LoopbackEcho(std::shared_ptr<proto::TlsChannel> tls, const std::vector<uint8_t>& labels)
      : tls_(std::move(tls)), labels_(labels) {}
  ~LoopbackEcho() {
    if (thread_.joinable()) thread_.join();
  }

  // Starts the thread; returns the port once it listens. Errors: UNAVAILABLE.
  StatusOr<unsigned> Start() {
    std::future<StatusOr<unsigned>> ready = port_.get_future();
    thread_ = std::thread([this]() {
      bool reported = false;
      try {
        kj::AsyncIoContext io = kj::setupAsyncIo();
        auto listener = io.provider->getNetwork().parseAddress("127.0.0.1", 0).wait(io.waitScope)->listen();
        reported = true;
        port_.set_value(listener->getPort());
        // A client that never connects (its own setup failed) must not leave this thread waiting.
        kj::Own<kj::AsyncIoStream> stream =
            listener->accept()
                .exclusiveJoin(
                    io.provider->getTimer().afterDelay(30 * kj::SECONDS).then([]() -> kj::Own<kj::AsyncIoStream> {
                      KJ_FAIL_REQUIRE("no client within 30 s");
                    }))
                .wait(io.waitScope);
        int one = 1;
        stream->setsockopt(IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (tls_ != nullptr) {
          stream = tls_->context()
                       .wrapServer(kj::AuthenticatedStream{kj::mv(stream), kj::UnknownPeerIdentity::newInstance()})
                       .wait(io.waitScope)
                       .stream;
        }
        Echo(*stream, labels_).wait(io.waitScope);
      } catch (const kj::Exception& e) {
        if (!reported) port_.set_value(UnavailableError(std::string("echo: ") + e.getDescription().cStr()));
      }
    });
    return ready.get();
  }

  bool CpuClock(clockid_t* clock) { return pthread_getcpuclockid(thread_.native_handle(), clock) == 0; }

 private:
  std::shared_ptr<proto::TlsChannel> tls_;
  const std::vector<uint8_t>& labels_;
  std::thread thread_;
  std::promise<StatusOr<unsigned>> port_;
};

StatusOr<RoundPathResult> Loopback(const RoundBenchOptions& options, const std::vector<uint8_t>& labels,
                                   const std::string& path, std::shared_ptr<proto::TlsChannel> server_tls,
                                   std::unique_ptr<proto::TlsChannel> client_tls) {
  LoopbackEcho echo(std::move(server_tls), labels);
  WP_ASSIGN_OR_RETURN(unsigned port, echo.Start());
  kj::AsyncIoContext io = kj::setupAsyncIo();
  StatusOr<RoundPathResult> result = InternalError("not run");
  try {
    auto address = io.provider->getNetwork().parseAddress("127.0.0.1", port).wait(io.waitScope);
    kj::Own<kj::AsyncIoStream> stream = address->connect().wait(io.waitScope);
    int one = 1;
    stream->setsockopt(IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (client_tls != nullptr) stream = client_tls->Connect(kj::mv(stream)).wait(io.waitScope);
    clockid_t echo_cpu;
    const bool has_clock = echo.CpuClock(&echo_cpu);
    result = Rounds(io, *stream, options, path, has_clock ? &echo_cpu : nullptr);
    // Closing the stream (here) ends the echo's loop; its thread is joined by `echo`'s destructor.
  } catch (const kj::Exception& e) {
    return UnavailableError(path + ": " + e.getDescription().cStr());
  }
  return result;
}

}  // namespace

bool IsRoundFloorPath(const std::string& path) {
  return path == "floor-raw-in-process" || path == "floor-in-process" || path == "floor-tcp-loopback-plaintext" ||
         path == "floor-tcp-loopback-tls13";
}

StatusOr<RoundPathResult> MeasureRoundFloor(const RoundBenchOptions& options, const std::string& path,
                                            std::shared_ptr<proto::TlsChannel> server_tls,
                                            std::unique_ptr<proto::TlsChannel> client_tls) {
  if (!IsRoundFloorPath(path)) return InvalidArgumentError("not a floor path: '" + path + "'");
  const std::vector<uint8_t> labels(size_t{options.labels_per_round} * kLabelBytes, 0x5a);
  if (path == "floor-raw-in-process") return RawInProcess(options);
  if (path == "floor-in-process") return InProcess(options, labels);
  if (path == "floor-tcp-loopback-plaintext") return Loopback(options, labels, path, nullptr, nullptr);
  if (server_tls == nullptr || client_tls == nullptr) {
    return InvalidArgumentError("floor-tcp-loopback-tls13 needs the echo's and the client's TLS channels");
  }
  return Loopback(options, labels, path, std::move(server_tls), std::move(client_tls));
}

}  // namespace wipeproof
