#include "common/json_nesting.h"

namespace wipeproof {

Status CheckJsonNesting(std::string_view text, const std::string& what, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) {
          return InvalidArgumentError(what + ": JSON nested deeper than " + std::to_string(max_depth) + " levels");
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;  // unbalanced input is the parser's to report
        break;
      default:
        break;
    }
  }
  return Status::Ok();
}

}  // namespace wipeproof
