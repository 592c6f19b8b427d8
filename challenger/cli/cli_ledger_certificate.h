// `wipeproof-challenger ledger certificate` and `ledger audit --certificate`: writes a session's or
// a wave's certificate (challenger/audit/certificate.h, docs/certificate.md) and checks one on its
// own. cli_ledger.h parses the command line and reads the keys.
//
// certificate (stdout unless --out; stderr):
//   <the certificate's canonical text>
//   wipeproof-challenger ledger certificate: wrote the certificate of session <hex> (node-a: pass) to FILE
// audit --certificate (stdout):
//   certificate FILE: OK: session <hex>: pass             (or: wave w2 (ledger entry 12): fail (node-b: lateRound))
//    session <hex>  node node-a  pass  17 rounds, 1028 labels recomputed, transcript matches
//      statement: ...
//      occupancy: ...                                   (when the verdict states an occupancy window)
//    wave w2 (ledger entry 12): pass, 2 member session(s)
//      statement: ...
//   evidence: 9 entries, each verified against its signed envelope on its own (the chain is not: the
//     entries are not shown to be the whole ledger); signed head entry 11 recorded ...; schema ...
//   trust: authority key <id> and challenger key <id> as pinned
//   certificate: OK: every byte of it is what its signed records make it
// or "certificate FILE: FAILED: <what>" (stderr: "wipeproof-challenger ledger audit: certificate FILE:
// <what>").
// Exit codes (common/cli_exit_codes.h): certificate: 0 written; 1 the session's or wave's records do
// not audit (tampering); 2 a session or wave the ledger does not hold, a bad file or key. audit
// --certificate: 0 the certificate verified (whatever the outcome it certifies: a failed session's
// certificate verifies as a failed session); 1 it does not verify, however it fails (not JSON, not
// canonical, a changed field or record, other keys); 2 a file that cannot be read.
//
// Thread-safety: runs on the calling thread (label recomputation on the trust's threads).
#pragma once

#include <ostream>
#include <string>

#include "challenger/audit/certificate.h"
#include "challenger/ledger/ledger.h"

namespace wipeproof {

// Writes the certificate of `request` to `out_path` (atomically), or to `out` when it is empty;
// returns the exit code above. A path of the ledger itself is refused.
int RunWriteCertificate(const Ledger& ledger, const CertificateRequest& request, const CertificateTrust& trust,
                        const std::string& out_path, std::ostream& out, std::ostream& err);

// Verifies the certificate in the file `path` and prints the result; returns the exit code above.
int RunVerifyCertificate(const std::string& path, const CertificateTrust& trust, std::ostream& out, std::ostream& err);

}  // namespace wipeproof
