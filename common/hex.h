// Lowercase hexadecimal encoding of byte strings (labels, seeds, keys, digests).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace wipeproof {

// "00ff..." for `size` bytes at `data`.
std::string HexEncode(const uint8_t* data, size_t size);
inline std::string HexEncode(const std::vector<uint8_t>& bytes) { return HexEncode(bytes.data(), bytes.size()); }

// "00ff..." for any contiguous byte string with begin() and size(): std::vector<uint8_t>,
// std::array<uint8_t, N> (digests, ids), kj::ArrayPtr<const uint8_t> (proto::ByteView,
// capnp::Data::Reader).
template <typename Bytes>
std::string Hex(const Bytes& bytes) {
  if (bytes.size() == 0) return "";
  return HexEncode(reinterpret_cast<const uint8_t*>(&*bytes.begin()), bytes.size());
}

// Decodes `hex` (either case). Errors: INVALID_ARGUMENT on an odd length or a non-hex digit.
StatusOr<std::vector<uint8_t>> HexDecode(const std::string& hex);

// Decodes exactly `size` bytes into `out`. Errors: INVALID_ARGUMENT naming `what` and the
// expected length when `hex` is not exactly 2*size hex digits.
Status HexDecodeExact(const std::string& hex, size_t size, uint8_t* out, const char* what);

}  // namespace wipeproof
