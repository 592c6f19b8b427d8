#include "common/hex.h"

namespace wipeproof {
namespace {
int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::string HexEncode(const uint8_t* data, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(2 * size, '0');
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 15];
  }
  return out;
}

StatusOr<std::vector<uint8_t>> HexDecode(const std::string& hex) {
  if (hex.size() % 2 != 0) return InvalidArgumentError("hex string has odd length " + std::to_string(hex.size()));
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = HexDigitValue(hex[2 * i]), lo = HexDigitValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return InvalidArgumentError("not a hex digit at position " + std::to_string(hi < 0 ? 2 * i : 2 * i + 1));
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return out;
}

Status HexDecodeExact(const std::string& hex, size_t size, uint8_t* out, const char* what) {
  if (hex.size() != 2 * size) {
    return InvalidArgumentError(std::string(what) + " must be " + std::to_string(2 * size) + " hex digits, got " +
                                std::to_string(hex.size()));
  }
  auto bytes = HexDecode(hex);
  if (!bytes.ok()) return bytes.status().WithContext(what);
  for (size_t i = 0; i < size; ++i) out[i] = (*bytes)[i];
  return Status::Ok();
}

}  // namespace wipeproof
