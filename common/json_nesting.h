// The nesting limit every JSON document the project reads is held to, checked on the raw text before
// any parser builds a DOM or recurses. nlohmann's serializer (dump) and the destructors of callers
// recurse per level, so a 200000-deep array crashed `selftest --render` and `ledger verify --export`
// with a stack overflow; a per-level path copy made ParseJsonText quadratic in depth. Our documents
// (inventory, profiles, adversary classes, ledger exports, selftest results, signed node profiles)
// nest fewer than 10 levels.
//
// Thread-safety: stateless.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace wipeproof {

// Arrays and objects may nest at most this many levels ("[[1]]" is 2 levels).
inline constexpr size_t kMaxJsonNesting = 64;

// Linear scan of `text` that counts '[' and '{' outside strings (honouring backslash escapes); it
// does not validate the JSON otherwise (the parser does that afterwards).
// Errors: INVALID_ARGUMENT "<what>: JSON nested deeper than <max_depth> levels" at the first
// bracket past the limit.
Status CheckJsonNesting(std::string_view text, const std::string& what, size_t max_depth = kMaxJsonNesting);

}  // namespace wipeproof
