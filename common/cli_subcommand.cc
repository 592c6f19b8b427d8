#include "common/cli_subcommand.h"

#include <gflags/gflags.h>

#include <cstdio>
#include <cstring>
#include <set>

namespace wipeproof {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// gflags' own flags (--flagfile, --fromenv, --helpfull, --undefok, ...: defined in gflags' sources)
// are no flags of ours: they would read files or the environment behind the subcommand's back, or
// exit 1 with gflags' texts.
bool IsGflagsOwnFlag(const gflags::CommandLineFlagInfo& info) {
  return info.filename.find("gflags") != std::string::npos;
}

// The first argument gflags would refuse, as a message ("" when all are fine): a name that is no
// flag of ours (or gflags' own), a non-bool flag without a value, or a value its type does not take.
// A flag given twice keeps its last value, as gflags has it (a wrapper's defaults can be overridden
// by a later flag). gflags itself would print its own
// message and exit(1); the CLIs promise exit 2 for a bad command line.
std::string BadFlag(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;  // gflags stops here too
    if (arg.size() < 2 || arg[0] != '-') continue;
    const size_t start = arg[1] == '-' ? 2 : 1;
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(start, eq == std::string::npos ? std::string::npos : eq - start);
    gflags::CommandLineFlagInfo info;
    const bool negated = name.size() > 2 && name.compare(0, 2, "no") == 0 &&
                         gflags::GetCommandLineFlagInfo(name.c_str() + 2, &info) && info.type == "bool";
    const bool known = negated || gflags::GetCommandLineFlagInfo(name.c_str(), &info);
    if (known && IsGflagsOwnFlag(info)) return "unknown flag '" + arg.substr(0, eq) + "'";
    if (negated) continue;  // --noflag
    if (known) {
      if (eq == std::string::npos && info.type == "bool") continue;
      std::string value;
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
      } else if (i + 1 < argc) {
        value = argv[++i];  // "--flag value": the next argument is its value, not a flag
      } else {
        return "--" + name + " needs a value (--" + name + "=VALUE)";
      }
      // Setting it now only checks it: the parse that follows sets the same value again.
      if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty()) {
        const std::string want = info.type == "bool"     ? "true or false"
                                 : info.type == "double" ? "a number"
                                 : info.type[0] == 'u'   ? "a whole number >= 0"
                                                         : "a whole number";
        return "bad value '" + value + "' for --" + name + " (want " + want + ")";
      }
      continue;
    }
    return "unknown flag '" + arg.substr(0, eq) + "'";
  }
  return "";
}

// A flag of ours set on the command line that `sub` does not take.
std::string InapplicableFlag(const CliSubcommand& sub, const std::vector<std::string>& flag_files) {
  const std::set<std::string> allowed(sub.flags.begin(), sub.flags.end());
  std::vector<gflags::CommandLineFlagInfo> all;
  gflags::GetAllFlags(&all);
  for (const auto& f : all) {
    bool ours = false;
    for (const std::string& file : flag_files) ours = ours || EndsWith(f.filename, file);
    if (ours && !f.is_default && allowed.count(f.name) == 0) return f.name;
  }
  return "";
}

}  // namespace

bool IsCliVersionFlag(const char* arg) {
  for (const char* v : {"--version", "-version", "version"}) {
    if (std::strcmp(arg, v) == 0) return true;
  }
  return false;
}

void PrintCliVersion(const char* program, unsigned protocol) {
  std::printf("%s %s (wipe protocol version %u)\n", program, WIPEPROOF_VERSION, protocol);
}

bool IsCliHelpFlag(const char* arg) {
  for (const char* h : {"--help", "-help", "--helpshort", "-helpshort", "-h"}) {
    if (std::strcmp(arg, h) == 0) return true;
  }
  return false;
}

std::string CliSubcommandHelpText(const char* program, const CliSubcommand& sub) {
  std::string help = std::string("usage: ") + program + " " + sub.name + " [flags]\n\n" + sub.name + ": " + sub.synopsis +
                     "\n\n" + sub.help + "\n\nFlags:\n";
  for (const auto& name : sub.flags) {
    gflags::CommandLineFlagInfo info;
    if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info)) continue;
    for (const char* owner : {sub.name, sub.flags_of}) {
      if (owner == nullptr) continue;
      const std::string prefix = std::string(owner) + ": ";  // "serve: HOST:PORT ..." in serve's own help
      if (info.description.compare(0, prefix.size(), prefix) == 0) info.description.erase(0, prefix.size());
    }
    bool default_is_words = false;
    for (const CliFlagHelp& h : sub.flag_help) {
      if (h.flag != name) continue;
      info.description = h.help;
      if (!h.default_text.empty()) info.default_value = h.default_text;
      default_is_words = !h.default_text.empty();
    }
    std::string text = gflags::DescribeOneFlag(info);
    // A default in words ("every class of --classes") is no string value: shown without quotes.
    const size_t quote = text.rfind("default: \"");
    if (default_is_words && quote != std::string::npos && text.size() >= 2 && text[text.size() - 2] == '"') {
      text.erase(text.size() - 2, 1);
      text.erase(quote + 9, 1);
    }
    help += text;
  }
  return help + "\nLogging flags (glog) such as --v and --minloglevel are also accepted.\n";
}

void PrintCliSubcommandHelp(const char* program, const CliSubcommand& sub) {
  std::printf("%s", CliSubcommandHelpText(program, sub).c_str());
}

std::string ParseCliSubcommandFlags(const char* program, const CliSubcommand& sub, int argc, char** argv,
                                    const std::vector<std::string>& flag_files) {
  const std::string bad = BadFlag(argc, argv);
  if (!bad.empty()) return bad + " (see " + program + " " + sub.name + " --help)";
  // gflags sees "PROGRAM <flags>": the subcommand is taken out.
  std::vector<char*> args{argv[0]};
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  int n = static_cast<int>(args.size()) - 1;
  char** v = args.data();
  gflags::SetUsageMessage(std::string("usage: ") + program + " " + sub.name + " [flags]");
  gflags::ParseCommandLineFlags(&n, &v, /*remove_flags=*/true);
  if (n > 1) return std::string("unexpected argument '") + v[1] + "'";
  const std::string stray = InapplicableFlag(sub, flag_files);
  if (!stray.empty()) return "--" + stray + " does not apply to " + sub.name;
  return "";
}

}  // namespace wipeproof
