// Text that came from a file or a peer (a node name from an inventory or a ledger, an agent's
// failure text, a flag's value) as both binaries print it in human-readable output (tables,
// summaries, error lines): one escaping rule, so such text can neither move the cursor, recolour the
// terminal, reorder what follows nor fake a line, and two different texts never print the same.
//
// Escaped, each in one form:
//   - C0 controls U+0000..U+001F (newline, ESC, ...) and DEL U+007F   -> \u00XX  (e.g. "\u001b")
//   - C1 controls U+0080..U+009F (8-bit CSI U+009B, NEL U+0085, ...)  -> \u00XX  (e.g. "\u009b")
//   - bidi marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A..U+202E,
//     U+2066..U+2069) and the line/paragraph separators U+2028, U+2029 -> \uXXXX (e.g. "\u202e")
//   - each byte that is not part of well-formed UTF-8 (a stray continuation byte, a truncated
//     sequence, an overlong form, a surrogate, above U+10FFFF)          -> \xNN    (e.g. "\xff")
//   - the backslash itself                                            -> "\\"
// Everything else (printable ASCII, other well-formed UTF-8) passes unchanged, so a plain name
// prints as it is. Lower-case hex digits. Machine output (JSON) is escaped by its own encoder.
//
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wipeproof {

// `text` escaped as above; linear in its size (at most 6 output bytes per input byte).
std::string TerminalSafe(std::string_view text);

// `rows` as aligned columns for people: each cell padded to its column's widest cell plus two
// spaces, trailing spaces dropped, every line starting with `indent` and ending in a newline.
std::string AlignColumns(const std::vector<std::vector<std::string>>& rows, const std::string& indent = "");

}  // namespace wipeproof
