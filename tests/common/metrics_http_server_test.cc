// The metrics endpoint on KJ's HTTP server, fetched by KJ's HTTP client over TCP loopback: on the
// test's own event loop (as the agent runs it) and on a thread of its own (as the challenger does).
#include "common/metrics_http_server.h"

#include <gtest/gtest.h>
#include <kj/async-io.h>
#include <kj/compat/http.h>

#include <memory>
#include <string>
#include <vector>

namespace wipeproof {
namespace {

struct Reply {
  unsigned code = 0;
  std::string content_type;
  std::string body;
};

Reply Fetch(kj::AsyncIoContext& io, unsigned port, kj::HttpMethod method, const std::string& path) {
  kj::HttpHeaderTable table;
  auto address = io.provider->getNetwork().parseAddress("127.0.0.1", port).wait(io.waitScope);
  auto client = kj::newHttpClient(io.provider->getTimer(), table, *address);
  kj::HttpHeaders headers(table);
  auto request = client->request(method, path.c_str(), headers);
  auto response = request.response.wait(io.waitScope);
  Reply out;
  out.code = response.statusCode;
  KJ_IF_MAYBE (type, response.headers->get(kj::HttpHeaderId::CONTENT_TYPE)) {
    out.content_type = type->cStr();
  }
  out.body = response.body->readAllText().wait(io.waitScope).cStr();
  return out;
}

class MetricsHttpServerTest : public ::testing::Test {
 protected:
  MetricsHttpServerTest() {
    registry_.AddCounter("demo_requests_total", "Requests.", {"path"}).WithLabels({"/x"}).Increment(7);
  }
  MetricsRegistry registry_;
  // Held by pointer: kj's members have throwing destructors, a gtest fixture's may not throw.
  std::unique_ptr<kj::AsyncIoContext> io_holder_ = std::make_unique<kj::AsyncIoContext>(kj::setupAsyncIo());
  kj::AsyncIoContext& io_ = *io_holder_;
};

TEST_F(MetricsHttpServerTest, ServesMetricsHealthAndNotFoundOnTheCallersLoop) {
  MetricsHttpServer server(registry_, *io_.provider, io_.provider->getTimer());
  auto port = server.Listen("127.0.0.1:0", io_.waitScope);
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  ASSERT_GT(*port, 0u);

  Reply metrics = Fetch(io_, *port, kj::HttpMethod::GET, "/metrics");
  EXPECT_EQ(metrics.code, 200u);
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(metrics.body,
            "# HELP demo_requests_total Requests.\n"
            "# TYPE demo_requests_total counter\n"
            "demo_requests_total{path=\"/x\"} 7\n");
  // A query string is ignored, each scrape renders anew.
  registry_.AddGauge("demo_up", "Up.", {}).WithLabels({}).Set(1);
  EXPECT_NE(Fetch(io_, *port, kj::HttpMethod::GET, "/metrics?x=1").body.find("demo_up 1\n"), std::string::npos);

  Reply health = Fetch(io_, *port, kj::HttpMethod::GET, "/healthz");
  EXPECT_EQ(health.code, 200u);
  EXPECT_EQ(health.body, "ok\n");

  Reply missing = Fetch(io_, *port, kj::HttpMethod::GET, "/");
  EXPECT_EQ(missing.code, 404u);
  Reply post = Fetch(io_, *port, kj::HttpMethod::POST, "/metrics");
  EXPECT_EQ(post.code, 405u);
  Reply head = Fetch(io_, *port, kj::HttpMethod::HEAD, "/healthz");
  EXPECT_EQ(head.code, 200u);
  EXPECT_EQ(head.body, "");
}

// A flood of connections that send nothing cannot hold more than kMetricsMaxConnections: the next
// one is closed at once (reads end), and once the flood leaves the endpoint answers again.
// threat-model: T-METRICS-FLOOD
TEST_F(MetricsHttpServerTest, ConnectionsOverTheCapAreClosedAndTheServerRecovers) {
  MetricsHttpServer server(registry_, *io_.provider, io_.provider->getTimer());
  auto port = server.Listen("127.0.0.1:0", io_.waitScope);
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  auto address = io_.provider->getNetwork().parseAddress("127.0.0.1", *port).wait(io_.waitScope);
  std::vector<kj::Own<kj::AsyncIoStream>> idle;
  for (size_t i = 0; i < kMetricsMaxConnections; ++i) idle.push_back(address->connect().wait(io_.waitScope));
  // Let the server accept them all.
  io_.provider->getTimer().afterDelay(50 * kj::MILLISECONDS).wait(io_.waitScope);
  auto extra = address->connect().wait(io_.waitScope);
  char byte;
  const size_t got =
      extra->tryRead(&byte, 1, 1)
          .exclusiveJoin(io_.provider->getTimer().afterDelay(2 * kj::SECONDS).then([]() -> size_t { return 99; }))
          .wait(io_.waitScope);
  EXPECT_EQ(got, 0u) << "the connection over the cap was not closed";
  idle.clear();
  io_.provider->getTimer().afterDelay(50 * kj::MILLISECONDS).wait(io_.waitScope);
  EXPECT_EQ(Fetch(io_, *port, kj::HttpMethod::GET, "/healthz").body, "ok\n");
}

TEST_F(MetricsHttpServerTest, APortInUseSaysSoInWords) {
  MetricsHttpServer first(registry_, *io_.provider, io_.provider->getTimer());
  auto port = first.Listen("127.0.0.1:0", io_.waitScope);
  ASSERT_TRUE(port.ok());
  MetricsHttpServer second(registry_, *io_.provider, io_.provider->getTimer());
  auto again = second.Listen("127.0.0.1:" + std::to_string(*port), io_.waitScope);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(again.status().message().find("already in use"), std::string::npos) << again.status().message();

  MetricsHttpServer third(registry_, *io_.provider, io_.provider->getTimer());
  auto bad = third.Listen("9401", io_.waitScope);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--metrics_listen must be HOST:PORT"), std::string::npos);
}

TEST_F(MetricsHttpServerTest, ServesFromAThreadOfItsOwnAndStopsWhenDestroyed) {
  unsigned port = 0;
  {
    MetricsHttpThread thread(registry_);
    auto started = thread.Start("127.0.0.1:0");
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    port = *started;
    Reply metrics = Fetch(io_, port, kj::HttpMethod::GET, "/metrics");
    EXPECT_EQ(metrics.code, 200u);
    EXPECT_NE(metrics.body.find("demo_requests_total{path=\"/x\"} 7\n"), std::string::npos);

    MetricsHttpThread taken(registry_);
    auto refused = taken.Start("127.0.0.1:" + std::to_string(port));
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("already in use"), std::string::npos);
  }
  // Stopped: the port is free again.
  MetricsHttpThread again(registry_);
  auto restarted = again.Start("127.0.0.1:" + std::to_string(port));
  EXPECT_TRUE(restarted.ok()) << restarted.status().ToString();
}

}  // namespace
}  // namespace wipeproof
