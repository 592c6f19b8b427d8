#include "common/peer_text.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "common/hex.h"

namespace wipeproof {

namespace {

constexpr size_t kMinTextLimit = 64;
constexpr char kEllipsis[] = "\xe2\x80\xa6";     // U+2026
constexpr char kReplacement[] = "\xef\xbf\xbd";  // U+FFFD

std::string CutNotice(size_t cut_bytes) {
  return std::string(kEllipsis) + " (" + std::to_string(cut_bytes) + " bytes cut)";
}

// Length of the well-formed UTF-8 sequence at text[i] (Unicode 3.9 D92: no overlong forms, no
// surrogates, nothing above U+10FFFF), 0 when there is none; *code_point receives its value.
size_t Utf8Sequence(std::string_view text, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b0 = byte(i);
  size_t n;
  uint32_t cp;
  uint8_t lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (b0 < 0x80) {
    *code_point = b0;
    return 1;
  } else if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2, cp = b0 & 0x1f;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3, cp = b0 & 0x0f;
    if (b0 == 0xe0) lo = 0xa0;
    if (b0 == 0xed) hi = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4, cp = b0 & 0x07;
    if (b0 == 0xf0) lo = 0x90;
    if (b0 == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const uint8_t b = byte(i + k);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf)) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  *code_point = cp;
  return n;
}

}  // namespace

std::string PeerText(std::string_view text, size_t limit) {
  limit = std::max(limit, kMinTextLimit);
  // Sanitized output, one character at a time, remembering where each one ended (output bytes,
  // input bytes consumed) so the text can be cut on a character boundary.
  std::string out;
  std::vector<std::pair<size_t, size_t>> ends;
  size_t i = 0;
  char escape[16];
  while (i < text.size() && out.size() <= limit) {
    uint32_t cp = 0;
    const size_t n = Utf8Sequence(text, i, &cp);
    if (n == 0) {
      out += kReplacement;
      i += 1;
    } else if (cp < 0x20 || cp == 0x7f) {
      std::snprintf(escape, sizeof(escape), "\\x%02x", static_cast<unsigned>(cp));
      out += escape;
      i += n;
    } else if (cp >= 0x80 && cp <= 0x9f) {
      std::snprintf(escape, sizeof(escape), "\\u%04x", static_cast<unsigned>(cp));
      out += escape;
      i += n;
    } else {
      out.append(text.data() + i, n);
      i += n;
    }
    ends.emplace_back(out.size(), i);
  }
  if (i == text.size() && out.size() <= limit) return out;
  // Cut: keep the longest prefix that leaves room for the notice (sized for the largest count).
  const size_t room = limit - std::min(limit, CutNotice(text.size()).size());
  size_t keep_out = 0, keep_in = 0;
  for (const auto& [out_end, in_end] : ends) {
    if (out_end > room) break;
    keep_out = out_end;
    keep_in = in_end;
  }
  out.resize(keep_out);
  return out + CutNotice(text.size() - keep_in);
}

std::string PeerHex(const uint8_t* data, size_t size, size_t limit) {
  if (size <= limit) return HexEncode(data, size);
  return HexEncode(data, limit) + kEllipsis + " (" + std::to_string(size) + " bytes)";
}

}  // namespace wipeproof
