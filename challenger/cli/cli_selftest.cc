#include "challenger/cli/cli_selftest.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_calibration_flags.h"
#include "challenger/cli/cli_flags.h"
#include "adversary/scaffold/scaffold_report.h"
#include "challenger/selftest/selftest_runner.h"
#include "challenger/session/failure.h"
#include "common/cli_exit_codes.h"
#include "common/cli_subcommand.h"
#include "common/file_write.h"
#include "common/json_fields.h"
#include "common/json_nesting.h"
#include "common/progress_line.h"
#include "proto/crypto.h"

// The selftest's own flags; --threads, --json, --progress and --confidence are the challenger's
// (cli_flags.cc, cli_calibration_flags.cc), described below as the selftest reads them.
DEFINE_bool(adversaries, false, "run the honest agent and adversaries 1-7 and 9-11 (required unless --render)");
DEFINE_uint64(runs, 200, "sessions per scenario (1 to 1000000); 37 scenarios, a few ms each (11: about 30 ms)");
DEFINE_uint64(seed, 1, "seed of the adversaries' own choices; challenges use the CSPRNG");
DEFINE_string(only, "",
              "scenario ids, id prefixes (1a) or adversary numbers (0 = honest .. 11 but 8), comma-separated; runs no "
              "scaffold-storage experiment unless --scaffold_m is given too");
DEFINE_string(scaffold_m, "256,1024,4096",
              "chunk sizes m (labels, powers of two in [4, 65536]) of the scaffold-storage experiments (the "
              "default takes ~10 s; 16384 takes minutes); none = skip");
DEFINE_string(markdown, "", "Markdown document (docs/results/security-results.md) written to FILE");
DEFINE_string(render, "", "run nothing; render --markdown from this JSON document");
DEFINE_bool(quiet, false, "no progress on stderr (--progress=never)");

namespace wipeproof {

namespace {

constexpr char kProgram[] = "wipeproof-challenger";

const std::vector<std::string>& FlagFiles() {
  static const std::vector<std::string> kFiles = {"challenger/cli/cli_flags.cc", "challenger/cli/cli_selftest.cc",
                                                  kCalibrationFlagsFile};
  return kFiles;
}

// The value gflags holds for a selftest flag, by name (the challenger's flags read through their
// variables, so their definitions are linked in).
std::string FlagValue(const std::string& name) {
  if (name == "threads") return std::to_string(FLAGS_threads);
  if (name == "json") return FLAGS_json ? "true" : "false";
  if (name == "progress") return FLAGS_progress;
  if (name == "confidence") {
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", FLAGS_confidence);
    return text;
  }
  std::string value;
  gflags::GetCommandLineOption(name.c_str(), &value);
  return value;
}

// The command line parsed by gflags (every flag restored afterwards), given back as the words
// "--name=value" of the flags set ("--name" for a switch that is on), so the checks below read one
// spelling. --json=FILE is the file form of the --json switch. Returns "" or a usage message.
std::string NormalizeArgs(const std::vector<std::string>& args, std::vector<std::string>* words) {
  // --json=FILE (any value but a bool's) is taken here: gflags' --json is the challenger's switch.
  std::vector<std::string> given;
  std::string json_file;
  bool json_file_given = false;
  for (const std::string& arg : args) {
    const std::string value = arg.rfind("--json=", 0) == 0 ? arg.substr(7) : "";
    const bool is_bool = value == "true" || value == "false";
    if (arg.rfind("--json=", 0) != 0 || is_bool) {
      given.push_back(arg);
      continue;
    }
    if (json_file_given) return "--json is given twice";
    json_file_given = true;
    json_file = value;
  }
  std::vector<char*> argv;
  std::string program = kProgram, sub = "selftest";
  argv.push_back(program.data());
  argv.push_back(sub.data());
  for (std::string& word : given) argv.push_back(word.data());
  gflags::FlagSaver restore_every_flag;
  const std::string bad =
      ParseCliSubcommandFlags(kProgram, SelftestSubcommand(), static_cast<int>(argv.size()), argv.data(), FlagFiles());
  if (!bad.empty()) return bad;
  for (const std::string& name : SelftestSubcommand().flags) {
    gflags::CommandLineFlagInfo info;
    if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info) || info.is_default) continue;
    const std::string value = FlagValue(name);
    if (info.type == "bool") {
      if (value == "true") words->push_back("--" + name);
    } else {
      words->push_back("--" + name + "=" + value);
    }
  }
  if (json_file_given) {
    if (std::find(words->begin(), words->end(), "--json") != words->end()) return "--json is given twice";
    words->push_back("--json=" + json_file);
  }
  return "";
}


bool ParseUint(const std::string& text, uint64_t lo, uint64_t hi, uint64_t* out) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::stoull(text);
  return *out >= lo && *out <= hi;
}

void PrintSummary(const selftest::SelftestResult& result, std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof(line), "%-32s %-14s %6s %8s %8s %8s %8s  %s\n", "scenario", "expected", "runs", "caught",
                "theory", "measured", "cp_upper", "match");
  out << line;
  for (const auto& r : result.scenarios) {
    std::snprintf(line, sizeof(line), "%-32s %-14s %6llu %8llu %8.4f %8.4f %8.4f  %s\n", r.spec.id.c_str(),
                  r.spec.expected == proto::FailureReason::NONE ? "pass" : FailureReasonName(r.spec.expected).c_str(),
                  static_cast<unsigned long long>(r.runs), static_cast<unsigned long long>(r.caught), r.spec.theory,
                  r.measured, r.cp_upper, r.matches ? "yes" : ("NO: " + r.verdict_text).c_str());
    out << line;
  }
  out << (result.all_match ? "every outcome matches its expectation\n" : "MISMATCH\n");
}

// What the command line asks for, checked.
struct SelftestCommand {
  selftest::SelftestOptions options;
  bool adversaries = false, quiet = false, json_stdout = false;
  ProgressMode progress = ProgressMode::kAuto;
  std::string json_file, markdown_file, render_file;
  ScaffoldExperimentOptions scaffold;
  bool scaffold_m_given = false;
  std::vector<std::string> run_flags;  // flags that only make sense when something runs
};

// Reads the normalized words (NormalizeArgs) into `c`, each value range-checked. Returns "" or the
// usage message.
std::string ReadSelftestArgs(const std::vector<std::string>& args, SelftestCommand* c) {
  for (const std::string& arg : args) {
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (name != "--render" && name != "--markdown" && name != "--quiet" && name != "--progress") {
      c->run_flags.push_back(name);
    }
    const bool has_value = eq != std::string::npos;
    const std::string value = has_value ? arg.substr(eq + 1) : "";
    auto need_value = [&]() { return has_value && !value.empty(); };
    if (name == "--adversaries" && !has_value) {
      c->adversaries = true;
    } else if (name == "--quiet" && !has_value) {
      c->quiet = true;
    } else if (name == "--progress") {
      auto mode = ParseProgressMode(value);
      if (!has_value || !mode.ok()) return "--progress: want auto, always or never";
      c->progress = *mode;
    } else if (name == "--runs") {
      if (!need_value() || !ParseUint(value, 1, 1'000'000, &c->options.runs))
        return "--runs: want an integer in [1, 1000000]";
    } else if (name == "--seed") {
      if (!need_value() || !ParseUint(value, 0, UINT64_MAX / 2, &c->options.seed))
        return "--seed: want a non-negative integer";
    } else if (name == "--threads") {
      uint64_t t = 0;
      if (!need_value() || !ParseUint(value, 0, 256, &t)) return "--threads: want an integer in [0, 256]";
      c->options.threads = static_cast<int>(t);
    } else if (name == "--confidence") {
      char* end = nullptr;
      const double confidence = need_value() ? std::strtod(value.c_str(), &end) : 0;
      if (!need_value() || end == nullptr || *end != '\0' || !(confidence > 0 && confidence < 1)) {
        return "--confidence: want a number in (0, 1)";
      }
      c->options.confidence = confidence;
    } else if (name == "--scaffold_m") {
      if (!need_value()) return "--scaffold_m: want a list of m, or none";
      c->scaffold_m_given = true;
      c->scaffold.m_values.clear();
      if (value != "none") {
        if (SplitComma(value).empty()) return "--scaffold_m: want a list of m, or none";
        for (const std::string& part : SplitComma(value)) {
          uint64_t m = 0;
          if (!ParseUint(part, 4, 65536, &m) || (m & (m - 1)) != 0) {
            return "--scaffold_m: '" + part + "' is not a power of two in [4, 65536]";
          }
          c->scaffold.m_values.push_back(static_cast<uint32_t>(m));
        }
      }
    } else if (name == "--only") {
      if (!need_value()) return "--only: want scenario ids";
      c->options.only = SplitComma(value);
      if (c->options.only.empty()) return "--only: want scenario ids";
    } else if (name == "--json") {
      if (has_value && value.empty()) return "--json=: want a file name";
      if (has_value) {
        c->json_file = value;
      } else {
        c->json_stdout = true;
      }
    } else if (name == "--markdown") {
      if (!need_value()) return "--markdown: want a file name";
      c->markdown_file = value;
    } else if (name == "--render") {
      if (!need_value()) return "--render: want a JSON file";
      c->render_file = value;
    } else {
      return "unknown argument '" + arg + "'";
    }
  }
  return "";
}

}  // namespace

int RunSelftestCommand(const std::vector<std::string>& command_line, std::ostream& out, std::ostream& err) {
  auto usage_error = [&err](const std::string& message) {
    err << "wipeproof-challenger selftest: " << message;
    if (message.find("(see ") == std::string::npos) err << " (see wipeproof-challenger selftest --help)";
    err << "\n";
    return kExitUsage;
  };
  for (const std::string& arg : command_line) {
    if (IsCliHelpFlag(arg.c_str())) {
      out << CliSubcommandHelpText(kProgram, SelftestSubcommand());
      return 0;
    }
  }
  std::vector<std::string> args;
  if (const std::string bad = NormalizeArgs(command_line, &args); !bad.empty()) return usage_error(bad);
  SelftestCommand command;
  if (const std::string bad = ReadSelftestArgs(args, &command); !bad.empty()) return usage_error(bad);
  selftest::SelftestOptions& options = command.options;
  const bool adversaries = command.adversaries, quiet = command.quiet, json_stdout = command.json_stdout;
  const ProgressMode progress = command.progress;
  const std::string &json_file = command.json_file, &markdown_file = command.markdown_file,
                    &render_file = command.render_file;
  ScaffoldExperimentOptions& scaffold = command.scaffold;
  const bool scaffold_m_given = command.scaffold_m_given;
  const std::vector<std::string>& run_flags = command.run_flags;

  if (!render_file.empty()) {
    if (!run_flags.empty()) return usage_error("--render runs nothing; drop " + run_flags.front());
    if (markdown_file.empty()) return usage_error("--render needs --markdown=FILE");
    auto text = ReadTextFile(render_file);
    if (!text.ok()) return usage_error(CliErrorText(text.status()));
    Status shallow = CheckJsonNesting(*text, render_file);  // before anything recurses per level
    if (!shallow.ok()) return usage_error(CliErrorText(shallow));
    nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return usage_error(render_file + ": not JSON");
    auto markdown = selftest::SelftestMarkdown(doc);
    if (!markdown.ok()) return usage_error(render_file + ": " + CliErrorText(markdown.status()));
    Status written = WriteFileReplacing(markdown_file, *markdown);
    if (!written.ok()) {
      err << "wipeproof-challenger selftest: " << CliErrorText(written) << "\n";
      return CliExitCodeFor(written);
    }
    return *selftest::DocumentAllMatch(doc) ? 0 : 1;  // SelftestMarkdown checked it
  }
  if (!adversaries) return usage_error("say what to run: --adversaries");
  // The scaffold experiments (adversary 8) are no baseline of the scenarios: --only picks what runs.
  if (!options.only.empty() && !scaffold_m_given) scaffold.m_values.clear();

  // Progress (and the scaffold notice) only where someone watches: --progress, or --quiet.
  const bool show_progress = !quiet && ProgressWanted(progress);
  if (show_progress) {
    options.progress = [&err](size_t i, size_t n, const std::string& id, uint64_t done, uint64_t runs) {
      if (done == runs || done % 25 == 0) {
        err << "\rselftest [" << (i + 1) << "/" << n << "] " << id << ": " << done << "/" << runs << " runs   "
            << (done == runs ? "\n" : "") << std::flush;
      }
    };
  }
  auto result = selftest::RunSelftest(options);
  if (!result.ok()) {
    err << "wipeproof-challenger selftest: " << CliErrorText(result.status()) << "\n";
    return result.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitIncomplete;
  }
  nlohmann::json doc = selftest::SelftestJson(*result);
  if (!scaffold.m_values.empty()) {
    if (show_progress) {
      err << "selftest: scaffold-storage experiments, m =";
      for (uint32_t m : scaffold.m_values) err << " " << m;
      err << "\n" << std::flush;
    }
    selftest::AttachScaffold(&doc, ScaffoldExperimentsJson(scaffold));
  }
  const bool scaffold_ok = doc.at("scaffold").is_null() || doc.at("scaffold").value("passed", false);
  int code = doc.at("all_match").get<bool>() ? 0 : 1;
  if (json_stdout) out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!json_file.empty()) {
    Status written = WriteFileReplacing(json_file, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!written.ok()) {
      err << "wipeproof-challenger selftest: " << CliErrorText(written) << "\n";
      code = CliExitCodeFor(written);
    }
  }
  if (!markdown_file.empty()) {
    auto markdown = selftest::SelftestMarkdown(doc);
    Status written = markdown.ok() ? WriteFileReplacing(markdown_file, *markdown) : markdown.status();
    if (!written.ok()) {
      err << "wipeproof-challenger selftest: " << CliErrorText(written) << "\n";
      code = CliExitCodeFor(written);
    }
  }
  if (!json_stdout && json_file.empty() && markdown_file.empty()) {
    PrintSummary(*result, out);
    if (!doc.at("scaffold").is_null()) {
      out << "scaffold storage: " << (scaffold_ok ? "no stored set smaller than the outputs it replaces beat 1.5*m"
                                                  : "VIOLATION or error: see --json")
          << "\n";
    }
  }
  if (!scaffold_ok) err << "wipeproof-challenger selftest: scaffold storage check did not pass (see \"scaffold\")\n";
  if (!result->all_match) {
    for (const auto& r : result->scenarios) {
      if (!r.matches)
        err << "wipeproof-challenger selftest: " << r.spec.id << " does not match: " << r.verdict_text << "\n";
    }
  }
  return code;
}

int RunSelftestCommand(int argc, char** argv) {
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = google::GLOG_ERROR;  // thousands of sessions fail on purpose
  google::InitGoogleLogging(argv[0]);
  Status sodium = proto::InitSodium();
  if (!sodium.ok()) {
    std::cerr << "wipeproof-challenger selftest: " << CliErrorText(sodium) << "\n";
    return kExitIncomplete;
  }
  std::vector<std::string> args;
  for (int i = 2; i < argc; ++i) args.emplace_back(argv[i]);
  return RunSelftestCommand(args, std::cout, std::cerr);
}

const CliSubcommand& SelftestSubcommand() {
  static const CliSubcommand kSubcommand = {
      "selftest",
      "run the honest agent and adversaries in process",
      "Runs whole wipe sessions of the real challenger against an honest in-process agent and adversaries 1-7, 9\n"
      "and 10 (hidden fraction answered by recompute / random bytes / an earlier session; relay; relocation;\n"
      "under-fill; dedup; wrong key material; protocol cheats; a profile that is not the authority's), each\n"
      "speaking the real protocol over an in-memory pipe on a simulated clock, and checks that every outcome\n"
      "matches its expectation: per scenario the outcome counts, the check that caught it (the verdict's failure\n"
      "reason), the theoretical detection rate 1-(1-f)^N and the one-sided Clopper-Pearson bounds of the measured\n"
      "rate. Adversary 8 (scaffold storage: internal graph nodes kept instead of outputs) is checked by\n"
      "recompute-depth experiments on the chunk graph (docs/scaffold-depth.md) and reported under \"scaffold\".\n"
      "`selftest --render=JSON_FILE --markdown=FILE` runs nothing and renders the Markdown of a JSON document.\n\n"
      "Exit codes: 0 every outcome matches (the honest agent passed every run), 1 a mismatch or a file not\n"
      "written, 2 bad command line.",
      {"adversaries", "runs", "seed", "only", "confidence", "threads", "scaffold_m", "json", "markdown", "render",
       "progress", "quiet"},
      nullptr,
      {{"confidence", "one-sided Clopper-Pearson confidence, in (0, 1)", "0.99"},
       {"threads", "expected-label threads per session (0 = all cores, at most 256)", "1"},
       {"json", "the JSON document on stdout (--json=FILE: to FILE)"},
       {"progress", "progress lines on stderr: auto (only when stderr is a terminal), always, never"}},
      nullptr,
      [](int argc, char** argv) { return RunSelftestCommand(argc, argv); }};
  return kSubcommand;
}

}  // namespace wipeproof
