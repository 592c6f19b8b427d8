// Serves a MetricsRegistry over HTTP with KJ's HTTP server (kj/compat/http.h):
//   GET /metrics   200, Content-Type "text/plain; version=0.0.4; charset=utf-8", registry.Render()
//   GET /healthz   200, "ok\n" (the process is up and its event loop turns)
//   other paths    404; other methods than GET and HEAD on these paths: 405
// A query string is ignored. Requests with a body, malformed requests and slow clients are KJ's
// to refuse (400, header timeout 15 s). At most kMetricsMaxConnections connections at once (more
// are closed at once), each closed after kMetricsConnectionLifetime whatever it does, and a failed
// accept (no file descriptors left) is retried each second: a flood of clients costs the scraper
// its answers for a while, never the process its descriptors or its metrics for good. There is no
// authentication: bind it to an address only the scraper reaches (docs/metrics.md).
//
// Two ways to run it:
//   MetricsHttpServer  on the calling thread's KJ event loop (tests).
//   MetricsHttpThread  on a thread of its own with its own event loop: both `serve`s (the agent's
//                      round loop never renders metrics, so scrapes cannot delay a round).
//
// Thread-safety: MetricsHttpServer belongs to the thread whose event loop it was created on;
// MetricsHttpThread's methods may be called from any one thread. Both read the registry, which is
// thread-safe.
#pragma once

#include <kj/async-io.h>

#include <memory>
#include <string>
#include <thread>

#include "common/metrics_registry.h"
#include "common/status.h"

namespace wipeproof {

inline constexpr size_t kMetricsMaxConnections = 16;
inline constexpr kj::Duration kMetricsConnectionLifetime = 10 * kj::SECONDS;
inline constexpr kj::Duration kMetricsAcceptRetry = 1 * kj::SECONDS;

class MetricsHttpServer {
 public:
  // REQUIRES: `registry`, `io` and `timer` outlive the server; called on the event loop's thread.
  MetricsHttpServer(const MetricsRegistry& registry, kj::AsyncIoProvider& io, kj::Timer& timer);
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // Binds `address` (HOST:PORT; port 0 picks a free one) and serves from then on while the event
  // loop runs; returns the port bound. Waits on `wait_scope` for the address to resolve.
  // Errors: INVALID_ARGUMENT "--metrics_listen must be HOST:PORT ..."; UNAVAILABLE "cannot listen on
  // ADDR for metrics: the address is already in use (another process holds the port)" or with
  // the system's words for any other failure. Call once.
  StatusOr<unsigned> Listen(const std::string& address, kj::WaitScope& wait_scope);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class MetricsHttpThread {
 public:
  // REQUIRES: `registry` outlives this object.
  explicit MetricsHttpThread(const MetricsRegistry& registry);
  // Stops serving and joins the thread.
  ~MetricsHttpThread();
  MetricsHttpThread(const MetricsHttpThread&) = delete;
  MetricsHttpThread& operator=(const MetricsHttpThread&) = delete;

  // Starts the thread, binds `address` there and returns the port bound once it serves. Errors as
  // MetricsHttpServer::Listen (the thread has then ended). Call once.
  StatusOr<unsigned> Start(const std::string& address);

 private:
  struct Shared;
  const MetricsRegistry& registry_;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

// OK when `address` is "HOST:PORT" with a port from 0 to 65535; else INVALID_ARGUMENT naming `flag`
// and giving `example`.
Status CheckHostPortFlag(const std::string& address, const std::string& flag,
                          const std::string& example = "127.0.0.1:9401");

}  // namespace wipeproof
