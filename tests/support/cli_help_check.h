// Checks one subcommand's --help for flags that are not its own: every --name the "Flags:" part
// mentions must be a flag listed there, and no flag text may be written for another subcommand
// ("keygen: ...", "(plan: ...", " bench --what=..."). Mentions inside `backquotes` (a command to
// run) and inside "(wipeproof-... )" (another program's command) are cross-references and skipped.
// Header-only, for the CLI tests of both binaries.
#pragma once

#include <cctype>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace wipeproof::testing {

// The flags listed in the "Flags:" part of `help` (gflags lines "    -name (text) type: ...").
inline std::set<std::string> ListedHelpFlags(const std::string& help) {
  std::set<std::string> names;
  const size_t flags = help.find("\nFlags:\n");
  std::istringstream in(flags == std::string::npos ? "" : help.substr(flags));
  for (std::string line; std::getline(in, line);) {
    const size_t dash = line.find_first_not_of(' ');
    if (dash == std::string::npos || dash == 0 || line[dash] != '-') continue;
    const size_t end = line.find(' ', dash);
    names.insert(line.substr(dash + 1, end - dash - 1));
  }
  return names;
}

// The problems found in `help` of subcommand `sub` among `all` subcommands ("" entries: none).
inline std::vector<std::string> HelpFlagProblems(const std::string& help, const std::string& sub,
                                                 const std::vector<std::string>& all) {
  std::vector<std::string> problems;
  const size_t start = help.find("\nFlags:\n");
  if (start == std::string::npos) return {"no Flags: part"};
  const std::set<std::string> listed = ListedHelpFlags(help);
  // Drop the cross-references: `...` spans and "(wipeproof-... )" spans.
  std::string text;
  const std::string raw = help.substr(start);
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '`') {
      const size_t close = raw.find('`', i + 1);
      if (close != std::string::npos) i = close;
      continue;
    }
    if (raw.compare(i, 11, "(wipeproof-") == 0) {
      const size_t close = raw.find(')', i);
      if (close != std::string::npos) i = close;
      continue;
    }
    text += raw[i];
  }
  for (size_t at = text.find("--"); at != std::string::npos; at = text.find("--", at + 2)) {
    size_t end = at + 2;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
    const std::string name = text.substr(at + 2, end - at - 2);
    if (name.empty() || name == "v" || name == "minloglevel") continue;  // glog's, accepted everywhere
    if (listed.count(name) == 0) problems.push_back("mentions --" + name + ", not a flag of " + sub);
  }
  for (const std::string& other : all) {
    if (other == sub) continue;
    for (const std::string& pattern :
         {" " + other + ": ", "(" + other + ": ", " " + other + " --", " " + other + ", "}) {
      if (text.find(pattern) != std::string::npos) problems.push_back("text for " + other + ": '" + pattern + "'");
    }
  }
  return problems;
}

}  // namespace wipeproof::testing
