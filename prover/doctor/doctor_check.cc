#include "prover/doctor/doctor_check.h"

#include <algorithm>
#include <cstdint>

#include "common/numbers.h"
#include "common/terminal_text.h"

namespace wipeproof {
namespace {

constexpr size_t kDetailWidth = 88;

// `text` cut into lines of at most `width` characters at spaces (a longer word stays whole).
std::vector<std::string> Wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t start = 0;
  while (start <= text.size()) {
    size_t space = text.find(' ', start);
    if (space == std::string::npos) space = text.size();
    const std::string word = text.substr(start, space - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = space + 1;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

const char* CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kOk:
      return "OK";
    case CheckStatus::kWarn:
      return "WARN";
    case CheckStatus::kFail:
      return "FAIL";
  }
  return "FAIL";
}

bool WipeCanRun(const std::vector<CheckResult>& results) {
  return std::none_of(results.begin(), results.end(),
                      [](const CheckResult& r) { return r.status == CheckStatus::kFail; });
}

std::string FormatDoctorTable(const std::vector<CheckResult>& results) {
  size_t name_width = 5;  // "CHECK"
  for (const CheckResult& r : results) name_width = std::max(name_width, r.check.size());
  auto pad = [](const std::string& s, size_t w) { return s + std::string(w > s.size() ? w - s.size() : 0, ' '); };
  std::string out = pad("CHECK", name_width) + "  STATUS  DETAIL\n";
  int fails = 0, warns = 0;
  for (const CheckResult& r : results) {
    fails += r.status == CheckStatus::kFail;
    warns += r.status == CheckStatus::kWarn;
    const std::vector<std::string> lines = Wrap(TerminalSafe(r.detail), kDetailWidth);
    for (size_t i = 0; i < lines.size(); ++i) {
      out += pad(i == 0 ? r.check : "", name_width) + "  " + pad(i == 0 ? CheckStatusName(r.status) : "", 6) + "  " +
             lines[i] + "\n";
    }
    if (!r.fix.empty()) {
      const std::vector<std::string> fix = Wrap("fix: " + TerminalSafe(r.fix), kDetailWidth);
      for (const std::string& l : fix) out += std::string(name_width + 10, ' ') + l + "\n";
    }
  }
  out += std::string("wipe can run: ") + (fails == 0 ? "yes" : "no") + " (" + std::to_string(fails) + " FAIL, " +
         std::to_string(warns) + " WARN)\n";
  return out;
}

nlohmann::json DoctorJson(const std::vector<CheckResult>& results) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& r : results) {
    checks.push_back({{"check", r.check}, {"status", CheckStatusName(r.status)}, {"detail", r.detail}, {"fix", r.fix}});
  }
  return {{"wipe_can_run", WipeCanRun(results)}, {"checks", checks}};
}

std::string BytesForPeople(uint64_t bytes) {
  const std::string human = FormatBytesHuman(bytes);
  const std::string raw = std::to_string(bytes) + " bytes";
  return human == raw ? raw : human + " (" + raw + ")";
}

}  // namespace wipeproof
