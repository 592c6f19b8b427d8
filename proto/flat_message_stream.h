// Whole Cap'n Proto messages over a byte stream in the standard framing (capnp/serialize.h: a
// segment table, then the segments), with as few reads and writes as the stream allows: the two
// ends of a round channel (docs/protocol.md "The round channel"; issue "Fast rounds").
//
// capnp::readMessage reads a message in two or three reads (its first word, the rest of its
// segment table, its segments) and capnp::writeMessage writes it as two pieces (the table, each
// segment), which over kj's TLS layer are two TLS records. Here a read asks the stream for
// everything it has, up to the buffer's free space, so a message that arrived whole is read in one
// call, and a write sends the message as one contiguous piece (one TLS record where it fits one).
// Bytes after a message (a peer that sent its next message early) stay buffered for the next
// Read(). The buffers are kept and reused: no allocation per message once they have grown to the
// messages' size.
//
// Bounds (checked on the segment table, before any segment is read or any buffer grows):
//   - fewer than kMaxSegments segments (capnp's readMessage refuses 512 and more);
//   - at most `options.traversalLimitInWords` words of segments ("too large"), as readMessage;
//   - the reader gets `options` (traversal and nesting limits) for its own checks.
// The input buffer grows by doubling, never past the largest message the bounds let in; grown
// past kKeptBufferBytes, it is given back (to kInitialBufferBytes) at the next Read() that finds at
// most kInitialBufferBytes unread in it. The output buffer, at the next Write() of a message of at
// most kKeptBufferBytes. (A table that announces a message within the bounds has its buffer
// allocated before the body arrives, as capnp's readMessage does; its pages are written only as
// bytes arrive.)
//
// Errors: Read() rejects with kj FAILED on a table over the bounds, with DISCONNECTED when the
// stream ends inside a message, and with the stream's own exception; it resolves to null when the
// stream ends cleanly between messages. Write() rejects with the stream's exception.
//
// Thread-safety: the event loop thread of `stream`. One Read() and one Write() at a time.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/async-io.h>

#include <cstddef>
#include <optional>

namespace wipeproof::proto {

class FlatMessageStream {
 public:
  static constexpr size_t kMaxSegments = 512;                  // segments per message: fewer than this
  static constexpr size_t kInitialBufferBytes = 16384;         // each buffer's first size: a q = 256 answer fits
  static constexpr size_t kKeptBufferBytes = size_t{1} << 20;  // a larger buffer is given back (above)

  // REQUIRES: `stream` outlives this object.
  FlatMessageStream(kj::AsyncIoStream& stream, capnp::ReaderOptions options);
  FlatMessageStream(const FlatMessageStream&) = delete;
  FlatMessageStream& operator=(const FlatMessageStream&) = delete;

  // The next message, or null at a clean end of the stream (no byte of a next message). The
  // reader, and every Reader got from it, is valid until the next Read() or this object's end.
  kj::Promise<kj::Maybe<capnp::MessageReader&>> Read();

  // Writes `message` whole, in one piece; its bytes are copied before Write() returns, so the
  // builder may go at once. Resolves once the stream took them.
  kj::Promise<void> Write(capnp::MessageBuilder& message);

  // The buffers' sizes in bytes (for tests and memory accounting).
  size_t input_buffer_bytes() const { return in_.size() * sizeof(capnp::word); }
  size_t output_buffer_bytes() const { return out_.size() * sizeof(capnp::word); }

 private:
  // Words the message at the buffer's start needs in all (table and segments), or 0 while its
  // table has not arrived; throws on a table over the bounds.
  size_t WordsOfBufferedMessage() const;
  // Makes room for `words` at the buffer's start (moving buffered bytes there, growing it if need be).
  void ReserveWords(size_t words);
  // Reads until `bytes` are buffered (and whatever else is there); resolves to false at the end
  // of the stream before them.
  kj::Promise<bool> Fill(size_t bytes);
  kj::Promise<kj::Maybe<capnp::MessageReader&>> ParseBuffered();

  kj::AsyncIoStream& stream_;
  capnp::ReaderOptions options_;
  kj::Array<capnp::word> in_;      // buffered input: bytes [begin_, end_) are unread
  size_t begin_ = 0;               // bytes; a multiple of 8 (messages are whole words)
  size_t end_ = 0;                 // bytes
  size_t last_message_bytes_ = 0;  // of the message the reader below reads; consumed by the next Read()
  std::optional<capnp::FlatArrayMessageReader> reader_;
  kj::Array<capnp::word> out_;  // the message being written, table and segments
};

}  // namespace wipeproof::proto
