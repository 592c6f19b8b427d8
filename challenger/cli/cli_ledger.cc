#include "challenger/cli/cli_ledger.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_export.h"
#include "challenger/ledger/ledger_records.h"
#include "challenger/ledger/ledger_verify.h"
#include "common/clock.h"
#include "common/file_write.h"
#include "common/hex.h"
#include "common/json_nesting.h"
#include "proto/key_files.h"

namespace wipeproof {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnverified = 3;  // verify --export: head verified, some entries lack the envelope to check
constexpr char kProgram[] = "wipeproof-challenger ledger";

constexpr char kUsage[] =
    "usage: wipeproof-challenger ledger <show|verify|export> --challenger_key=FILE.pub [--ledger=FILE] [flags]\n"
    "\n"
    "  show    list entries, each verified; the last line says whether the chain verifies\n"
    "  verify  verify every entry: signature, sequence, hash chain, record; print the head\n"
    "  export  verify, then write the JSON export carrying the signed head\n"
    "\n"
    "Flags:\n"
    "  --ledger=FILE          ledger database (required, except for verify --export)\n"
    "  --challenger_key=FILE  challenger public key file (PREFIX.pub); required\n"
    "  --session=HEX          show, export: only this session's entries (32 hex digits)\n"
    "  --out=FILE             export: write the document to FILE instead of stdout\n"
    "  --envelopes[=false]    export: include each entry's signed envelope (default); without them\n"
    "                         `verify --export` cannot check any entry's fields and exits 3\n"
    "  --expect_head=FILE     verify: the ledger must still extend the signed head of this earlier export\n"
    "  --export=FILE          verify: check an export document on its own instead of a ledger\n";

struct Args {
  std::string sub;
  std::map<std::string, std::string> flags;
};

const std::map<std::string, std::set<std::string>>& AllowedFlags() {
  static const auto* allowed = new std::map<std::string, std::set<std::string>>{
      {"show", {"ledger", "challenger_key", "session"}},
      {"verify", {"ledger", "challenger_key", "expect_head", "export"}},
      {"export", {"ledger", "challenger_key", "session", "out", "envelopes"}},
  };
  return *allowed;
}

// Parses "--name=value" / "--name" words. Returns "" or a usage message.
std::string ParseArgs(const std::vector<std::string>& words, Args* args) {
  if (words.empty()) return "missing subcommand";
  args->sub = words[0];
  auto allowed = AllowedFlags().find(args->sub);
  if (allowed == AllowedFlags().end()) return "unknown subcommand '" + args->sub + "'";
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.rfind("--", 0) != 0) return "unexpected argument '" + word + "'";
    const size_t eq = word.find('=');
    const std::string name = word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (allowed->second.count(name) == 0) return "flag --" + name + " does not apply to " + args->sub;
    if (name == "envelopes") {
      if (eq == std::string::npos) value = "true";
      if (value != "true" && value != "false") return "--envelopes takes no value (or =true/=false)";
    } else if (value.empty()) {
      return "--" + name + " needs a value (--" + name + "=...)";
    }
    args->flags[name] = value;
  }
  return "";
}

std::string Flag(const Args& args, const std::string& name) {
  auto it = args.flags.find(name);
  return it == args.flags.end() ? "" : it->second;
}

std::string Hex(proto::ByteView bytes) { return HexEncode(bytes.begin(), bytes.size()); }
std::string Hex(const proto::Digest& d) { return HexEncode(d.data(), d.size()); }

StatusOr<std::optional<proto::Bytes>> SessionFilter(const Args& args) {
  const std::string hex = Flag(args, "session");
  if (hex.empty()) return std::optional<proto::Bytes>();
  proto::Bytes session(proto::kSessionIdBytes);
  WP_RETURN_IF_ERROR(HexDecodeExact(hex, session.size(), session.data(), "--session"));
  return std::optional<proto::Bytes>(std::move(session));
}

StatusOr<nlohmann::ordered_json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return InternalError(path + ": read failed");
  // A deep document would crash the recursive code after the parser (dump, destruction).
  WP_RETURN_IF_ERROR(CheckJsonNesting(text.str(), path));
  try {
    return nlohmann::ordered_json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(path + ": not JSON: " + e.what());
  }
}

int Fail(std::ostream& err, const std::string& sub, const Status& status) {
  err << kProgram << " " << sub << ": " << status.ToString() << "\n";
  return kExitFailure;
}

void PrintRow(std::ostream& out, const VerifiedEntry* entry, const LedgerRow& row) {
  char line[160];
  const std::string session = Hex(proto::AsView(entry != nullptr ? entry->session_id : row.session_id));
  const int64_t when = entry != nullptr ? entry->recorded_at_unix_us : row.recorded_at_unix_us;
  const std::string kind = entry != nullptr ? LedgerRecordKindName(entry->kind)
                                            : LedgerRecordKindName(static_cast<proto::LedgerRecordKind>(row.kind));
  std::snprintf(line, sizeof(line), "%c%6llu  %-10s  %-32s  %s  ", entry != nullptr ? ' ' : '!',
                static_cast<unsigned long long>(row.sequence), kind.c_str(), session.empty() ? "-" : session.c_str(),
                FormatUnixMicrosUtc(when).c_str());
  out << line;
  if (entry != nullptr) {
    out << SummaryLine(SummarizeLedgerRecord(entry->kind, proto::AsView(entry->record))) << "\n";
  } else {
    out << "(unverified)\n";
  }
}

int RunShow(const Args& args, const Ledger& ledger, const proto::PublicKey& pub, std::ostream& out, std::ostream& err) {
  auto filter = SessionFilter(args);
  if (!filter.ok()) return Fail(err, args.sub, filter.status());
  Status chain = Status::Ok();
  auto recorded = ledger.RecordedKeyId();
  if (!recorded.ok()) {
    chain = recorded.status();
  } else if (*recorded != proto::KeyIdOf(pub)) {
    chain = PermissionDeniedError("ledger was written by challenger key " + proto::KeyIdHex(*recorded) + ", not key " +
                                  proto::KeyIdHex(proto::KeyIdOf(pub)) + " (wrong key given?)");
  }
  ChainVerifier verifier(pub);
  char header[160];
  std::snprintf(header, sizeof(header), " %6s  %-10s  %-32s  %-27s  %s\n", "SEQ", "KIND", "SESSION", "RECORDED (UTC)",
                "SUMMARY");
  out << header;
  Status walked = ledger.ForEachRow(std::nullopt, [&](const LedgerRow& row) -> Status {
    std::optional<VerifiedEntry> entry;
    if (chain.ok()) {
      auto next = verifier.Next(row);
      if (next.ok()) {
        entry = std::move(next).value();
      } else {
        chain = next.status();
      }
    }
    if (!filter->has_value() || row.session_id == **filter) PrintRow(out, entry ? &*entry : nullptr, row);
    return Status::Ok();
  });
  if (!walked.ok()) return Fail(err, args.sub, walked);
  if (chain.ok()) chain = verifier.Finish();
  if (!chain.ok()) {
    out << "chain: FAILED: " << chain.ToString() << "\n";
    return Fail(err, args.sub, chain);
  }
  const LedgerHead& head = verifier.head();
  out << "chain: OK: " << head.entry_count << " entries";
  if (head.entry_count > 0) out << "; head entry " << head.sequence << ", digest " << Hex(head.digest);
  out << "\n";
  return kExitOk;
}

void PrintHead(std::ostream& out, const std::string& what, const LedgerHead& head) {
  out << what << ": OK: " << head.entry_count << " entries";
  if (head.entry_count > 0) {
    out << "; head entry " << head.sequence << " recorded " << FormatUnixMicrosUtc(head.recorded_at_unix_us)
        << ", digest " << Hex(head.digest);
  }
  out << "\n";
}

int RunVerifyExport(const Args& args, const proto::PublicKey& pub, std::ostream& out, std::ostream& err) {
  auto document = ReadJsonFile(Flag(args, "export"));
  if (!document.ok()) return Fail(err, args.sub, document.status());
  auto result = VerifyLedgerExport(*document, pub);
  if (!result.ok()) return Fail(err, args.sub, result.status());
  const std::string what = "export " + Flag(args, "export");
  if (result->unverified_entries > 0) {
    // Never print "OK" for a document whose summaries nothing signed vouches for.
    out << what << ": UNVERIFIED: signed head OK (" << result->head.entry_count << " entries); "
        << result->verified_entries
        << " listed entries verified; export without records: " << result->unverified_entries
        << " summaries unverified; re-export with --envelopes to verify them\n";
    err << kProgram << " " << args.sub << ": " << result->unverified_entries
        << " entries of the export are unverified (no envelope)\n";
    return kExitUnverified;
  }
  PrintHead(out, what, result->head);
  out << "entries: " << result->verified_entries << " listed, every field verified against its signed envelope"
      << (result->whole_chain ? "; whole chain verified up to the signed head" : " (session filter: chain not checked)")
      << "\n";
  return kExitOk;
}

int RunVerify(const Args& args, const Ledger& ledger, const proto::PublicKey& pub, std::ostream& out,
              std::ostream& err) {
  std::optional<LedgerHead> expected;
  if (!Flag(args, "expect_head").empty()) {
    auto document = ReadJsonFile(Flag(args, "expect_head"));
    if (!document.ok()) return Fail(err, args.sub, document.status());
    auto head = VerifyExportedHead(*document, pub);
    if (!head.ok()) return Fail(err, args.sub, head.status().WithContext("--expect_head"));
    expected = std::move(head).value();
  }
  auto head = ledger.Verify(pub, expected ? &*expected : nullptr);
  if (!head.ok()) return Fail(err, args.sub, head.status());
  PrintHead(out, "ledger " + ledger.path(), *head);
  if (expected && expected->entry_count > 0) {
    out << "extends the exported head: entry " << expected->sequence << ", digest " << Hex(expected->digest) << "\n";
  }
  return kExitOk;
}

int RunExport(const Args& args, const Ledger& ledger, const proto::PublicKey& pub, std::ostream& out,
              std::ostream& err) {
  auto filter = SessionFilter(args);
  if (!filter.ok()) return Fail(err, args.sub, filter.status());
  LedgerExportOptions options;
  options.session_id = *filter;
  options.include_envelopes = Flag(args, "envelopes") != "false";  // on unless --envelopes=false
  auto document = ExportLedgerJson(ledger, pub, options, SystemClock());
  if (!document.ok()) return Fail(err, args.sub, document.status());
  const std::string text = document->dump(2) + "\n";
  const std::string path = Flag(args, "out");
  if (path.empty()) {
    out << text;
    return kExitOk;
  }
  Status written = WriteFileReplacing(path, text);
  if (!written.ok()) return Fail(err, args.sub, written);
  err << kProgram << " export: wrote " << (*document)["entries"].size() << " entries and the signed head to " << path
      << "\n";
  return kExitOk;
}

}  // namespace

int RunLedgerCommand(const std::vector<std::string>& words, std::ostream& out, std::ostream& err) {
  for (const std::string& word : words) {
    if (word == "--help" || word == "-h" || word == "help") {
      out << kUsage;
      return kExitOk;
    }
  }
  Args args;
  const std::string usage = ParseArgs(words, &args);
  if (!usage.empty()) {
    err << kProgram << ": " << usage << "\n" << kUsage;
    return kExitUsage;
  }
  if (Flag(args, "challenger_key").empty()) {
    err << kProgram << " " << args.sub << ": --challenger_key=FILE.pub is required\n";
    return kExitUsage;
  }
  const bool export_only = args.sub == "verify" && !Flag(args, "export").empty();
  if (export_only && (!Flag(args, "ledger").empty() || !Flag(args, "expect_head").empty())) {
    err << kProgram << " verify: --export checks a document on its own; drop --ledger and --expect_head\n";
    return kExitUsage;
  }
  if (!export_only && Flag(args, "ledger").empty()) {
    err << kProgram << " " << args.sub << ": --ledger=FILE is required\n";
    return kExitUsage;
  }
  auto pub = proto::ReadPublicKeyFile(Flag(args, "challenger_key"));
  if (!pub.ok()) return Fail(err, args.sub, pub.status().WithContext("--challenger_key"));
  if (export_only) return RunVerifyExport(args, *pub, out, err);

  auto ledger = Ledger::OpenReadOnly(Flag(args, "ledger"));
  if (!ledger.ok()) return Fail(err, args.sub, ledger.status());
  if (args.sub == "show") return RunShow(args, **ledger, *pub, out, err);
  if (args.sub == "verify") return RunVerify(args, **ledger, *pub, out, err);
  return RunExport(args, **ledger, *pub, out, err);
}

int RunLedgerCommand(int argc, char** argv) {
  std::vector<std::string> words;
  for (int i = 2; i < argc; ++i) words.emplace_back(argv[i]);
  return RunLedgerCommand(words, std::cout, std::cerr);
}

}  // namespace wipeproof
