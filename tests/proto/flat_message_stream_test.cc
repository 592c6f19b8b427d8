// proto/flat_message_stream.h: whole messages in capnp's stream framing, each written in one piece
// and read in as few reads as the stream allows, under the reader's bounds, on a socket pair.
#include "proto/flat_message_stream.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>
#include <kj/async-io.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "proto/wipe.capnp.h"

namespace wipeproof::proto {
namespace {

// Counts the calls that reach the stream below.
class CountingStream final : public kj::AsyncIoStream {
 public:
  explicit CountingStream(kj::AsyncIoStream& inner) : inner_(inner) {}
  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override {
    ++reads;
    return inner_.tryRead(buffer, min_bytes, max_bytes);
  }
  kj::Promise<void> write(const void* buffer, size_t size) override {
    ++writes;
    return inner_.write(buffer, size);
  }
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override {
    writes += pieces.size();
    return inner_.write(pieces);
  }
  kj::Promise<void> whenWriteDisconnected() override { return inner_.whenWriteDisconnected(); }
  void shutdownWrite() override { inner_.shutdownWrite(); }
  void abortRead() override { inner_.abortRead(); }

  size_t reads = 0;
  size_t writes = 0;  // pieces written

 private:
  kj::AsyncIoStream& inner_;
};

// A round of `q` label indices 0, 7, 14, ... with round index `index`.
void BuildRound(capnp::MessageBuilder& message, uint32_t index, uint32_t q) {
  auto round = message.initRoot<ChallengeRound>();
  round.setRoundIndex(index);
  auto list = round.initDevices(1)[0].initLabelIndices(q);
  for (uint32_t i = 0; i < q; ++i) list.set(i, uint64_t{7} * i);
}

void ExpectRound(capnp::MessageReader& reader, uint32_t index, uint32_t q) {
  auto round = reader.getRoot<ChallengeRound>();
  EXPECT_EQ(round.getRoundIndex(), index);
  ASSERT_EQ(round.getDevices().size(), 1u);
  auto list = round.getDevices()[0].getLabelIndices();
  ASSERT_EQ(list.size(), q);
  for (uint32_t i = 0; i < q; ++i) ASSERT_EQ(list[i], uint64_t{7} * i) << i;
}

std::vector<kj::byte> Flat(capnp::MessageBuilder& message) {
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return std::vector<kj::byte>(bytes.begin(), bytes.end());
}

// A segment table announcing one segment of `segment_words` words, then that many zero words.
std::vector<kj::byte> OneSegmentFrame(uint32_t segment_words, bool with_body) {
  std::vector<kj::byte> bytes(8 + (with_body ? size_t{segment_words} * 8 : 0), 0);
  std::memcpy(bytes.data() + 4, &segment_words, 4);
  return bytes;
}

class FlatMessageStreamTest : public ::testing::Test {
 protected:
  FlatMessageStreamTest() : io_(kj::setupAsyncIo()), pipe_(io_.provider->newTwoWayPipe()), counted_(*pipe_.ends[1]) {}
  ~FlatMessageStreamTest() noexcept override = default;

  void WriteRaw(const std::vector<kj::byte>& bytes) {
    pipe_.ends[0]->write(bytes.data(), bytes.size()).wait(io_.waitScope);
  }

  // Read() with a limit: a stream that waits for bytes it will never get fails the test, not hangs.
  kj::Maybe<capnp::MessageReader&> ReadWithin(FlatMessageStream& stream, kj::Duration limit = 10 * kj::SECONDS) {
    return stream.Read()
        .exclusiveJoin(io_.provider->getTimer().afterDelay(limit).then(
            []() -> kj::Maybe<capnp::MessageReader&> { KJ_FAIL_REQUIRE("Read() still waiting at the limit"); }))
        .wait(io_.waitScope);
  }

  kj::AsyncIoContext io_;
  kj::TwoWayPipe pipe_;  // ends[0]: the peer (raw bytes); ends[1]: under the stream tested
  CountingStream counted_;
};

TEST_F(FlatMessageStreamTest, AMessageThatArrivedWholeIsReadInOneCall) {
  capnp::MallocMessageBuilder sent;
  BuildRound(sent, 3, 256);
  WriteRaw(Flat(sent));
  FlatMessageStream stream(counted_, capnp::ReaderOptions());
  KJ_IF_MAYBE (reader, ReadWithin(stream)) {
    ExpectRound(*reader, 3, 256);
  } else {
    FAIL() << "no message";
  }
  EXPECT_EQ(counted_.reads, 1u);
}

TEST_F(FlatMessageStreamTest, AMessageOfManySegmentsIsWrittenInOnePieceInCapnpsFraming) {
  // A first segment of one word and fixed-size segments after it: the round spans several.
  capnp::MallocMessageBuilder sent(1, capnp::AllocationStrategy::FIXED_SIZE);
  BuildRound(sent, 9, 300);
  ASSERT_GT(sent.getSegmentsForOutput().size(), 2u);
  const std::vector<kj::byte> expected = Flat(sent);
  FlatMessageStream stream(counted_, capnp::ReaderOptions());
  stream.Write(sent).wait(io_.waitScope);
  EXPECT_EQ(counted_.writes, 1u);
  std::vector<kj::byte> got(expected.size());
  pipe_.ends[0]->read(got.data(), got.size()).wait(io_.waitScope);
  EXPECT_EQ(got, expected);
  // And it reads back whole through another stream.
  pipe_.ends[0]->write(got.data(), got.size()).wait(io_.waitScope);
  KJ_IF_MAYBE (reader, ReadWithin(stream)) {
    ExpectRound(*reader, 9, 300);
  } else {
    FAIL() << "no message";
  }
}

TEST_F(FlatMessageStreamTest, AMessageSentByteByByteIsReadOnlyOnceWhole) {
  capnp::MallocMessageBuilder sent(1, capnp::AllocationStrategy::FIXED_SIZE);  // a table of several words
  BuildRound(sent, 5, 20);
  const std::vector<kj::byte> bytes = Flat(sent);
  FlatMessageStream stream(*pipe_.ends[1], capnp::ReaderOptions());
  auto read = stream.Read();
  for (size_t i = 0; i < bytes.size(); ++i) {
    ASSERT_FALSE(read.poll(io_.waitScope)) << "ready after " << i << " of " << bytes.size() << " bytes";
    pipe_.ends[0]->write(&bytes[i], 1).wait(io_.waitScope);
  }
  KJ_IF_MAYBE (reader, read.wait(io_.waitScope)) {
    ExpectRound(*reader, 5, 20);
  } else {
    FAIL() << "no message";
  }
}

TEST_F(FlatMessageStreamTest, MessagesThatArrivedTogetherAreReadInTurn) {
  capnp::MallocMessageBuilder first, second;
  BuildRound(first, 1, 10);
  BuildRound(second, 2, 40);
  std::vector<kj::byte> both = Flat(first);
  const std::vector<kj::byte> tail = Flat(second);
  both.insert(both.end(), tail.begin(), tail.end());
  WriteRaw(both);
  FlatMessageStream stream(counted_, capnp::ReaderOptions());
  KJ_IF_MAYBE (reader, ReadWithin(stream)) {
    ExpectRound(*reader, 1, 10);
  } else {
    FAIL() << "no first message";
  }
  KJ_IF_MAYBE (reader, ReadWithin(stream)) {
    ExpectRound(*reader, 2, 40);
  } else {
    FAIL() << "no second message";
  }
  EXPECT_EQ(counted_.reads, 1u) << "the second was buffered with the first";
}

TEST_F(FlatMessageStreamTest, TheEndBetweenMessagesIsNullAndInsideOneIsDisconnected) {
  capnp::MallocMessageBuilder sent;
  BuildRound(sent, 4, 8);
  WriteRaw(Flat(sent));
  pipe_.ends[0]->shutdownWrite();
  FlatMessageStream stream(*pipe_.ends[1], capnp::ReaderOptions());
  EXPECT_TRUE(ReadWithin(stream) != nullptr);
  EXPECT_TRUE(ReadWithin(stream) == nullptr);

  auto cut = io_.provider->newTwoWayPipe();
  std::vector<kj::byte> half = Flat(sent);
  half.resize(half.size() / 2);
  cut.ends[0]->write(half.data(), half.size()).wait(io_.waitScope);
  cut.ends[0]->shutdownWrite();
  FlatMessageStream cut_stream(*cut.ends[1], capnp::ReaderOptions());
  try {
    cut_stream.Read().wait(io_.waitScope);
    FAIL() << "a message cut off was read";
  } catch (const kj::Exception& e) {
    EXPECT_EQ(e.getType(), kj::Exception::Type::DISCONNECTED) << e.getDescription().cStr();
  }
}

TEST_F(FlatMessageStreamTest, TheSizeLimitHoldsToTheWordAndIsCheckedOnTheTable) {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = 64;
  {
    FlatMessageStream stream(*pipe_.ends[1], options);
    WriteRaw(OneSegmentFrame(64, /*with_body=*/true));
    EXPECT_TRUE(ReadWithin(stream) != nullptr) << "64 words: at the limit";
  }
  // One word over: refused on the table alone, while the peer keeps the connection open and
  // never sends the body.
  auto pipe = io_.provider->newTwoWayPipe();
  FlatMessageStream stream(*pipe.ends[1], options);
  const std::vector<kj::byte> table = OneSegmentFrame(65, /*with_body=*/false);
  pipe.ends[0]->write(table.data(), table.size()).wait(io_.waitScope);
  try {
    ReadWithin(stream);
    FAIL() << "65 words accepted";
  } catch (const kj::Exception& e) {
    EXPECT_EQ(e.getType(), kj::Exception::Type::FAILED);
    EXPECT_NE(std::string(e.getDescription().cStr()).find("message is too large"), std::string::npos)
        << e.getDescription().cStr();
  }
  EXPECT_EQ(stream.input_buffer_bytes(), FlatMessageStream::kInitialBufferBytes) << "no buffer grown for it";
}

TEST_F(FlatMessageStreamTest, SegmentCountsFromTheLimitUpAreRefused) {
  for (uint32_t segments : {511u, 512u, 100000u}) {
    SCOPED_TRACE(segments);
    auto pipe = io_.provider->newTwoWayPipe();
    FlatMessageStream stream(*pipe.ends[1], capnp::ReaderOptions());
    // The table: the count less one, then a size of 0 words per segment, padded to a word; only
    // the first word is sent where the count is refused.
    std::vector<kj::byte> table((segments + 2) / 2 * 8, 0);
    const uint32_t count_minus_one = segments - 1;
    std::memcpy(table.data(), &count_minus_one, 4);
    const size_t sent = segments < FlatMessageStream::kMaxSegments ? table.size() : 8;
    pipe.ends[0]->write(table.data(), sent).wait(io_.waitScope);
    if (segments < FlatMessageStream::kMaxSegments) {
      EXPECT_TRUE(ReadWithin(stream) != nullptr) << "511 empty segments: a valid message";
      continue;
    }
    try {
      ReadWithin(stream);
      FAIL() << segments << " segments accepted";
    } catch (const kj::Exception& e) {
      EXPECT_NE(std::string(e.getDescription().cStr()).find("too many segments"), std::string::npos)
          << e.getDescription().cStr();
    }
  }
}

TEST_F(FlatMessageStreamTest, ABufferGrownForALargeMessageIsGivenBack) {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = uint64_t{1} << 20;  // 8 MiB
  FlatMessageStream stream(*pipe_.ends[1], options);
  const uint32_t large_words = (3u << 20) / 8;  // 3 MiB
  // The peer writes the large frame while this side reads it.
  std::vector<kj::byte> large = OneSegmentFrame(large_words, /*with_body=*/true);
  auto written = pipe_.ends[0]->write(large.data(), large.size());
  EXPECT_TRUE(ReadWithin(stream) != nullptr);
  written.wait(io_.waitScope);
  EXPECT_GE(stream.input_buffer_bytes(), large.size());
  WriteRaw(OneSegmentFrame(4, /*with_body=*/true));
  EXPECT_TRUE(ReadWithin(stream) != nullptr);
  EXPECT_EQ(stream.input_buffer_bytes(), FlatMessageStream::kInitialBufferBytes);

  // A peer that leaves the first bytes of its next message unread after a large one: the buffer
  // is given back all the same, and those bytes stay.
  // 600 KiB (kept: below kKeptBufferBytes), then 1 MiB, for which the buffer doubles to 1.2 MiB,
  // then 3 bytes of the next message, read with it into the room left.
  const std::vector<kj::byte> medium = OneSegmentFrame((600u << 10) / 8, /*with_body=*/true);
  written = pipe_.ends[0]->write(medium.data(), medium.size());
  EXPECT_TRUE(ReadWithin(stream) != nullptr);
  written.wait(io_.waitScope);
  std::vector<kj::byte> large_and_a_start = OneSegmentFrame((1u << 20) / 8, /*with_body=*/true);
  const std::vector<kj::byte> next = OneSegmentFrame(2, /*with_body=*/true);
  large_and_a_start.insert(large_and_a_start.end(), next.begin(), next.begin() + 3);
  written = pipe_.ends[0]->write(large_and_a_start.data(), large_and_a_start.size());
  EXPECT_TRUE(ReadWithin(stream) != nullptr);
  written.wait(io_.waitScope);
  EXPECT_GT(stream.input_buffer_bytes(), FlatMessageStream::kKeptBufferBytes);
  pipe_.ends[0]->write(next.data() + 3, next.size() - 3).wait(io_.waitScope);
  KJ_IF_MAYBE (reader, ReadWithin(stream)) {
    EXPECT_EQ((*reader).getRoot<capnp::AnyPointer>().targetSize().wordCount, 0u);  // the 2-word frame, all zeros
  } else {
    FAIL() << "the message whose start was buffered";
  }
  EXPECT_EQ(stream.input_buffer_bytes(), FlatMessageStream::kInitialBufferBytes);

  capnp::MallocMessageBuilder big;
  big.initRoot<RoundAnswer>().initLabels(3u << 20);
  auto drained = pipe_.ends[0]->readAllBytes();
  stream.Write(big).wait(io_.waitScope);
  EXPECT_GE(stream.output_buffer_bytes(), size_t{3} << 20);
  capnp::MallocMessageBuilder small;
  BuildRound(small, 0, 4);
  stream.Write(small).wait(io_.waitScope);
  EXPECT_EQ(stream.output_buffer_bytes(), FlatMessageStream::kInitialBufferBytes);
  pipe_.ends[1]->shutdownWrite();
  auto bytes = drained.wait(io_.waitScope);
  EXPECT_EQ(bytes.size(),
            capnp::computeSerializedSizeInWords(big) * 8 + capnp::computeSerializedSizeInWords(small) * 8);
}

}  // namespace
}  // namespace wipeproof::proto
