// HandshakeGuardStream (prover/agent/handshake_guard.h): before the peer is authenticated, reads
// stop at the byte budget and each read's bytes wait for the pace; afterwards the stream is plain.
#include "prover/agent/handshake_guard.h"

#include <gtest/gtest.h>
#include <kj/async-io.h>

#include <vector>

namespace wipeproof {
namespace {

constexpr size_t kBudget = 16 * 1024;

// threat-model: T-PREAUTH-FRAMES
TEST(HandshakeGuardTest, ReadsStopAtTheBudgetBeforeAuthentication) {
  auto io = kj::setupAsyncIo();
  auto pipe = io.provider->newTwoWayPipe();
  uint64_t counted = 0;
  HandshakeGuardStream guard(
      kj::mv(pipe.ends[0]), kBudget, []() -> kj::Promise<void> { return kj::READY_NOW; }, &counted);
  const std::vector<char> sent(64 * 1024, 'x');
  // Then EOF: a guard that read everything would see it and end the loop (no hang) unrefused.
  kj::AsyncIoStream& peer = *pipe.ends[1];
  auto writing = peer.write(sent.data(), sent.size())
                     .then([&peer]() { peer.shutdownWrite(); })
                     .eagerlyEvaluate([](kj::Exception&&) {});
  std::vector<char> buffer(8192);
  size_t total = 0;
  bool refused = false;
  while (!refused) {
    try {
      const size_t n = guard.tryRead(buffer.data(), 1, buffer.size()).wait(io.waitScope);
      if (n == 0) break;
      total += n;
    } catch (const kj::Exception& e) {
      refused = true;
      EXPECT_NE(std::string(e.getDescription().cStr()).find("more than the handshake allows"), std::string::npos);
    }
  }
  EXPECT_TRUE(refused);
  EXPECT_EQ(total, kBudget);
  EXPECT_EQ(counted, kBudget);
}

TEST(HandshakeGuardTest, AfterAuthenticationReadsAreNeitherLimitedNorCounted) {
  auto io = kj::setupAsyncIo();
  auto pipe = io.provider->newTwoWayPipe();
  uint64_t counted = 0;
  HandshakeGuardStream guard(
      kj::mv(pipe.ends[0]), kBudget, []() -> kj::Promise<void> { return kj::READY_NOW; }, &counted);
  guard.Authenticated();
  const std::vector<char> sent(64 * 1024, 'y');
  auto writing = pipe.ends[1]->write(sent.data(), sent.size());
  std::vector<char> received(sent.size());
  guard.read(received.data(), received.size()).wait(io.waitScope);
  writing.wait(io.waitScope);
  EXPECT_EQ(received, sent);
  EXPECT_EQ(counted, 0u);
}

// threat-model: T-HANDSHAKE-FLOOD
TEST(HandshakeGuardTest, EachReadsBytesWaitForThePace) {
  auto io = kj::setupAsyncIo();
  auto pipe = io.provider->newTwoWayPipe();
  uint64_t counted = 0;
  int paces = 0;
  kj::Own<kj::PromiseFulfiller<void>> turn;
  HandshakeGuardStream guard(
      kj::mv(pipe.ends[0]), kBudget,
      [&]() -> kj::Promise<void> {
        ++paces;
        auto paf = kj::newPromiseAndFulfiller<void>();
        turn = kj::mv(paf.fulfiller);
        return kj::mv(paf.promise);
      },
      &counted);
  pipe.ends[1]->write("hello", 5).wait(io.waitScope);
  char buffer[8];
  auto reading = guard.tryRead(buffer, 1, sizeof(buffer));
  EXPECT_FALSE(reading.poll(io.waitScope));  // read, but held back
  EXPECT_EQ(paces, 1);
  EXPECT_EQ(counted, 5u);
  turn->fulfill();
  EXPECT_EQ(reading.wait(io.waitScope), 5u);
}

}  // namespace
}  // namespace wipeproof
