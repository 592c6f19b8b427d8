#include "common/metrics_http_server.h"

#include <kj/async-unix.h>
#include <kj/compat/http.h>

#include <cstdio>
#include <future>
#include <mutex>
#include <utility>

namespace wipeproof {

namespace {

constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";

class MetricsService final : public kj::HttpService {
 public:
  MetricsService(const MetricsRegistry& registry, const kj::HttpHeaderTable& table)
      : registry_(registry), table_(table) {}

  kj::Promise<void> request(kj::HttpMethod method, kj::StringPtr url, const kj::HttpHeaders&, kj::AsyncInputStream&,
                            Response& response) override {
    std::string path(url.cStr());
    path = path.substr(0, path.find('?'));
    kj::HttpHeaders headers(table_);
    uint code = 200;
    kj::StringPtr status_text = "OK";
    std::string body;
    if (path != "/metrics" && path != "/healthz") {
      code = 404;
      status_text = "Not Found";
      body = "not found: this server answers /metrics and /healthz\n";
      headers.set(kj::HttpHeaderId::CONTENT_TYPE, "text/plain; charset=utf-8");
    } else if (method != kj::HttpMethod::GET && method != kj::HttpMethod::HEAD) {
      code = 405;
      status_text = "Method Not Allowed";
      body = "only GET and HEAD\n";
      headers.set(kj::HttpHeaderId::CONTENT_TYPE, "text/plain; charset=utf-8");
      headers.add("Allow", "GET, HEAD");
    } else if (path == "/metrics") {
      body = registry_.Render();
      headers.set(kj::HttpHeaderId::CONTENT_TYPE, kMetricsContentType);
    } else {
      body = "ok\n";
      headers.set(kj::HttpHeaderId::CONTENT_TYPE, "text/plain; charset=utf-8");
    }
    auto stream = response.send(code, status_text, headers, static_cast<uint64_t>(body.size()));
    if (method == kj::HttpMethod::HEAD || body.empty()) return kj::READY_NOW;
    auto text = kj::heapString(body.data(), body.size());
    auto write = stream->write(text.begin(), text.size());
    return write.attach(kj::mv(stream), kj::mv(text));
  }

 private:
  const MetricsRegistry& registry_;
  const kj::HttpHeaderTable& table_;
};

}  // namespace

Status CheckHostPortFlag(const std::string& address, const std::string& flag, const std::string& example) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    return InvalidArgumentError(flag + " must be HOST:PORT, e.g. " + example + " (port 0: any free port), not '" +
                                address + "'");
  }
  // getaddrinfo would take a port over 65535 modulo 2^16.
  const std::string port = address.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoul(port) > 65535) {
    return InvalidArgumentError(flag + ": the port of '" + address + "' is not a number from 0 to 65535");
  }
  return Status::Ok();
}

struct MetricsHttpServer::Impl {
  Impl(const MetricsRegistry& registry, kj::AsyncIoProvider& io_provider, kj::Timer& timer_in)
      : io(io_provider), timer(timer_in), service(registry, table), server(timer_in, table, service), tasks(errors) {}

  // Accepts one connection at a time, forever: a connection over kMetricsMaxConnections is closed at
  // once, each one lives at most kMetricsConnectionLifetime (a client that pipelines requests and
  // never reads cannot hold it), and a failed accept (e.g. no file descriptors left) is retried
  // after kMetricsAcceptRetry instead of ending the server.
  kj::Promise<void> AcceptLoop(std::string address) {
    return listener->accept()
        .then(
            [this](kj::Own<kj::AsyncIoStream> stream) -> kj::Promise<void> {
              if (active >= kMetricsMaxConnections) return kj::READY_NOW;  // dropped: closes the connection
              ++active;
              tasks.add(server.listenHttp(kj::mv(stream))
                            .exclusiveJoin(timer.afterDelay(kMetricsConnectionLifetime))
                            .then([this]() { --active; }, [this](kj::Exception&&) { --active; }));
              return kj::READY_NOW;
            },
            [this, address](kj::Exception&& e) -> kj::Promise<void> {
              std::fprintf(stderr, "metrics on %s: accept failed (%s); retrying in 1 s\n", address.c_str(),
                           e.getDescription().cStr());
              return timer.afterDelay(kMetricsAcceptRetry);
            })
        .then([this, address]() { return AcceptLoop(address); });
  }

  struct Errors final : kj::TaskSet::ErrorHandler {
    void taskFailed(kj::Exception&&) override {}  // a connection's failure is its own
  };

  kj::AsyncIoProvider& io;
  kj::Timer& timer;
  kj::HttpHeaderTable table;
  MetricsService service;
  kj::HttpServer server;
  Errors errors;
  kj::TaskSet tasks;
  size_t active = 0;
  kj::Own<kj::ConnectionReceiver> listener;
  kj::Promise<void> serving = nullptr;
};

MetricsHttpServer::MetricsHttpServer(const MetricsRegistry& registry, kj::AsyncIoProvider& io, kj::Timer& timer)
    : impl_(std::make_unique<Impl>(registry, io, timer)) {}

MetricsHttpServer::~MetricsHttpServer() = default;

StatusOr<unsigned> MetricsHttpServer::Listen(const std::string& address, kj::WaitScope& wait_scope) {
  if (Status s = CheckHostPortFlag(address, "--metrics_listen"); !s.ok()) return s;
  try {
    auto parsed = impl_->io.getNetwork().parseAddress(address.c_str()).wait(wait_scope);
    impl_->listener = parsed->listen();
  } catch (const kj::Exception& e) {
    const std::string what = e.getDescription().cStr();
    if (what.find("Address already in use") != std::string::npos) {
      return UnavailableError("cannot listen on " + address +
                              " for metrics: the address is already in use (another process holds the port; choose "
                              "another --metrics_listen)");
    }
    return UnavailableError("cannot listen on " + address + " for metrics: " + what);
  }
  const unsigned port = impl_->listener->getPort();
  impl_->serving =
      impl_->AcceptLoop(address + " (port " + std::to_string(port) + ")").eagerlyEvaluate([address](kj::Exception&& e) {
        std::fprintf(stderr, "metrics on %s stopped: %s\n", address.c_str(), e.getDescription().cStr());
      });
  return port;
}

// ---------------------------------------------------------------------------------------------

struct MetricsHttpThread::Shared {
  std::mutex mu;
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> stop;  // guarded by mu; set while serving
  bool stopping = false;                                // guarded by mu
};

MetricsHttpThread::MetricsHttpThread(const MetricsRegistry& registry)
    : registry_(registry), shared_(std::make_shared<Shared>()) {}

MetricsHttpThread::~MetricsHttpThread() {
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->stopping = true;
    if (shared_->stop) shared_->stop->fulfill();
  }
  if (thread_.joinable()) thread_.join();
}

StatusOr<unsigned> MetricsHttpThread::Start(const std::string& address) {
  if (Status s = CheckHostPortFlag(address, "--metrics_listen"); !s.ok()) return s;
  std::promise<StatusOr<unsigned>> started;
  std::future<StatusOr<unsigned>> result = started.get_future();
  thread_ = std::thread([this, address, &started, shared = shared_] {
    kj::AsyncIoContext io = kj::setupAsyncIo();
    MetricsHttpServer server(registry_, *io.provider, io.provider->getTimer());
    auto stop = kj::newPromiseAndCrossThreadFulfiller<void>();
    StatusOr<unsigned> port = server.Listen(address, io.waitScope);
    const bool ok = port.ok();
    {
      std::lock_guard<std::mutex> lock(shared->mu);
      if (ok && !shared->stopping) shared->stop = kj::mv(stop.fulfiller);
    }
    started.set_value(port);  // `started` is not touched after this
    if (!ok) return;
    stop.promise.wait(io.waitScope);
    std::lock_guard<std::mutex> lock(shared->mu);
    shared->stop = nullptr;
  });
  StatusOr<unsigned> port = result.get();
  if (!port.ok()) thread_.join();
  return port;
}

}  // namespace wipeproof
