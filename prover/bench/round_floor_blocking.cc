#include "prover/bench/round_floor_blocking.h"

#include <arpa/inet.h>
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/debug.h>
#include <kj/io.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <memory>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "proto/codec.h"
#include "prover/bench/floor_messages.h"
#include "proto/tls_certificate.h"

namespace wipeproof {
namespace {

constexpr int kAcceptTimeoutMs = 30'000;

std::string OpenSslErrors() {
  std::string out;
  for (unsigned long e = ERR_get_error(); e != 0; e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    if (!out.empty()) out += "; ";
    out += text;
  }
  return out.empty() ? "no OpenSSL error queued" : out;
}

struct SslContextFree {
  void operator()(SSL_CTX* context) const { SSL_CTX_free(context); }
};
using SslContext = std::unique_ptr<SSL_CTX, SslContextFree>;

struct X509Free {
  void operator()(X509* certificate) const { X509_free(certificate); }
};
using Certificate = std::unique_ptr<X509, X509Free>;

StatusOr<Certificate> CertificateOf(const proto::KeyPair& key) {
  WP_ASSIGN_OR_RETURN(std::string pem, proto::CertificatePem(key));
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  Certificate certificate(bio != nullptr ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (certificate == nullptr) return InternalError("cannot read a certificate: " + OpenSslErrors());
  return certificate;
}

// A TLS 1.3 context presenting `own`'s certificate and trusting only `peer`'s (a server also
// requires the client's).
StatusOr<SslContext> TlsContext(bool server, const proto::KeyPair& own, const proto::KeyPair& peer) {
  SslContext context(SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()));
  if (context == nullptr) return InternalError("SSL_CTX_new: " + OpenSslErrors());
  WP_ASSIGN_OR_RETURN(Certificate own_certificate, CertificateOf(own));
  WP_ASSIGN_OR_RETURN(Certificate peer_certificate, CertificateOf(peer));
  WP_ASSIGN_OR_RETURN(proto::PrivateKeyDer own_der, proto::PrivateKeyDer::Of(own));
  const unsigned char* der = own_der.bytes().data();
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> own_key(
      d2i_AutoPrivateKey(nullptr, &der, static_cast<long>(own_der.bytes().size())), EVP_PKEY_free);
  if (SSL_CTX_set_min_proto_version(context.get(), TLS1_3_VERSION) != 1 ||
      SSL_CTX_set_max_proto_version(context.get(), TLS1_3_VERSION) != 1 ||
      SSL_CTX_set_num_tickets(context.get(), 0) != 1 || own_key == nullptr ||
      SSL_CTX_use_certificate(context.get(), own_certificate.get()) != 1 ||
      SSL_CTX_use_PrivateKey(context.get(), own_key.get()) != 1 || SSL_CTX_check_private_key(context.get()) != 1 ||
      X509_STORE_add_cert(SSL_CTX_get_cert_store(context.get()), peer_certificate.get()) != 1) {
    return InternalError("cannot set up TLS: " + OpenSslErrors());
  }
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER | (server ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), nullptr);
  return context;
}

// One end's connected blocking socket, plain or under TLS: a kj::InputStream for capnp's reader,
// and whole-message writes (one write(2) or one SSL_write: one TLS record for a q = 256 answer).
class BlockingStream final : public kj::InputStream {
 public:
  explicit BlockingStream(int fd) : fd_(fd) {}
  ~BlockingStream() override {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (fd_ >= 0) close(fd_);
  }
  BlockingStream(const BlockingStream&) = delete;
  BlockingStream& operator=(const BlockingStream&) = delete;

  // The TLS handshake on the socket, as the server or as the client expecting the certificate
  // name `peer_name`. Errors: UNAVAILABLE naming OpenSSL's reason.
  Status StartTls(SSL_CTX* context, bool server, const std::string& peer_name) {
    ssl_ = SSL_new(context);
    if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) return InternalError("SSL_new: " + OpenSslErrors());
    if (!server &&
        (SSL_set1_host(ssl_, peer_name.c_str()) != 1 || SSL_set_tlsext_host_name(ssl_, peer_name.c_str()) != 1)) {
      return InternalError("SSL_set1_host: " + OpenSslErrors());
    }
    const int done = server ? SSL_accept(ssl_) : SSL_connect(ssl_);
    if (done != 1) {
      return UnavailableError(std::string(server ? "TLS accept" : "TLS connect") + ": " + OpenSslErrors() +
                              " (verify: " + X509_verify_cert_error_string(SSL_get_verify_result(ssl_)) + ")");
    }
    return Status::Ok();
  }

  // Reads at least `min_bytes` (fewer only at the stream's end). Throws kj::Exception on errors.
  size_t tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override {
    auto* out = static_cast<uint8_t*>(buffer);
    size_t got = 0;
    while (got < min_bytes) {
      size_t n = 0;
      if (ssl_ != nullptr) {
        if (SSL_read_ex(ssl_, out + got, max_bytes - got, &n) != 1) {
          if (SSL_get_error(ssl_, 0) == SSL_ERROR_ZERO_RETURN) break;
          KJ_FAIL_REQUIRE("SSL_read", OpenSslErrors());
        }
      } else {
        const ssize_t r = ::read(fd_, out + got, max_bytes - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) KJ_FAIL_SYSCALL("read", errno);
        if (r == 0) break;
        n = static_cast<size_t>(r);
      }
      got += n;
    }
    return got;
  }

  // Writes `message` whole. Throws kj::Exception on errors.
  void Write(kj::ArrayPtr<const capnp::word> message) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(message.begin());
    size_t left = message.size() * sizeof(capnp::word);
    while (left > 0) {
      size_t n = 0;
      if (ssl_ != nullptr) {
        if (SSL_write_ex(ssl_, bytes, left, &n) != 1) KJ_FAIL_REQUIRE("SSL_write", OpenSslErrors());
      } else {
        const ssize_t w = ::send(fd_, bytes, left, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) KJ_FAIL_SYSCALL("send", errno);
        n = static_cast<size_t>(w);
      }
      bytes += n;
      left -= n;
    }
  }

  // Ends both directions now (a failed handshake: the peer's blocked read or handshake returns).
  void Abort() { shutdown(fd_, SHUT_RDWR); }

  // Tells the peer that no more messages come (its next read finds the end).
  void ShutdownWrite() {
    if (ssl_ != nullptr) SSL_shutdown(ssl_);
    shutdown(fd_, SHUT_WR);
  }

 private:
  int fd_;
  SSL* ssl_ = nullptr;
};

// The echo: reads ChallengeRounds (with the RPC layer's bounds) and answers each with its round
// index and as many labels as it asks, from `labels`, until the stream ends or fails.
void Echo(BlockingStream& stream, const std::vector<uint8_t>& labels) {
  kj::BufferedInputStreamWrapper buffered(stream);
  while (buffered.tryGetReadBuffer().size() > 0) {
    capnp::InputStreamMessageReader reader(buffered, proto::RpcReaderOptions());
    auto round = reader.getRoot<proto::ChallengeRound>();
    capnp::MallocMessageBuilder message(FloorAnswerWords(round, labels));
    BuildFloorAnswer(round, labels, message);
    stream.Write(capnp::messageToFlatArray(message));
  }
}

// The client's rounds: each q random indices (a seeded draw) in a fresh message, written whole,
// then the answer read and checked for its round index and size.
StatusOr<RoundPathResult> Rounds(BlockingStream& stream, const RoundBenchOptions& options, const std::string& path,
                                 clockid_t echo_cpu_clock) {
  const uint32_t q = options.labels_per_round;
  std::mt19937_64 random(1);
  std::vector<int64_t> round_ns, build_ns;
  round_ns.reserve(options.rounds);
  build_ns.reserve(options.rounds);
  kj::BufferedInputStreamWrapper buffered(stream);
  const int64_t client_cpu_before = CpuClockNs(CLOCK_THREAD_CPUTIME_ID);
  const int64_t echo_cpu_before = CpuClockNs(echo_cpu_clock);
  try {
    for (uint32_t r = 0; r < options.rounds; ++r) {
      const int64_t t0 = MonotonicNs();
      capnp::MallocMessageBuilder message(q + 32);
      BuildFloorRound(message, r, q, options.session_labels, random);
      kj::Array<capnp::word> flat = capnp::messageToFlatArray(message);
      const int64_t t1 = MonotonicNs();
      stream.Write(flat);
      capnp::InputStreamMessageReader reader(buffered, proto::RpcReaderOptions());
      const int64_t t2 = MonotonicNs();
      WP_RETURN_IF_ERROR(CheckFloorAnswer(reader.getRoot<proto::RoundAnswer>(), r, q));
      build_ns.push_back(t1 - t0);
      round_ns.push_back(t2 - t1);
    }
  } catch (const kj::Exception& e) {
    return UnavailableError(path + ": " + e.getDescription().cStr());
  }
  RoundPathResult out =
      FloorResult(path, options, std::move(round_ns), CpuClockNs(CLOCK_THREAD_CPUTIME_ID) - client_cpu_before);
  out.client_build = PercentilesOf(std::move(build_ns));
  out.agent_cpu_us = static_cast<double>(CpuClockNs(echo_cpu_clock) - echo_cpu_before) / 1000.0 / options.rounds;
  return out;
}

// A listening TCP socket on 127.0.0.1 and its port. Errors: UNAVAILABLE.
StatusOr<int> ListenLoopback(unsigned* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return UnavailableError("socket: " + std::string(strerror(errno)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd, 1) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int saved = errno;
    close(fd);
    return UnavailableError("listen on 127.0.0.1: " + std::string(strerror(saved)));
  }
  *port = ntohs(address.sin_port);
  return fd;
}

void NoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

bool IsBlockingFloorPath(const std::string& path) {
  return path == "floor-blocking-in-process" || path == "floor-blocking-tcp-loopback-plaintext" ||
         path == "floor-blocking-tcp-loopback-tls13";
}

StatusOr<RoundPathResult> MeasureBlockingFloor(const RoundBenchOptions& options, const std::string& path,
                                               const proto::KeyPair& echo_key, const proto::KeyPair& client_key) {
  if (!IsBlockingFloorPath(path)) return InvalidArgumentError("not a blocking floor path: '" + path + "'");
  const bool tls = path == "floor-blocking-tcp-loopback-tls13";
  SslContext client_context, echo_context;
  if (tls) {
    WP_ASSIGN_OR_RETURN(client_context, TlsContext(false, client_key, echo_key));
    WP_ASSIGN_OR_RETURN(echo_context, TlsContext(true, echo_key, client_key));
  }
  const std::vector<uint8_t> labels(size_t{options.labels_per_round} * kLabelBytes, 0x5a);

  // The echo's end: a socketpair's other half now, or the accepted TCP connection on its thread.
  int client_fd = -1, echo_fd = -1, listen_fd = -1;
  unsigned port = 0;
  if (path == "floor-blocking-in-process") {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      return UnavailableError("socketpair: " + std::string(strerror(errno)));
    }
    client_fd = fds[0];
    echo_fd = fds[1];
  } else {
    WP_ASSIGN_OR_RETURN(listen_fd, ListenLoopback(&port));
  }
  std::promise<Status> echo_ready;
  std::future<Status> ready = echo_ready.get_future();
  std::thread echo([&]() {
    // A peer gone mid-write must fail the write, not kill the process (SSL_write uses write(2)).
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    if (listen_fd >= 0) {
      pollfd waiting{listen_fd, POLLIN, 0};
      if (poll(&waiting, 1, kAcceptTimeoutMs) == 1) echo_fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      close(listen_fd);
      if (echo_fd < 0) {
        echo_ready.set_value(UnavailableError("echo: no client connected within 30 s"));
        return;
      }
      NoDelay(echo_fd);
    }
    BlockingStream stream(echo_fd);
    if (tls) {
      Status handshake = stream.StartTls(echo_context.get(), true, "");
      if (!handshake.ok()) {
        echo_ready.set_value(handshake);
        return;
      }
    }
    echo_ready.set_value(Status::Ok());
    try {
      Echo(stream, labels);
    } catch (const kj::Exception&) {
      // The client's rounds report what they saw; closing `stream` ends theirs too.
    }
  });
  StatusOr<RoundPathResult> result = InternalError("not run");
  {
    if (listen_fd >= 0) {
      client_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address.sin_port = htons(static_cast<uint16_t>(port));
      if (client_fd >= 0 && connect(client_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
        NoDelay(client_fd);
      } else {
        result = UnavailableError(path + ": connect: " + strerror(errno));
      }
    }
    BlockingStream stream(client_fd);
    Status handshake = Status::Ok();
    if (tls && client_fd >= 0) {
      handshake =
          stream.StartTls(client_context.get(), false, proto::CertificateName(proto::KeyIdOf(echo_key.public_key)));
    }
    // A connect that failed leaves the echo to its 30 s accept timeout; one that succeeded gets its
    // handshake's verdict from both ends.
    if (client_fd >= 0 && result.status().code() == StatusCode::kInternal) {
      if (!handshake.ok()) stream.Abort();
      Status echo_status = ready.get();
      clockid_t echo_cpu;
      if (!handshake.ok()) {
        result = handshake.WithContext(path);
      } else if (!echo_status.ok()) {
        result = echo_status.WithContext(path);
      } else if (pthread_getcpuclockid(echo.native_handle(), &echo_cpu) != 0) {
        result = InternalError(path + ": no CPU clock for the echo's thread");
      } else {
        result = Rounds(stream, options, path, echo_cpu);
      }
    }
    stream.ShutdownWrite();
  }  // closing the client's end ends the echo's loop
  echo.join();
  return result;
}

}  // namespace wipeproof
