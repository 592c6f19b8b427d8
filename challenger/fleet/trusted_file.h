// A file the challenger runs or reads with its own user's rights (a `command` hook, Slurm's or
// kubectl's binary in a lifecycle's bin_dir, slurm_conf, a kubeconfig): whoever can change it
// runs code as the challenger's user, beside its keys and ledger, or decides who is in a run.
//
// CheckTrustedFile(path, what, use) returns OK, or PERMISSION_DENIED naming `what`, `path` and the
// reason, when:
//   - a user other than root or this process's owns the file or a folder above it;
//   - group or others may write the file;
//   - a stranger may write in a folder above it (others, or a group other than this process's or
//     root's: a Kubernetes Secret volume's fsGroup is ours), unless that folder has the sticky bit
//     (as /tmp: others cannot rename what is ours in it), and, for a file that is run, in its own
//     folder even then (a stranger could put a file beside it, which a script may read or import);
// for the path as given and for the file a link resolves to. A path without '/' (a bare name found
// in PATH) and a file that does not exist are not checked: starting or reading it reports why.
// What the file runs or includes in turn is beyond this check. Thread-safety: none needed (reads
// file metadata only).
#pragma once

#include <string>

#include "common/status.h"

namespace wipeproof {

enum class TrustedFileUse { kRun, kRead };

Status CheckTrustedFile(const std::string& path, const std::string& what, TrustedFileUse use);

}  // namespace wipeproof
