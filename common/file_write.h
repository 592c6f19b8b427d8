// Writing an output file (reports, exports, calibration and bench profiles) so that a reader never
// sees half of it and nothing but the named path is touched.
//
// Thread-safety: safe to call concurrently for different paths.
#pragma once

#include <string>
#include <string_view>
#include <sys/types.h>

#include "common/status.h"

namespace wipeproof {

// Replaces the file at `path` with `bytes`, according to what is there now (lstat):
//  - nothing, or a regular file: a new file is created next to it with mkstemp (a unique name,
//    O_EXCL, so a pre-planted "PATH.tmp" or symlink is never followed or truncated), given `mode`,
//    written, fsync'd, then renamed over `path` (atomic for readers); the folder is fsync'd.
//  - a character device or a FIFO (or a symlink to one, e.g. /dev/stdout -> /proc/self/fd/1 on a
//    pipe or terminal, or /dev/null): written straight through; it is never replaced by a regular
//    file. Opening a FIFO waits for a reader, as a shell redirection does.
//  - anything else (a directory, a socket, a block device, a symlink to a regular file or to a
//    missing target): refused; following a symlink would let whoever planted it choose the file we
//    overwrite, and renaming over it would silently drop the link.
// Errors: FAILED_PRECONDITION "<path>: is a <kind>; refusing to replace it"; RESOURCE_EXHAUSTED
// "<path>: disk full" (ENOSPC, e.g. /dev/full); NOT_FOUND "cannot write <path>: the folder <dir> does
// not exist; create it first"; PERMISSION_DENIED (also a read-only file system) or INTERNAL naming
// the path and errno otherwise. On any error no temporary file is left behind and an existing file is unchanged.
Status WriteFileReplacing(const std::string& path, std::string_view bytes, mode_t mode = 0644);

// INVALID_ARGUMENT "<output> is <input_what> itself; ..." when `output` names the same existing file
// as `input` (same device and inode: also through another path or a link), so that writing the
// output would destroy the input; OK otherwise (either missing, or different files).
Status RefuseOutputOverInput(const std::string& output, const std::string& input, const std::string& input_what);

}  // namespace wipeproof
