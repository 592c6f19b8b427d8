// Canonical encoding of wipeproof messages and bounded, validated parsing of received bytes.
//
// Every message that is signed or hashed travels in Cap'n Proto canonical form (one segment, no
// segment table; capnp::canonicalize). Parsing is strict:
//   1. size: at most MessageTraits<T>::kMaxBytes and a whole number of 8-byte words, else
//      INVALID_ARGUMENT before anything is read;
//   2. the bytes must be canonical (MessageReader::isCanonical): this rules out pointers that
//      share or overlap data, so a message cannot amplify reads beyond its own size;
//   3. every field of T is walked once (schema-driven) under a validation traversal limit of
//      2 * words + 64, so a pointer of the wrong type anywhere is caught here, not later;
//   4. the fixed-size fields of T are checked (proto/validate.h): session id 16 bytes etc.
// Any failure, including a kj::Exception from Cap'n Proto, becomes INVALID_ARGUMENT naming the
// message type. After that, readers obtained from Parsed<T>::root() do not throw (unless the caller
// re-reads large fields past the access traversal limit below).
//
// Reader options (explicit, not capnp's defaults):
//   nesting limit: kNestingLimit (16). The deepest path in wipe.capnp is 4 levels
//     (LedgerEntry/Receipt -> Envelope -> Data); 16 leaves room for growth and stops stack abuse.
//   traversal limit of the reader handed to callers: kAccessTraversalFactor * words + 1024.
//     Canonical form already prevents amplification; this limit only catches our own code
//     re-reading a large field in a loop (each getX() of a pointer counts its whole target).
//
// Thread-safety: free functions are thread-safe. Parsed<T> is immutable after construction and may
// be read from several threads at once (capnp's read limiter tolerates racing readers by design).
#pragma once

#include <capnp/any.h>
#include <capnp/message.h>
#include <capnp/schema.h>
#include <kj/exception.h>

#include <memory>
#include <utility>

#include "common/status.h"
#include "proto/crypto.h"
#include "proto/validate.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::proto {

// Size limits, bytes of the canonical message.
inline constexpr size_t kMaxOrderBytes = size_t{1} << 20;              // 1 MiB
inline constexpr size_t kMaxFillReportBytes = size_t{1} << 20;         // 1 MiB
inline constexpr size_t kMaxDeviceFillNoticeBytes = size_t{1} << 20;   // 1 MiB, like the report it precedes
inline constexpr size_t kMaxWaveVerdictBytes = size_t{1} << 20;        // 1 MiB
inline constexpr size_t kMaxDelegationBytes = size_t{64} << 10;        // 64 KiB (some dozen profiles)
inline constexpr size_t kMaxTranscriptDigestBytes = size_t{64} << 10;  // 64 KiB
inline constexpr size_t kMaxVerdictBytes = size_t{4} << 20;            // 4 MiB (per-round timings)
inline constexpr size_t kMaxReceiptBytes = size_t{256} << 10;          // 256 KiB
inline constexpr size_t kMaxLedgerEntryBytes = size_t{8} << 20;        // 8 MiB (holds an envelope)
inline constexpr size_t kMaxRoundLogBytes = size_t{4} << 20;           // 4 MiB
inline constexpr size_t kMaxChallengeRoundBytes = size_t{4} << 20;     // 4 MiB (~500 k indices)
inline constexpr size_t kMaxRoundAnswerBytes = size_t{16} << 20;       // 16 MiB (~500 k labels)
inline constexpr uint32_t kNestingLimit = 16;                          // pointer levels
inline constexpr uint64_t kAccessTraversalFactor = 64;                 // see top of file
// Largest incoming RPC message (bytes) the agent or challenger accepts: an answer plus room.
inline constexpr size_t kMaxRpcMessageBytes = size_t{32} << 20;  // 32 MiB

// ReaderOptions for TwoPartyVatNetwork / EzRpcServer / EzRpcClient on both sides. capnp 0.9.2
// rejects an incoming RPC message larger than the traversal limit (kMaxRpcMessageBytes / 8 words)
// before reading it, and also refuses to *send* one larger than the sender's own limit (the call
// fails with "...traversalLimitInWords..."). Nesting limit 32: the RPC frame adds levels above ours.
capnp::ReaderOptions RpcReaderOptions();

// Per-type facts used by parsing and signing. kKind is MessageKind::UNKNOWN for unsigned types.
template <typename T>
struct MessageTraits;
#define WP_MESSAGE_TRAITS_(T, kind, max_bytes)              \
  template <>                                               \
  struct MessageTraits<T> {                                 \
    static constexpr MessageKind kKind = MessageKind::kind; \
    static constexpr size_t kMaxBytes = max_bytes;          \
    static constexpr const char* kName = #T;                \
  }
WP_MESSAGE_TRAITS_(WipeOrder, WIPE_ORDER, kMaxOrderBytes);
WP_MESSAGE_TRAITS_(FillReport, FILL_REPORT, kMaxFillReportBytes);
WP_MESSAGE_TRAITS_(DeviceFillNotice, DEVICE_FILL_NOTICE, kMaxDeviceFillNoticeBytes);
WP_MESSAGE_TRAITS_(WaveVerdict, WAVE_VERDICT, kMaxWaveVerdictBytes);
WP_MESSAGE_TRAITS_(Delegation, DELEGATION, kMaxDelegationBytes);
WP_MESSAGE_TRAITS_(TranscriptDigest, TRANSCRIPT_DIGEST, kMaxTranscriptDigestBytes);
WP_MESSAGE_TRAITS_(Verdict, VERDICT, kMaxVerdictBytes);
WP_MESSAGE_TRAITS_(Receipt, RECEIPT, kMaxReceiptBytes);
WP_MESSAGE_TRAITS_(LedgerEntry, LEDGER_ENTRY, kMaxLedgerEntryBytes);
WP_MESSAGE_TRAITS_(RoundLog, UNKNOWN, kMaxRoundLogBytes);
WP_MESSAGE_TRAITS_(ChallengeRound, UNKNOWN, kMaxChallengeRoundBytes);
WP_MESSAGE_TRAITS_(RoundAnswer, UNKNOWN, kMaxRoundAnswerBytes);
#undef WP_MESSAGE_TRAITS_

// Largest payload an envelope of `kind` may carry (bytes); 0 for UNKNOWN or a value this build
// does not know.
size_t MaxPayloadBytes(MessageKind kind);
// "wipeOrder", "fillReport", ... as in wipe.capnp; "kind(N)" for unknown values.
std::string MessageKindName(MessageKind kind);

// Canonical bytes of a message (what gets signed, hashed and stored). `reader` is any struct
// reader, e.g. builder.asReader(). Errors: INVALID_ARGUMENT if `reader` itself is malformed
// (possible only for readers of received data that was never validated).
StatusOr<Bytes> EncodeCanonical(capnp::AnyStruct::Reader reader);
template <typename Reader>
StatusOr<Bytes> EncodeCanonical(Reader reader) {
  return EncodeCanonical(capnp::AnyStruct::Reader(reader));
}
// The same canonical bytes as capnp's words, for a caller that copies them where it chooses.
StatusOr<kj::Array<capnp::word>> CanonicalWords(capnp::AnyStruct::Reader reader);

// The owner of one parsed message's words and reader. Use Parsed<T> instead.
class PayloadReader {
 public:
  // Steps 1-3 of the top of this file against `schema`. `what` names the type in errors.
  static StatusOr<std::unique_ptr<PayloadReader>> Open(ByteView bytes, size_t max_bytes, capnp::StructSchema schema,
                                                       const char* what);
  capnp::MessageReader& reader() { return *reader_; }
  ByteView bytes() const;

 private:
  PayloadReader() = default;
  kj::Array<capnp::word> words_;  // aligned copy of the input
  kj::ArrayPtr<const capnp::word> segments_[1];
  std::unique_ptr<capnp::MessageReader> reader_;
};

// A validated message of type T that owns its bytes. Movable, not copyable.
template <typename T>
class Parsed {
 public:
  typename T::Reader root() const { return root_; }
  // The canonical bytes it was parsed from.
  ByteView bytes() const { return payload_->bytes(); }

 private:
  template <typename U>
  friend StatusOr<Parsed<U>> ParseMessage(ByteView bytes);
  Parsed(std::unique_ptr<PayloadReader> payload, typename T::Reader root) : payload_(std::move(payload)), root_(root) {}
  std::unique_ptr<PayloadReader> payload_;
  typename T::Reader root_;
};

// A validated message kept and read again and again (a session's order, read by the session rules
// in every round: proto/session_rules.h). Parsed<T>'s reader carries a traversal budget that such
// reads would use up; Held<T> copies the message into a builder, whose readers carry none. Safe:
// the message was parsed first (canonical, walked once), so each read costs at most its size.
// Movable, not copyable; root() may be read from several threads at once.
template <typename T>
class Held {
 public:
  explicit Held(const Parsed<T>& parsed)
      : bytes_(parsed.bytes().begin(), parsed.bytes().end()), builder_(std::make_unique<capnp::MallocMessageBuilder>()) {
    builder_->setRoot(parsed.root());
    root_ = builder_->getRoot<T>().asReader();
  }
  typename T::Reader root() const { return root_; }
  // The canonical bytes it was parsed from.
  ByteView bytes() const { return ByteView(bytes_.data(), bytes_.size()); }

 private:
  Bytes bytes_;
  std::unique_ptr<capnp::MallocMessageBuilder> builder_;
  typename T::Reader root_;
};

// Parses and validates canonical bytes of T (steps 1-4 above). For signed kinds, call this only
// on bytes VerifyEnvelope returned (or use VerifyAndParse<T>, proto/signing.h).
// Errors: INVALID_ARGUMENT naming T and what is wrong.
template <typename T>
StatusOr<Parsed<T>> ParseMessage(ByteView bytes) {
  using Traits = MessageTraits<T>;
  WP_ASSIGN_OR_RETURN(std::unique_ptr<PayloadReader> payload,
                      PayloadReader::Open(bytes, Traits::kMaxBytes, capnp::Schema::from<T>(), Traits::kName));
  typename T::Reader root;
  try {
    root = payload->reader().template getRoot<T>();
  } catch (const kj::Exception& e) {
    return InvalidArgumentError(std::string(Traits::kName) + ": malformed: " + e.getDescription().cStr());
  }
  WP_RETURN_IF_ERROR(ValidateShape(root).WithContext(Traits::kName));
  return Parsed<T>(std::move(payload), root);
}

}  // namespace wipeproof::proto
