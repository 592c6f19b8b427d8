// `wipeproof-challenger ledger <show|verify|export|audit|certificate|decode> [flags]`: the ledger for operators
// and auditors, who need only the ledger file (or an export) and *public* keys (the ledger is opened
// read-only).
//
//   show    one line per entry (sequence, kind, session, time, summary), each verified as it goes;
//           a last line says whether the whole chain verifies. --node=NAME: only that node's
//           sessions; --json: the sessions as one JSON document on one line (the whole chain
//           verified first): {"ledger": {path, entries, head_sequence, head_digest, verified},
//           "node": NAME or null, "sessions": [challenger/ledger/ledger_sessions.h LedgerSessionJson]}
//   verify  walks the whole chain (challenger/ledger/ledger_verify.h); prints the verified head.
//           Several ledgers (--ledger=A,B or --ledger=A --ledger=B: a challenger StatefulSet's
//           replicas): each on its own ("ledger A: OK: ..." or "ledger A: FAILED: ..."), then
//           "FAILED: session <hex> is recorded in ledger A and ledger B: ..." for a session in two of
//           them, then "total: OK|FAILED: ..."
//   export  verifies, then writes the JSON document of challenger/ledger/ledger_export.h
//   audit   re-verifies every session of an export under pinned keys (cli_ledger_audit.h, its output
//           and exit codes; challenger/audit/ledger_audit.h; docs/audit.md); with --certificate, checks
//           one certificate on its own (cli_ledger_certificate.h)
//   certificate  writes the certificate of a session or a wave (challenger/audit/certificate.h,
//           docs/certificate.md; cli_ledger_certificate.h, its output and exit codes)
//   decode  prints entries or a record as plain JSON (challenger/ledger/ledger_record_json.h)
//
// Flags (gflags, the nested subcommands and their help in cli_ledger.cc's table; every flag is
// restored after a call, so calls in one process do not see each other's flags; a repeated --ledger or
// --export of verify and audit joins into one comma list, any other flag given twice is refused):
//   --ledger=FILE          ledger database (required, except for verify --export); verify and audit
//                          take several: a comma list or the flag repeated (a path cannot hold ',')
//   --challenger_key=FILE  challenger public key file, PREFIX.pub (required); verify of several
//                          ledgers: one for all, or a comma list with one key per ledger
//   --node=NAME            show: only the sessions of NAME; a node with no session in the ledger
//                          is an error (exit 2) naming the nodes it has
//   --session=HEX          show, export: only the entries of this session (32 hex digits);
//                          certificate: the session to certify (with --wave: that wave's run listing it)
//   --wave=NAME            certificate: of this wave's latest wave verdict and its member sessions
//   --certificate=FILE     audit: check this certificate on its own (with the two keys and --threads)
//   --out=FILE             export, certificate: write the document to FILE (atomically, mode 0644), not stdout
//   --envelopes[=false]    export: include every entry's signed envelope (the default), so the
//                          document alone can be re-verified (`verify --export`); --envelopes=false
//                          leaves them out and no entry's fields can then be verified
//   --expect_head=FILE     verify: also check the ledger still extends the signed head of FILE, an
//                          earlier export (catches entries removed from the end)
//   --export=FILE          verify: check an export document on its own: signed head; every field of
//                          each entry against its envelope; whole chain when no --session was given;
//                          audit, decode: the export to work on (audit: several, as --ledger)
//   --authority_key=FILE   export: add the authority public key; audit, certificate: the authority key to pin
//   --inventory=FILE       export, audit --ledger: add the inventory's node keys (name, key id, key);
//                          certificate: node keys to choose from (besides the ledger's inventories)
//   --json                 show: the sessions as JSON; audit: JSON instead of the table
//   --threads=N            audit, certificate: label recomputation threads (0: all cores)
//   --sequence=N           decode: only entry N;   --record=FILE --kind=KIND   decode: one record's bytes
//
// Output: results on stdout; errors on stderr as one line "wipeproof-challenger ledger <sub>:
// <message>". Exit codes (the table of common/cli_exit_codes.h): 0 verified / done; 1 verification
// failed (a modified, reordered or missing entry; of several ledgers: any of them, or a session in
// two); 2 bad command line, or a missing, unreadable or wrong file (a key that did not sign this
// ledger, a file that is not a ledger, a missing folder for --out), or show --node of a node the
// ledger lacks; 3 an I/O error, or verify --export / audit of a document with entries lacking their
// envelope: the signed head verified but those entries are UNVERIFIED (stdout says how many).
//
// Thread-safety: parses with gflags (process-wide flags, saved and restored): one call at a time.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace wipeproof {

// `args` are the words after "ledger": {"verify", "--ledger=l.db", "--challenger_key=c.pub"}.
int RunLedgerCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// For main: argv as main received it, with argv[1] == "ledger"; uses std::cout and std::cerr.
int RunLedgerCommand(int argc, char** argv);

}  // namespace wipeproof
