// Text and bytes a peer sent (an agent's error description, a device note or selector, a digest it
// got wrong; a challenger's field the agent reports), made safe to show in a message, a log line or
// a signed verdict, with a size that never depends on what the peer wrote. The challenger passes
// everything an agent controls through PeerText where it enters (challenger/session/failure.h); the
// session rules (proto/session_rules.h) quote peer fields through it.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace wipeproof {

// Longest piece of peer text kept (bytes, the cut notice included).
inline constexpr size_t kMaxPeerTextBytes = 1024;

// `text` made safe to show and to sign: bytes that are not valid UTF-8 become U+FFFD, control
// characters become "\xNN" (C0 and DEL) or "\u00NN" (C1), and when the result would exceed `limit`
// bytes it is cut on a character boundary and ends in "… (N bytes cut)", N counting the bytes of
// `text` left out; the result, notice included, is at most max(limit, 64) bytes. Idempotent: text
// that already passed (with the same or a smaller limit) comes back unchanged.
std::string PeerText(std::string_view text, size_t limit = kMaxPeerTextBytes);

// Lowercase hex of peer-supplied bytes, at most `limit` bytes shown, then "… (N bytes)".
std::string PeerHex(const uint8_t* data, size_t size, size_t limit = 64);

}  // namespace wipeproof
