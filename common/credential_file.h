// Reading a credential file (a bearer token an operator installs for a service, e.g. the Slurm JWT of
// challenger/fleet/slurm_lifecycle.h): opened without following a symlink and without blocking (a
// FIFO or device swapped in fails at once), then checked on the open file itself, so nothing can be
// swapped between the check and the read: a regular file, owned by this process's effective user,
// readable by nobody else (no group or other bits), at most `max_bytes`.
//
// Errors: NOT_FOUND (no such file), PERMISSION_DENIED (a symlink, another owner, group or other bits
// set, or unreadable), INVALID_ARGUMENT (not a regular file, over `max_bytes`), INTERNAL (a failed
// read). Each names `path`.
//
// Thread-safety: a pure function of the file system.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace wipeproof {

StatusOr<std::string> ReadCredentialFile(const std::string& path, uint64_t max_bytes);

}  // namespace wipeproof
