#include "proto/codec.h"

#include <cstring>

namespace wipeproof::proto {

namespace {

constexpr size_t kWordBytes = sizeof(capnp::word);
// Nesting limit of RPC messages: the RPC frame (Message -> Call -> Payload -> params) adds levels
// above ours, so twice kNestingLimit (codec.h "Reader options").
constexpr uint32_t kRpcNestingLimit = 2 * kNestingLimit;

std::string Describe(const kj::Exception& e) { return e.getDescription().cStr(); }

}  // namespace

capnp::ReaderOptions RpcReaderOptions() {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = kMaxRpcMessageBytes / kWordBytes;
  options.nestingLimit = kRpcNestingLimit;
  return options;
}

size_t MaxPayloadBytes(MessageKind kind) {
  switch (kind) {
    case MessageKind::WIPE_ORDER:
      return kMaxOrderBytes;
    case MessageKind::FILL_REPORT:
      return kMaxFillReportBytes;
    case MessageKind::TRANSCRIPT_DIGEST:
      return kMaxTranscriptDigestBytes;
    case MessageKind::VERDICT:
      return kMaxVerdictBytes;
    case MessageKind::RECEIPT:
      return kMaxReceiptBytes;
    case MessageKind::LEDGER_ENTRY:
      return kMaxLedgerEntryBytes;
    case MessageKind::DEVICE_FILL_NOTICE:
      return kMaxDeviceFillNoticeBytes;
    case MessageKind::WAVE_VERDICT:
      return kMaxWaveVerdictBytes;
    case MessageKind::DELEGATION:
      return kMaxDelegationBytes;
    case MessageKind::UNKNOWN:
      return 0;
  }
  return 0;
}

std::string MessageKindName(MessageKind kind) {
  auto enumerants = capnp::Schema::from<MessageKind>().getEnumerants();
  auto index = static_cast<uint16_t>(kind);
  if (index < enumerants.size()) return enumerants[index].getProto().getName().cStr();
  return "kind(" + std::to_string(index) + ")";
}

StatusOr<kj::Array<capnp::word>> CanonicalWords(capnp::AnyStruct::Reader reader) {
  try {
    return reader.canonicalize();
  } catch (const kj::Exception& e) {
    return InvalidArgumentError("cannot canonicalize a malformed message: " + Describe(e));
  }
}

StatusOr<Bytes> EncodeCanonical(capnp::AnyStruct::Reader reader) {
  WP_ASSIGN_OR_RETURN(kj::Array<capnp::word> words, CanonicalWords(reader));
  kj::ArrayPtr<const kj::byte> bytes = words.asBytes();
  return Bytes(bytes.begin(), bytes.end());
}

StatusOr<std::unique_ptr<PayloadReader>> PayloadReader::Open(ByteView bytes, size_t max_bytes,
                                                             capnp::StructSchema schema, const char* what) {
  const std::string name(what);
  if (bytes.size() > max_bytes) {
    return InvalidArgumentError(name + ": " + std::to_string(bytes.size()) + " bytes, over the limit of " +
                                std::to_string(max_bytes));
  }
  if (bytes.size() == 0 || bytes.size() % kWordBytes != 0) {
    return InvalidArgumentError(name + ": " + std::to_string(bytes.size()) +
                                " bytes is not a positive whole number of 8-byte words");
  }
  std::unique_ptr<PayloadReader> out(new PayloadReader());
  const size_t words = bytes.size() / kWordBytes;
  out->words_ = kj::heapArray<capnp::word>(words);
  std::memcpy(out->words_.begin(), bytes.begin(), bytes.size());
  out->segments_[0] = out->words_.asPtr();

  // Validation pass: strict traversal limit; canonical form means each word is read at most once
  // by the canonical check and once by the walk.
  capnp::ReaderOptions strict;
  strict.traversalLimitInWords = 2 * words + 64;
  strict.nestingLimit = kNestingLimit;
  try {
    capnp::SegmentArrayMessageReader check(kj::arrayPtr(out->segments_, 1), strict);
    if (!check.isCanonical()) return InvalidArgumentError(name + ": not in canonical form");
    WP_RETURN_IF_ERROR(WalkMessage(check.getRoot<capnp::AnyStruct>(), schema).WithContext(name));
  } catch (const kj::Exception& e) {
    return InvalidArgumentError(name + ": malformed: " + Describe(e));
  }

  capnp::ReaderOptions access;
  access.traversalLimitInWords = kAccessTraversalFactor * words + 1024;
  access.nestingLimit = kNestingLimit;
  out->reader_ = std::make_unique<capnp::SegmentArrayMessageReader>(kj::arrayPtr(out->segments_, 1), access);
  return out;
}

ByteView PayloadReader::bytes() const {
  kj::ArrayPtr<const kj::byte> b = words_.asBytes();
  return ByteView(b.begin(), b.size());
}

}  // namespace wipeproof::proto
