// Doctor checks of the key files `serve` is given: the node's secret key (--node_key: a regular
// file of this user, mode 0600, a wipeproof secret key whose public half matches PREFIX.pub beside
// it when that exists), the authority's and the challenger's public keys (--authority_key,
// --challenger_key) and the challenger's certificate (--challenger_cert, which must carry the
// challenger key: the same check `serve` makes at start-up).
// Thread-safety: thread-safe (reads files).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "prover/doctor/doctor_check.h"

namespace wipeproof {

struct KeyFilePaths {
  std::string node_key;         // --node_key
  std::string authority_key;    // --authority_key
  std::string challenger_key;   // --challenger_key
  std::string challenger_cert;  // --challenger_cert
};

// Four results: "node key", "authority key", "challenger key", "challenger cert". A path not given
// is a FAIL naming its flag. `user` is the uid that will run the agent (the caller's effective
// uid): a node key owned by someone else is a WARN (serve may not read it).
// node key FAIL: missing or unreadable, not a regular file, mode granting group or others any access
// (fix: "chmod 600 FILE"), not a secret key file, or not the key of PREFIX.pub.
std::vector<CheckResult> CheckKeyFiles(const KeyFilePaths& paths, uid_t user);

}  // namespace wipeproof
