// The canonical form of a certificate (certificate.h; docs/certificate.md "Canonical form"): the one
// text a certificate's content may be written as, so that a certificate with any byte changed is a
// certificate with changed content, or no certificate.
//
// Canonical text of a JSON value: nlohmann's dump of it as nlohmann::json (object keys sorted by
// their UTF-8 bytes, which is Unicode code point order), indented by 2 spaces, every character
// outside ASCII and every control character (and DEL) escaped as \uXXXX (lowercase hex; UTF-16
// surrogate pairs beyond the BMP; \b \t \n \f \r for those five), then one "\n". Python's
//   json.dumps(value, sort_keys=True, indent=2, ensure_ascii=True) + "\n"
// writes the same bytes for every value a certificate holds (docs/audit_recipe.py does, and
// tests/testdata/canonical-json.json holds both tools' agreement on awkward strings). A certificate
// holds no JSON floats, whose shortest form the two libraries may write differently: a Float64 is a
// string (FloatText).
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace wipeproof {

// The canonical text of `value` (above). Text that is not valid UTF-8 has its bad bytes written as
// U+FFFD.
std::string CanonicalJsonText(const nlohmann::json& value);

// A Float64 as a certificate writes it: C's "%.17g" (Python: '%.17g' % x), which reads back as
// exactly the same double: "0.98999999999999999" for 0.99, "1.5", "1e-05"; "nan", "inf", "-inf".
std::string FloatText(double value);

// Every JSON float in `value` (recursively) replaced by its FloatText string.
nlohmann::ordered_json FloatsAsText(const nlohmann::ordered_json& value);

// "" when `given` and `want` are the same JSON (types too: 1 is not 1.0); else where `given`
// first differs, in key order: "sessions[0].outcome.pass is true, recomputed: false", or "... is
// missing" / "... is not expected". Long values are shortened.
std::string FirstJsonDifference(const nlohmann::json& given, const nlohmann::json& want);

// "" when equal; else the first byte where `given` differs from `want`: "byte 1234 (line 56,
// column 3): 0x09, canonical: 0x20" (or where one of them ends).
std::string FirstTextDifference(const std::string& given, const std::string& want);

}  // namespace wipeproof
