#include "challenger/cli/cli_ledger.h"

#include <fcntl.h>
#include <gflags/gflags.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_calibration_flags.h"
#include "challenger/cli/cli_flags.h"
#include "challenger/cli/cli_ledger_audit.h"
#include "challenger/cli/cli_ledger_certificate.h"
#include "challenger/fleet/inventory.h"
#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_export.h"
#include "challenger/ledger/ledger_record_json.h"
#include "challenger/ledger/ledger_records.h"
#include "challenger/ledger/ledger_sessions.h"
#include "challenger/ledger/ledger_verify.h"
#include "common/cli_exit_codes.h"
#include "common/cli_subcommand.h"
#include "common/clock.h"
#include "common/file_write.h"
#include "common/hex.h"
#include "common/json_fields.h"
#include "common/json_nesting.h"
#include "common/terminal_text.h"
#include "proto/key_files.h"

// The ledger's own flags; the others (--ledger, --challenger_key, --node, --out, --authority_key,
// --inventory, --json, --threads, --wave) are the challenger's (cli_flags.cc), described below as the
// ledger reads them.
DEFINE_string(session, "", "show, export, audit: only this session's entries (32 hex digits)");
DEFINE_bool(envelopes, true,
            "export: include each entry's signed envelope; without them `verify --export` cannot check any "
            "entry's fields and exits 3");
DEFINE_string(expect_head, "", "verify: the ledger must still extend the signed head of this earlier export");
DEFINE_string(export, "",
              "verify, audit, decode: work on an export document instead of a ledger; audit: several exports as a "
              "comma list or a repeated flag. At most 1 GiB each (a larger file is refused at once, exit 2: use "
              "--ledger)");
DEFINE_uint64(sequence, 0, "decode: only entry N (not given: every entry, as a JSON array)");
DEFINE_string(record, "", "decode: a file holding one record's bytes, of kind --kind (e.g. verdict)");
DEFINE_string(kind, "", "decode: the kind of --record's bytes (e.g. verdict, order, fillReport)");
DEFINE_string(certificate, "",
              "audit: check this certificate (`ledger certificate`) on its own, instead of an export or a ledger");

namespace wipeproof {
namespace {

// Exit codes: common/cli_exit_codes.h. kExitIncomplete: verify --export, the head verified but some
// entries lack the envelope to check them.
constexpr char kProgram[] = "wipeproof-challenger ledger";
// The files defining the flags of this binary: a flag of theirs that a subcommand does not take is
// refused.
const std::vector<std::string>& FlagFiles() {
  static const std::vector<std::string> kFiles = {"challenger/cli/cli_flags.cc", "challenger/cli/cli_ledger.cc",
                                                  kCalibrationFlagsFile};
  return kFiles;
}

// The largest export document (--export, --expect_head) read: a larger file is refused at once, by
// its size (it is read whole and parsed in memory, a few times its size). An export with envelopes
// takes about 90 bytes per challenged label plus 15 KB per session (the demo's: 105 KB for 16 rounds
// of 64 labels), so 1 GiB holds about 350 sessions of an 8-GPU node at 16 rounds of 256 labels per
// GPU, or a day's wave of 256 such nodes. A larger ledger is verified and audited as it is (--ledger).
constexpr uint64_t kMaxExportFileBytes = uint64_t{1} << 30;
constexpr char kMaxExportFileWhy[] =
    "the largest export read; verify or audit a larger ledger with --ledger instead of an export of it";

// Every ledger flag as the ledger reads it (the challenger's own flags have other help there).
const std::vector<CliFlagHelp>& LedgerFlagHelp() {
  static const std::vector<CliFlagHelp> kHelp = {
      {"ledger",
       "ledger database (required, except for verify/audit/decode --export); verify, audit: several ledgers as a "
       "comma list or a repeated flag"},
      {"challenger_key",
       "challenger public key file (PREFIX.pub); required except for decode; verify of several ledgers: one key "
       "for all, or a comma list, one each"},
      {"node", "show: only the sessions of this node (unknown to the ledger: exit 2)"},
      {"session",
       "show, export, audit: only this session's entries (32 hex digits); certificate: the session to certify "
       "(with --wave: the run of that wave listing it)"},
      {"out", "export, certificate: write the document to FILE instead of stdout"},
      {"authority_key",
       "export: add the authority public key; audit, certificate: the authority key to pin (required)"},
      {"inventory",
       "export, audit --ledger: add the inventory's node public keys; certificate: node keys to choose from "
       "(default: the inventories the ledger records)"},
      {"json", "show, audit: print JSON instead of a table (decode always prints JSON)"},
      {"threads", "audit: threads recomputing labels (default 0: all cores); certificate: the same, for its audit"},
      {"sequence", "decode: only entry N", "every entry, as a JSON array"},
      {"wave",
       "certificate: one certificate of this wave's latest verdict and every member session (with --session: "
       "of the run listing that session)"},
  };
  return kHelp;
}

// The nested subcommands: each one's help and the flags it takes (RunLedgerCommand runs them).
const std::vector<CliSubcommand>& LedgerSubcommands() {
  static const std::vector<CliSubcommand> kSubs = {
      {"show",
       "list entries, each verified; the last line says whether the chain verifies",
       "Lists the entries, each verified as it goes; a last line says whether the whole chain verifies.\n"
       "With --json the sessions (of --node) as JSON.",
       {"ledger", "challenger_key", "session", "node", "json"},
       nullptr,
       LedgerFlagHelp()},
      {"verify",
       "verify every entry: signature, sequence, hash chain, record; print the head",
       "Verifies every entry: signature, sequence, hash chain, record; prints the head. Several ledgers: each\n"
       "on its own, one line each and a total, and no session in two of them.",
       {"ledger", "challenger_key", "expect_head", "export"},
       nullptr,
       LedgerFlagHelp()},
      {"export",
       "verify, then write the JSON export carrying the signed head, the keys and the schema digest",
       "Verifies the ledger, then writes the JSON export carrying the signed head, the keys and the schema\n"
       "digest.",
       {"ledger", "challenger_key", "session", "out", "envelopes", "authority_key", "inventory"},
       nullptr,
       LedgerFlagHelp()},
      {"audit",
       "re-verify sessions from an export alone, every answered label recomputed; or check a certificate",
       "Re-verifies sessions from an export alone: signatures under the pinned keys, the chain, every answered\n"
       "label recomputed from the seed, deadlines, node-signed transcripts, verdicts and their bounds, receipts.\n"
       "With --certificate: checks a certificate on its own, the same way, and every byte of it against what\n"
       "its signed records say (docs/certificate.md).",
       {"export", "ledger", "certificate", "challenger_key", "authority_key", "inventory", "session", "json",
        "threads"},
       nullptr,
       LedgerFlagHelp()},
      {"certificate",
       "write one self-contained, checkable certificate of a session or a wave",
       "Writes the certificate of one session (--session) or of a wave's verdict and every member session\n"
       "(--wave): node(s), devices, times, outcome, statements and assumptions, with the signed records they\n"
       "rest on and the public keys. Others check it offline: `ledger audit --certificate=FILE` or\n"
       "docs/audit_recipe.py --certificate (docs/certificate.md).",
       {"ledger", "challenger_key", "authority_key", "inventory", "session", "wave", "out", "threads"},
       nullptr,
       LedgerFlagHelp()},
      {"decode",
       "print entries or a record as plain JSON (decodes only; verifies nothing)",
       "Prints entries or a record as plain JSON. It decodes only and verifies nothing.",
       {"ledger", "export", "sequence", "record", "kind", "json"},
       nullptr,
       LedgerFlagHelp()},
  };
  return kSubs;
}

const CliSubcommand* FindLedgerSubcommand(const std::string& name) {
  for (const CliSubcommand& sub : LedgerSubcommands()) {
    if (name == sub.name) return &sub;
  }
  return nullptr;
}

// `ledger --help`: every subcommand and every flag.
void PrintLedgerUsage(std::ostream& out) {
  std::string names;
  for (const CliSubcommand& sub : LedgerSubcommands()) names += (names.empty() ? "" : "|") + std::string(sub.name);
  out << "usage: " << kProgram << " <" << names << "> [flags]\n\n";
  size_t width = 0;
  for (const CliSubcommand& sub : LedgerSubcommands()) width = std::max(width, std::strlen(sub.name));
  for (const CliSubcommand& sub : LedgerSubcommands()) {
    out << "  " << sub.name << std::string(width + 2 - std::strlen(sub.name), ' ') << sub.synopsis << "\n";
  }
  out << "\n`" << kProgram << " <subcommand> --help` lists the subcommand's flags and what each does there.\n";
}

// The words after "ledger" as a subcommand and the values of the flags set, parsed by gflags
// (ParseCliSubcommandFlags) with every flag restored afterwards, so the parse leaves no state.
struct Args {
  std::string sub;
  std::map<std::string, std::string> flags;  // the flags given, by name, as gflags holds them ("true")
};

// The value gflags holds for a ledger flag, by name.
std::string FlagValue(const std::string& name) {
  // The challenger's flags, read through their variables so their definitions are linked in.
  if (name == "ledger") return FLAGS_ledger;
  if (name == "challenger_key") return FLAGS_challenger_key;
  if (name == "node") return FLAGS_node;
  if (name == "out") return FLAGS_out;
  if (name == "authority_key") return FLAGS_authority_key;
  if (name == "inventory") return FLAGS_inventory;
  if (name == "json") return FLAGS_json ? "true" : "false";
  if (name == "threads") return std::to_string(FLAGS_threads);
  std::string value;
  gflags::GetCommandLineOption(name.c_str(), &value);
  return value;
}

// Returns "" or a usage message.
std::string ParseArgs(const std::vector<std::string>& words, Args* args) {
  if (words.empty()) return "missing subcommand";
  args->sub = words[0];
  const CliSubcommand* sub = FindLedgerSubcommand(args->sub);
  if (sub == nullptr) return "unknown subcommand '" + args->sub + "'";
  // verify and audit take several --ledger (audit: --export): a repeated flag's values join into one
  // comma list (SplitList); any other flag given twice is refused (gflags would keep the last).
  std::vector<std::string> flags;
  std::map<std::string, size_t> given;  // flag name -> its index in `flags`
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i];
    const size_t eq = word.find('=');
    const std::string name = word.rfind("--", 0) == 0 ? word.substr(2, eq == std::string::npos ? eq : eq - 2) : "";
    auto seen = name.empty() ? given.end() : given.find(name);
    if (seen == given.end()) {
      if (!name.empty()) given[name] = flags.size();
      flags.push_back(word);
      continue;
    }
    const bool listable = (args->sub == "verify" && name == "ledger") ||
                          (args->sub == "audit" && (name == "ledger" || name == "export"));
    if (!listable || eq == std::string::npos || flags[seen->second].find('=') == std::string::npos) {
      return "--" + name + " is given twice";
    }
    flags[seen->second] += "," + word.substr(eq + 1);
  }
  std::vector<char*> argv;
  std::string program = kProgram, sub_name = args->sub;
  argv.push_back(program.data());
  argv.push_back(sub_name.data());
  for (std::string& flag : flags) argv.push_back(flag.data());
  gflags::FlagSaver restore_every_flag;
  const std::string bad = ParseCliSubcommandFlags(kProgram, *sub, static_cast<int>(argv.size()), argv.data(), FlagFiles());
  if (!bad.empty()) return bad;
  for (const std::string& name : sub->flags) {
    gflags::CommandLineFlagInfo info;
    if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info) || info.is_default) continue;
    args->flags[name] = FlagValue(name);
    if (info.type == "string" && args->flags[name].empty()) return "--" + name + " needs a value (--" + name + "=...)";
  }
  return "";
}

// A comma list of paths (--ledger, --export, --challenger_key). Returns "" or a usage message (an
// empty item; with `unique`, a path given twice, or two paths of one file: same device and inode,
// e.g. ./l.db and l.db, or a link and its target; a path that cannot be stat()ed is left to the
// command to report).
std::string SplitList(const std::string& flag, const std::string& text, std::vector<std::string>* items,
                      bool unique = true) {
  items->clear();
  std::map<std::pair<dev_t, ino_t>, std::string> files;  // of the items stat() found
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) return "--" + flag + " has an empty item in '" + text + "'";
    for (const std::string& seen : *items) {
      if (unique && seen == item) return "--" + flag + " names " + item + " twice";
    }
    struct stat st {};
    if (unique && ::stat(item.c_str(), &st) == 0) {
      auto [it, inserted] = files.emplace(std::make_pair(st.st_dev, st.st_ino), item);
      if (!inserted) {
        return "--" + flag + " names one file twice: " + it->second + " and " + item +
               " are the same file (give each " + flag + " once)";
      }
    }
    items->push_back(item);
    if (comma == std::string::npos) return "";
    start = comma + 1;
  }
}

std::string Flag(const Args& args, const std::string& name) {
  auto it = args.flags.find(name);
  return it == args.flags.end() ? "" : it->second;
}


StatusOr<std::optional<proto::Bytes>> SessionFilter(const Args& args) {
  const std::string hex = Flag(args, "session");
  if (hex.empty()) return std::optional<proto::Bytes>();
  proto::Bytes session(proto::kSessionIdBytes);
  WP_RETURN_IF_ERROR(HexDecodeExact(hex, session.size(), session.data(), "--session"));
  return std::optional<proto::Bytes>(std::move(session));
}

// An export (--export, --expect_head) read whole: refused at once, by its size, over kMaxExportFileBytes.
StatusOr<nlohmann::ordered_json> ReadJsonFile(const std::string& path) {
  WP_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, kMaxExportFileBytes, kMaxExportFileWhy));
  // A deep document would crash the recursive code after the parser (dump, destruction).
  WP_RETURN_IF_ERROR(CheckJsonNesting(text, path));
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(path + ": not JSON: " + e.what());
  }
}

// The message without its code name, and the exit code of the table for `status`: 2 for a wrong,
// missing or unreadable file, 1 for a ledger or export that does not verify, 3 for an I/O error.
int Fail(std::ostream& err, const std::string& sub, const Status& status) {
  err << kProgram << " " << sub << ": " << CliErrorText(status) << "\n";
  return CliExitCodeFor(status);
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
    out << TerminalSafe(SummaryLine(SummarizeLedgerRecord(entry->kind, proto::AsView(entry->record)))) << "\n";
  } else {
    out << "(unverified)\n";
  }
}

// --node: the ledger's sessions of that node (the whole chain verified), or NOT_FOUND naming the
// nodes the ledger knows.
StatusOr<std::vector<LedgerSessionSummary>> NodeSessions(const LedgerSessions& all, const std::string& node,
                                                         const std::string& ledger_path) {
  std::vector<LedgerSessionSummary> out;
  std::set<std::string> nodes;
  for (const LedgerSessionSummary& s : all.sessions) {
    nodes.insert(s.node);
    if (node.empty() || s.node == node) out.push_back(s);
  }
  if (!node.empty() && out.empty()) {
    std::string known;
    for (const std::string& n : nodes) known += (known.empty() ? "" : ", ") + n;
    // Escaped once, where printed (CliErrorText).
    return NotFoundError("no session of node '" + node + "' in ledger " + ledger_path +
                         (known.empty() ? " (it holds no session)" : " (its nodes: " + known + ")"));
  }
  return out;
}

// `show --json`: {"ledger": {path, entries, head_sequence, head_digest, verified}, "node": NAME or
// null, "sessions": [LedgerSessionJson ...]} on one line.
int RunShowJson(const Args& args, const Ledger& ledger, const proto::PublicKey& pub, std::ostream& out,
                std::ostream& err) {
  auto filter = SessionFilter(args);
  if (!filter.ok()) return Fail(err, args.sub, filter.status());
  auto all = ReadLedgerSessions(ledger, pub);
  if (!all.ok()) return Fail(err, args.sub, all.status());
  auto sessions = NodeSessions(*all, Flag(args, "node"), ledger.path());
  if (!sessions.ok()) {
    Fail(err, args.sub, sessions.status());
    return kExitUsage;  // a node the ledger does not know: a configuration error
  }
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const LedgerSessionSummary& s : *sessions) {
    if (!filter->has_value() || s.session_id == **filter) list.push_back(LedgerSessionJson(s));
  }
  const LedgerHead& head = all->head;
  nlohmann::ordered_json document;
  document["ledger"] = {{"path", ledger.path()},
                        {"entries", head.entry_count},
                        {"head_sequence", head.entry_count > 0 ? nlohmann::ordered_json(head.sequence) : nullptr},
                        {"head_digest", head.entry_count > 0 ? nlohmann::ordered_json(Hex(head.digest)) : nullptr},
                        {"verified", true}};
  document["node"] = Flag(args, "node").empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(Flag(args, "node"));
  document["sessions"] = std::move(list);
  out << document.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  return kExitOk;
}

int RunShow(const Args& args, const Ledger& ledger, const proto::PublicKey& pub, std::ostream& out, std::ostream& err) {
  if (Flag(args, "json") == "true") return RunShowJson(args, ledger, pub, out, err);
  auto filter = SessionFilter(args);
  if (!filter.ok()) return Fail(err, args.sub, filter.status());
  // --node: the entries of that node's sessions (found in the verified chain).
  std::optional<std::set<proto::Bytes>> node_sessions;
  if (!Flag(args, "node").empty()) {
    auto all = ReadLedgerSessions(ledger, pub);
    if (!all.ok()) {
      return Fail(
          err, args.sub,
          all.status().WithContext("--node needs a ledger that verifies (show without --node marks bad entries)"));
    }
    auto sessions = NodeSessions(*all, Flag(args, "node"), ledger.path());
    if (!sessions.ok()) {
      Fail(err, args.sub, sessions.status());
      return kExitUsage;
    }
    node_sessions.emplace();
    for (const LedgerSessionSummary& s : *sessions) node_sessions->insert(s.session_id);
  }
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
    const bool shown = (!filter->has_value() || row.session_id == **filter) &&
                       (!node_sessions || node_sessions->count(row.session_id) > 0);
    if (shown) PrintRow(out, entry ? &*entry : nullptr, row);
    return Status::Ok();
  });
  if (!walked.ok()) return Fail(err, args.sub, walked);
  if (chain.ok()) chain = verifier.Finish();
  if (!chain.ok()) {
    out << "chain: FAILED: " << CliErrorText(chain) << "\n";
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
  if (!result.ok()) {
    // The document is what is checked: a field edited or taken out is a failed check (1), a key it
    // was not made with an input to fix (2).
    Fail(err, args.sub, result.status());
    return result.status().code() == StatusCode::kPermissionDenied ? kExitUsage : kExitFailed;
  }
  const std::string what = "export " + Flag(args, "export");
  if (result->unverified_entries > 0) {
    // Never print "OK" for a document whose summaries nothing signed vouches for.
    out << what << ": UNVERIFIED: signed head OK (" << result->head.entry_count << " entries); "
        << result->verified_entries
        << " listed entries verified; export without records: " << result->unverified_entries
        << " summaries unverified; re-export with --envelopes to verify them\n";
    err << kProgram << " " << args.sub << ": " << result->unverified_entries
        << " entries of the export are unverified (no envelope)\n";
    return kExitIncomplete;
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
  // The documents sit outside the chain: each must be its digest's (an altered one would fail every
  // audit of the sessions whose delegation names it).
  auto documents = ledger.Documents();
  if (!documents.ok()) return Fail(err, args.sub, documents.status());
  PrintHead(out, "ledger " + ledger.path(), *head);
  if (!documents->empty()) out << "documents: " << documents->size() << ", each its digest's\n";
  if (expected && expected->entry_count > 0) {
    out << "extends the exported head: entry " << expected->sequence << ", digest " << Hex(expected->digest) << "\n";
  }
  return kExitOk;
}

// `verify` of several ledgers (a challenger StatefulSet's replicas, one ledger each): each verified
// on its own, one line each ("ledger FILE: OK: ..." as one ledger's, or "ledger FILE: FAILED: ..."),
// then no session recorded in two of them, then a total line. `keys[i]` is ledger i's key.
int RunVerifyLedgers(const std::vector<std::string>& paths, const std::vector<proto::PublicKey>& keys,
                     std::ostream& out, std::ostream& err) {
  std::vector<std::pair<std::string, std::vector<proto::Bytes>>> ids;
  std::set<proto::Bytes> distinct;
  size_t failed = 0;
  int worst = kExitOk;  // of the ledgers that failed: 1 tampering beats 3 I/O beats 2 a bad file or key
  uint64_t entries = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string what = "ledger " + paths[i];
    auto head = [&]() -> StatusOr<LedgerHead> {
      WP_ASSIGN_OR_RETURN(auto ledger, Ledger::OpenReadOnly(paths[i]));
      WP_ASSIGN_OR_RETURN(LedgerHead verified, ledger->Verify(keys[i]));
      WP_ASSIGN_OR_RETURN(std::vector<proto::Bytes> sessions, VerifiedSessionIds(*ledger, verified));
      distinct.insert(sessions.begin(), sessions.end());
      ids.push_back({what, std::move(sessions)});
      return verified;
    }();
    if (!head.ok()) {
      ++failed;
      const int code = CliExitCodeFor(head.status());
      if (code == kExitFailed || worst == kExitOk || (code == kExitIncomplete && worst == kExitUsage)) worst = code;
      out << what << ": FAILED: " << CliErrorText(head.status()) << "\n";
      continue;
    }
    PrintHead(out, what, *head);
    entries += head->entry_count;
  }
  const std::vector<SessionInSeveralLedgers> copies = FindSessionsInSeveralLedgers(ids);
  for (const SessionInSeveralLedgers& copy : copies)
    out << "FAILED: " << TerminalSafe(DescribeSessionInSeveralLedgers(copy)) << "\n";
  const bool ok = failed == 0 && copies.empty();
  out << "total: " << (ok ? "OK" : "FAILED") << ": " << paths.size() << " ledgers, " << paths.size() - failed
      << " verified (" << entries << " entries, " << distinct.size() << " sessions)";
  if (failed > 0) out << ", " << failed << " FAILED";
  out << "; "
      << (copies.empty() ? std::string("no session in two ledgers")
                         : std::to_string(copies.size()) + " session(s) in two or more ledgers")
      << "\n";
  if (ok) return kExitOk;
  err << kProgram << " verify: " << failed << " of " << paths.size() << " ledgers failed to verify";
  if (!copies.empty()) err << "; " << copies.size() << " session(s) recorded in two or more ledgers";
  err << "\n";
  // A session in two ledgers is a failed verification; otherwise the worst ledger's code, as one
  // ledger alone would exit (a missing file or a wrong key: 2, common/cli_exit_codes.h).
  if (!copies.empty() || worst == kExitOk) return kExitFailed;
  return worst;
}

// The node keys of --inventory, for exports (ledger_export.h "nodes").
StatusOr<std::vector<NodeKey>> InventoryNodeKeys(const std::string& path) {
  std::vector<NodeKey> keys;
  if (path.empty()) return keys;
  WP_ASSIGN_OR_RETURN(Inventory inventory, LoadInventory(path));
  for (const InventoryNode& node : inventory.nodes) keys.push_back({node.name, node.public_key});
  return keys;
}

// The export options of --session, --envelopes, --authority_key and --inventory.
StatusOr<LedgerExportOptions> ExportOptions(const Args& args) {
  LedgerExportOptions options;
  WP_ASSIGN_OR_RETURN(options.session_id, SessionFilter(args));
  options.include_envelopes = Flag(args, "envelopes") != "false";  // on unless --envelopes=false
  if (!Flag(args, "authority_key").empty()) {
    auto authority = proto::ReadPublicKeyFile(Flag(args, "authority_key"));
    if (!authority.ok()) return authority.status().WithContext("--authority_key");
    options.authority_key = *authority;
  }
  auto nodes = InventoryNodeKeys(Flag(args, "inventory"));
  if (!nodes.ok()) return nodes.status().WithContext("--inventory");
  options.node_keys = std::move(nodes).value();
  return options;
}

// --out against every file the command reads (the ledger, the keys, the inventory): INVALID_ARGUMENT
// naming the one it is, so a slip of the flag never destroys a key or the authority's inventory.
Status RefuseOutputOverInputs(const Args& args) {
  const std::string out = Flag(args, "out");
  if (out.empty()) return Status::Ok();
  const std::pair<const char*, const char*> inputs[] = {{"ledger", "the ledger (--ledger)"},
                                                        {"challenger_key", "the challenger key (--challenger_key)"},
                                                        {"authority_key", "the authority key (--authority_key)"},
                                                        {"inventory", "the inventory (--inventory)"}};
  for (const auto& [flag, what] : inputs) {
    if (!Flag(args, flag).empty()) WP_RETURN_IF_ERROR(RefuseOutputOverInput(out, Flag(args, flag), what));
  }
  // And the files the inventory names (node keys, pinned certificates).
  if (!Flag(args, "inventory").empty()) {
    auto inventory = LoadInventory(Flag(args, "inventory"));
    if (!inventory.ok()) return inventory.status().WithContext("--inventory");
    for (const InventoryNode& node : inventory->nodes) {
      for (const std::string& file : node.files_read) {
        WP_RETURN_IF_ERROR(RefuseOutputOverInput(out, file, "a file the inventory names for node " + node.name));
      }
    }
  }
  return Status::Ok();
}

int RunExport(const Args& args, const Ledger& ledger, const proto::PublicKey& pub, std::ostream& out,
              std::ostream& err) {
  if (Status inputs = RefuseOutputOverInputs(args); !inputs.ok()) return Fail(err, args.sub, inputs);
  auto options = ExportOptions(args);
  if (!options.ok()) return Fail(err, args.sub, options.status());
  auto document = ExportLedgerJson(ledger, pub, *options, SystemClock());
  if (!document.ok()) return Fail(err, args.sub, document.status());
  const std::string text = document->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
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

// --threads of audit and certificate into *threads. Returns "" or a usage message.
std::string ThreadsFlag(const Args& args, int* threads) {
  const std::string& text = Flag(args, "threads");
  if (text.empty()) return "";
  if (text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos) {
    return "--threads takes a whole number below 10000";
  }
  *threads = std::stoi(text);
  return "";
}

// The pinned keys of --authority_key and --challenger_key, with --threads, for certificates.
StatusOr<CertificateTrust> TrustFlags(const Args& args) {
  CertificateTrust trust;
  auto authority = proto::ReadPublicKeyFile(Flag(args, "authority_key"));
  if (!authority.ok()) return authority.status().WithContext("--authority_key");
  auto challenger = proto::ReadPublicKeyFile(Flag(args, "challenger_key"));
  if (!challenger.ok()) return challenger.status().WithContext("--challenger_key");
  trust.authority = *authority;
  trust.challenger = *challenger;
  trust.read_inventory = ReadSignedInventory;
  return trust;
}

// `certificate`: of --session or --wave, from --ledger.
int RunCertificate(const Args& args, std::ostream& out, std::ostream& err) {
  if (Status inputs = RefuseOutputOverInputs(args); !inputs.ok()) return Fail(err, args.sub, inputs);
  auto trust = TrustFlags(args);
  if (!trust.ok()) return Fail(err, args.sub, trust.status());
  if (const std::string usage = ThreadsFlag(args, &trust->threads); !usage.empty()) {
    err << kProgram << " certificate: " << usage << "\n";
    return kExitUsage;
  }
  CertificateRequest request;
  auto session = SessionFilter(args);
  if (!session.ok()) return Fail(err, args.sub, session.status());
  request.session_id = *session;
  request.wave = Flag(args, "wave");
  auto nodes = InventoryNodeKeys(Flag(args, "inventory"));
  if (!nodes.ok()) return Fail(err, args.sub, nodes.status().WithContext("--inventory"));
  request.node_keys = std::move(nodes).value();
  auto ledger = Ledger::OpenReadOnly(Flag(args, "ledger"));
  if (!ledger.ok()) return Fail(err, args.sub, ledger.status());
  return RunWriteCertificate(**ledger, request, *trust, Flag(args, "out"), out, err);
}

// `audit --certificate`: one certificate on its own.
int RunAuditCertificate(const Args& args, std::ostream& out, std::ostream& err) {
  for (const char* other : {"export", "ledger", "inventory", "session", "json"}) {
    if (!Flag(args, other).empty() && Flag(args, other) != "false") {
      err << kProgram << " audit: --certificate checks a certificate on its own: drop --" << other << "\n";
      return kExitUsage;
    }
  }
  auto trust = TrustFlags(args);
  if (!trust.ok()) return Fail(err, args.sub, trust.status());
  if (const std::string usage = ThreadsFlag(args, &trust->threads); !usage.empty()) {
    err << kProgram << " audit: " << usage << "\n";
    return kExitUsage;
  }
  return RunVerifyCertificate(Flag(args, "certificate"), *trust, out, err);
}

// `audit`: of --export, or of --ledger exported in memory with --authority_key and --inventory.
int RunAudit(const Args& args, const proto::PublicKey& challenger, std::ostream& out, std::ostream& err) {
  AuditCommand command;
  command.challenger = challenger;
  command.json = Flag(args, "json") == "true";
  auto authority = proto::ReadPublicKeyFile(Flag(args, "authority_key"));
  if (!authority.ok()) return Fail(err, args.sub, authority.status().WithContext("--authority_key"));
  command.authority = *authority;
  auto session = SessionFilter(args);
  if (!session.ok()) return Fail(err, args.sub, session.status());
  command.session = *session;
  if (const std::string usage = ThreadsFlag(args, &command.threads); !usage.empty()) {
    err << kProgram << " audit: " << usage << "\n";
    return kExitUsage;
  }
  const bool from_exports = !Flag(args, "export").empty();
  std::vector<std::string> paths;
  if (const std::string usage =
          SplitList(from_exports ? "export" : "ledger", Flag(args, from_exports ? "export" : "ledger"), &paths);
      !usage.empty()) {
    err << kProgram << " audit: " << usage << "\n";
    return kExitUsage;
  }
  LedgerExportOptions options;
  if (!from_exports) {
    options.authority_key = command.authority;
    auto nodes = InventoryNodeKeys(Flag(args, "inventory"));
    if (!nodes.ok()) return Fail(err, args.sub, nodes.status().WithContext("--inventory"));
    options.node_keys = std::move(nodes).value();
  }
  auto load = [&](size_t i) -> StatusOr<nlohmann::ordered_json> {
    if (from_exports) return ReadJsonFile(paths[i]);
    WP_ASSIGN_OR_RETURN(auto ledger, Ledger::OpenReadOnly(paths[i]));
    return ExportLedgerJson(*ledger, challenger, options, SystemClock());
  };
  std::vector<std::string> sources;
  for (const std::string& path : paths) sources.push_back((from_exports ? "export " : "ledger ") + path);
  if (paths.size() > 1) return RunLedgerAudits(sources, load, command, out, err);
  command.source = sources[0];
  auto document = load(0);
  if (!document.ok()) return Fail(err, args.sub, document.status());
  return RunLedgerAudit(*document, command, out, err);
}

// Reads a file of record bytes (at most a ledger record's size; a FIFO or other non-regular file is
// refused without reading it).
StatusOr<proto::Bytes> ReadRecordFile(const std::string& path) {
  WP_ASSIGN_OR_RETURN(std::string bytes, ReadTextFile(path, kMaxLedgerRecordBytes, "larger than any ledger record"));
  return proto::Bytes(bytes.begin(), bytes.end());
}

// `decode`: --record with --kind, or the entries (one with --sequence) of --export or --ledger.
int RunDecode(const Args& args, std::ostream& out, std::ostream& err) {
  std::optional<uint64_t> sequence;
  if (!Flag(args, "sequence").empty()) {
    const std::string& text = Flag(args, "sequence");
    if (text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) {
      err << kProgram << " decode: --sequence takes an entry number\n";
      return kExitUsage;
    }
    sequence = std::stoull(text);
  }
  auto print = [&](const StatusOr<nlohmann::ordered_json>& json) {
    if (!json.ok()) return Fail(err, args.sub, json.status());
    out << json->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return kExitOk;
  };
  if (!Flag(args, "record").empty()) {
    auto kind = ParseLedgerRecordKind(Flag(args, "kind"));
    if (!kind.ok()) return Fail(err, args.sub, kind.status().WithContext("--kind"));
    auto bytes = ReadRecordFile(Flag(args, "record"));
    if (!bytes.ok()) return Fail(err, args.sub, bytes.status());
    return print(LedgerRecordToJson(*kind, proto::AsView(*bytes)));
  }
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  auto add = [&](uint64_t at, const proto::Bytes& envelope) -> Status {
    if (sequence.has_value() && at != *sequence) return Status::Ok();
    auto json = LedgerEntryToJson(proto::AsView(envelope));
    if (!json.ok()) return json.status().WithContext("entry " + std::to_string(at));
    entries.push_back(std::move(json).value());
    return Status::Ok();
  };
  if (!Flag(args, "export").empty()) {
    auto document = ReadJsonFile(Flag(args, "export"));
    if (!document.ok()) return Fail(err, args.sub, document.status());
    if (!document->contains("entries") || !document->at("entries").is_array()) {
      return Fail(err, args.sub, InvalidArgumentError("export: no 'entries' array"));
    }
    for (const auto& entry : document->at("entries")) {
      if (!entry.is_object() || !entry.contains("sequence") || !entry.at("sequence").is_number_unsigned() ||
          !entry.contains("envelope") || !entry.at("envelope").is_string()) {
        return Fail(err, args.sub, InvalidArgumentError("export: an entry without 'sequence' and 'envelope'"));
      }
      auto envelope = HexDecode(entry.at("envelope").get<std::string>());
      if (!envelope.ok()) return Fail(err, args.sub, envelope.status().WithContext("export entry envelope"));
      Status added = add(entry.at("sequence").get<uint64_t>(), *envelope);
      if (!added.ok()) return Fail(err, args.sub, added);
    }
  } else {
    auto ledger = Ledger::OpenReadOnly(Flag(args, "ledger"));
    if (!ledger.ok()) return Fail(err, args.sub, ledger.status());
    Status walked =
        (*ledger)->ForEachRow(std::nullopt, [&](const LedgerRow& row) { return add(row.sequence, row.envelope); });
    if (!walked.ok()) return Fail(err, args.sub, walked);
  }
  if (!sequence.has_value()) return print(entries);
  if (entries.empty()) return Fail(err, args.sub, NotFoundError("no entry " + std::to_string(*sequence)));
  return print(entries[0]);
}

}  // namespace

int RunLedgerCommand(const std::vector<std::string>& words, std::ostream& out, std::ostream& err) {
  const bool known_sub = !words.empty() && FindLedgerSubcommand(words[0]) != nullptr;
  // `ledger <sub> --help` (or `ledger help <sub>`): that subcommand's help; `ledger --help`: the
  // whole. A subcommand named there that does not exist is the usage error it is without --help.
  const auto is_help = [](const std::string& w) { return w == "--help" || w == "-h" || w == "-help" || w == "help"; };
  if (std::any_of(words.begin(), words.end(), is_help)) {
    std::vector<std::string> named;  // the words that are neither flags nor help
    for (const std::string& word : words) {
      if (!is_help(word) && word.rfind('-', 0) != 0) named.push_back(word);
    }
    if (named.empty()) {
      PrintLedgerUsage(out);
      return kExitOk;
    }
    const CliSubcommand* sub = FindLedgerSubcommand(named[0]);
    if (sub == nullptr) {
      err << kProgram << ": unknown subcommand '" << TerminalSafe(named[0]) << "' (see " << kProgram << " --help)\n";
      return kExitUsage;
    }
    if (named.size() > 1) {
      err << kProgram << " " << named[0] << ": unexpected argument '" << TerminalSafe(named[1]) << "' (see " << kProgram
          << " " << named[0] << " --help)\n";
      return kExitUsage;
    }
    out << CliSubcommandHelpText(kProgram, *sub);
    return kExitOk;
  }
  Args args;
  const std::string usage = ParseArgs(words, &args);
  if (!usage.empty()) {
    // One line naming what is wrong, and where the flags are listed.
    // (gflags' refusals name the help already.)
    err << kProgram << (known_sub ? " " + words[0] : std::string()) << ": " << TerminalSafe(usage);
    if (usage.find("(see ") == std::string::npos) {
      err << " (see " << kProgram << (known_sub ? " " + words[0] : std::string()) << " --help)";
    }
    err << "\n";
    return kExitUsage;
  }
  if (args.sub == "decode") {
    const int sources = !Flag(args, "ledger").empty() + !Flag(args, "export").empty() + !Flag(args, "record").empty();
    if (sources != 1) {
      err << kProgram << " decode: give exactly one of --ledger, --export, --record\n";
      return kExitUsage;
    }
    if (Flag(args, "record").empty() != Flag(args, "kind").empty() ||
        (!Flag(args, "record").empty() && !Flag(args, "sequence").empty())) {
      err << kProgram << " decode: --record needs --kind (and takes no --sequence); --kind goes with --record\n";
      return kExitUsage;
    }
    return RunDecode(args, out, err);
  }
  if (Flag(args, "challenger_key").empty()) {
    err << kProgram << " " << args.sub << ": --challenger_key=FILE.pub is required\n";
    return kExitUsage;
  }
  if (args.sub == "audit" || args.sub == "certificate") {
    if (Flag(args, "authority_key").empty()) {
      err << kProgram << " " << args.sub
          << ": --authority_key=FILE.pub is required: the authority key the auditor pins\n";
      return kExitUsage;
    }
  }
  if (args.sub == "certificate") {
    if (Flag(args, "ledger").empty()) {
      err << kProgram << " certificate: --ledger=FILE is required\n";
      return kExitUsage;
    }
    if (Flag(args, "session").empty() && Flag(args, "wave").empty()) {
      err << kProgram << " certificate: give --session=HEX (a session's certificate) or --wave=NAME (a wave's)\n";
      return kExitUsage;
    }
    return RunCertificate(args, out, err);
  }
  if (args.sub == "audit") {
    if (!Flag(args, "certificate").empty()) return RunAuditCertificate(args, out, err);
    if (Flag(args, "export").empty() == Flag(args, "ledger").empty()) {
      err << kProgram << " audit: give exactly one of --export and --ledger\n";
      return kExitUsage;
    }
    if (Flag(args, "ledger").empty() != Flag(args, "inventory").empty()) {
      err << kProgram << " audit: "
          << (Flag(args, "ledger").empty() ? "--inventory goes with --ledger: an export carries its own node keys"
                                           : "--ledger needs --inventory (the node keys); an export carries its own")
          << "\n";
      return kExitUsage;
    }
    for (const char* key : {"challenger_key", "authority_key"}) {
      if (Flag(args, key).find(',') != std::string::npos) {
        err << kProgram << " audit: --" << key << " takes one key file, the key the auditor pins for every "
            << "source (not a list, as verify's --challenger_key); audit the sources of each challenger key "
               "in their own run\n";
        return kExitUsage;
      }
    }
    auto pub = proto::ReadPublicKeyFile(Flag(args, "challenger_key"));
    if (!pub.ok()) return Fail(err, args.sub, pub.status().WithContext("--challenger_key"));
    return RunAudit(args, *pub, out, err);
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
  if (args.sub == "verify" && !export_only) {
    std::vector<std::string> ledgers, key_files;
    std::string usage = SplitList("ledger", Flag(args, "ledger"), &ledgers);
    if (usage.empty()) usage = SplitList("challenger_key", Flag(args, "challenger_key"), &key_files, false);
    if (usage.empty() && key_files.size() != 1 && key_files.size() != ledgers.size()) {
      usage = "give one --challenger_key for every ledger, or one for all (" + std::to_string(ledgers.size()) +
              " ledgers, " + std::to_string(key_files.size()) + " keys)";
    }
    if (usage.empty() && ledgers.size() > 1 && !Flag(args, "expect_head").empty()) {
      usage = "--expect_head goes with one --ledger";
    }
    if (!usage.empty()) {
      err << kProgram << " verify: " << usage << "\n";
      return kExitUsage;
    }
    if (ledgers.size() > 1) {
      std::vector<proto::PublicKey> keys;
      for (size_t i = 0; i < ledgers.size(); ++i) {
        const std::string& file = key_files[key_files.size() == 1 ? 0 : i];
        auto key = proto::ReadPublicKeyFile(file);
        if (!key.ok()) return Fail(err, args.sub, key.status().WithContext("--challenger_key " + file));
        keys.push_back(*key);
      }
      return RunVerifyLedgers(ledgers, keys, out, err);
    }
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

const CliSubcommand& LedgerSubcommand() {
  // Its own command line: nested subcommands, and --ledger/--export repeated into one list.
  static const CliSubcommand kSubcommand = {
      "ledger", "show, verify, export, audit, certify or decode the ledger (`ledger --help`)", nullptr, {}, nullptr, {},
      nullptr,
      [](int argc, char** argv) { return RunLedgerCommand(argc, argv); }};
  return kSubcommand;
}

}  // namespace wipeproof
