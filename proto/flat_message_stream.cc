#include "proto/flat_message_stream.h"

#include <kj/debug.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace wipeproof::proto {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the segment table is read as little-endian words");

constexpr size_t kWordBytes = sizeof(capnp::word);

uint32_t TableEntry(const kj::byte* table, size_t i) {
  uint32_t value;
  std::memcpy(&value, table + 4 * i, sizeof value);
  return value;
}

// Words of a segment table for `segments` segments: a count, a size per segment, padded to a word.
size_t TableWords(size_t segments) { return (segments + 2) / 2; }

}  // namespace

FlatMessageStream::FlatMessageStream(kj::AsyncIoStream& stream, capnp::ReaderOptions options)
    : stream_(stream),
      options_(options),
      in_(kj::heapArray<capnp::word>(kInitialBufferBytes / kWordBytes)),
      out_(kj::heapArray<capnp::word>(kInitialBufferBytes / kWordBytes)) {
  std::memset(in_.begin(), 0, in_.size() * kWordBytes);
  std::memset(out_.begin(), 0, out_.size() * kWordBytes);
}

kj::Promise<kj::Maybe<capnp::MessageReader&>> FlatMessageStream::Read() {
  reader_.reset();
  begin_ += last_message_bytes_;
  last_message_bytes_ = 0;
  const size_t unread = end_ - begin_;
  if (unread == 0) begin_ = end_ = 0;
  if (in_.size() * kWordBytes > kKeptBufferBytes && unread <= kInitialBufferBytes) {
    // Given back, also when a peer keeps a few bytes of its next message unread after each one.
    auto kept = kj::heapArray<capnp::word>(kInitialBufferBytes / kWordBytes);
    std::memcpy(kept.begin(), reinterpret_cast<const kj::byte*>(in_.begin()) + begin_, unread);
    in_ = kj::mv(kept);
    begin_ = 0;
    end_ = unread;
  }
  return kj::evalNow([this]() { return ParseBuffered(); });  // a table over the bounds rejects
}

size_t FlatMessageStream::WordsOfBufferedMessage() const {
  const size_t have = end_ - begin_;
  if (have < kWordBytes) return 0;
  const kj::byte* table = reinterpret_cast<const kj::byte*>(in_.begin()) + begin_;
  const size_t segments = size_t{TableEntry(table, 0)} + 1;
  KJ_REQUIRE(segments < kMaxSegments, "message has too many segments", segments);
  const size_t table_words = TableWords(segments);
  if (have < table_words * kWordBytes) return 0;
  uint64_t segment_words = 0;
  for (size_t i = 0; i < segments; ++i) segment_words += TableEntry(table, i + 1);
  KJ_REQUIRE(segment_words <= options_.traversalLimitInWords, "message is too large", segment_words,
             options_.traversalLimitInWords);
  return table_words + static_cast<size_t>(segment_words);
}

void FlatMessageStream::ReserveWords(size_t words) {
  const size_t have = end_ - begin_;
  if (in_.size() * kWordBytes - begin_ >= words * kWordBytes) return;
  kj::byte* base = reinterpret_cast<kj::byte*>(in_.begin());
  if (in_.size() >= words) {
    std::memmove(base, base + begin_, have);
  } else {
    // Doubling, but never past the largest message the bounds let in.
    const size_t most_words = static_cast<size_t>(std::min<uint64_t>(options_.traversalLimitInWords, SIZE_MAX / 16)) +
                              TableWords(kMaxSegments);
    auto grown = kj::heapArray<capnp::word>(std::max(words, std::min(in_.size() * 2, most_words)));
    std::memcpy(grown.begin(), base + begin_, have);
    in_ = kj::mv(grown);
  }
  begin_ = 0;
  end_ = have;
}

kj::Promise<bool> FlatMessageStream::Fill(size_t bytes) {
  const size_t have = end_ - begin_;
  if (have >= bytes) return true;
  kj::byte* base = reinterpret_cast<kj::byte*>(in_.begin());
  // As much as the stream has, up to the free space: a whole message (or more) in one read.
  return stream_.tryRead(base + end_, bytes - have, in_.size() * kWordBytes - end_).then([this, bytes](size_t read) {
    end_ += read;
    return end_ - begin_ >= bytes;  // fewer than asked: the stream ended
  });
}

kj::Promise<kj::Maybe<capnp::MessageReader&>> FlatMessageStream::ParseBuffered() {
  const size_t words = WordsOfBufferedMessage();
  const size_t have = end_ - begin_;
  if (words != 0 && have >= words * kWordBytes) {
    const capnp::word* start = in_.begin() + begin_ / kWordBytes;
    reader_.emplace(kj::arrayPtr(start, words), options_);
    last_message_bytes_ = words * kWordBytes;
    return kj::Maybe<capnp::MessageReader&>(*reader_);
  }
  // The table's first word, then the whole table, then the message: each known once the last arrived.
  size_t need_bytes = words * kWordBytes;
  if (words == 0) {
    need_bytes = kWordBytes;
    if (have >= kWordBytes) {
      const kj::byte* table = reinterpret_cast<const kj::byte*>(in_.begin()) + begin_;
      need_bytes = TableWords(size_t{TableEntry(table, 0)} + 1) * kWordBytes;
    }
  }
  ReserveWords(need_bytes / kWordBytes);
  return Fill(need_bytes).then([this](bool filled) -> kj::Promise<kj::Maybe<capnp::MessageReader&>> {
    if (filled) return ParseBuffered();
    if (end_ == begin_) return kj::Maybe<capnp::MessageReader&>(nullptr);
    return KJ_EXCEPTION(DISCONNECTED, "the stream ended inside a message", end_ - begin_);
  });
}

kj::Promise<void> FlatMessageStream::Write(capnp::MessageBuilder& message) {
  const auto segments = message.getSegmentsForOutput();
  const size_t table_words = TableWords(segments.size());
  size_t words = table_words;
  for (const auto& segment : segments) words += segment.size();
  if (out_.size() < words || (out_.size() * kWordBytes > kKeptBufferBytes && words * kWordBytes <= kKeptBufferBytes)) {
    out_ = kj::heapArray<capnp::word>(std::max(words, kInitialBufferBytes / kWordBytes));
  }
  kj::byte* base = reinterpret_cast<kj::byte*>(out_.begin());
  std::memset(base + (table_words - 1) * kWordBytes, 0, kWordBytes);  // the table's padding, if any
  const uint32_t count_minus_one = static_cast<uint32_t>(segments.size() - 1);
  std::memcpy(base, &count_minus_one, 4);
  kj::byte* at = base + table_words * kWordBytes;
  for (size_t i = 0; i < segments.size(); ++i) {
    const uint32_t size = static_cast<uint32_t>(segments[i].size());
    std::memcpy(base + 4 * (i + 1), &size, 4);
    std::memcpy(at, segments[i].begin(), segments[i].size() * kWordBytes);
    at += segments[i].size() * kWordBytes;
  }
  return stream_.write(base, words * kWordBytes);
}

}  // namespace wipeproof::proto
