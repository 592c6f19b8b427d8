#include "challenger/fleet/trusted_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "common/file_mode.h"

namespace wipeproof {

namespace {

// Whether a user other than this process's (or root) may write in a folder: others' write bit, or
// the group's for a group other than this process's or root's (a Secret volume's fsGroup is ours).
bool StrangersCanWrite(const struct stat& st) {
  if ((st.st_mode & S_IWOTH) != 0) return true;
  return (st.st_mode & S_IWGRP) != 0 && st.st_gid != getegid() && st.st_gid != 0;
}

// The folders from `path`'s own up to /: each owned by root or this user, and none a stranger may
// write in (StrangersCanWrite) unless it has the sticky bit (as /tmp: others cannot rename what is
// ours in it) and, for a file that is run, is not the file's own folder (a stranger could put a
// file beside it, which a script may read or import).
Status CheckFolders(const std::string& shown, const std::string& what, const std::string& path, TrustedFileUse use) {
  std::string folder = path.substr(0, path.rfind('/'));
  for (bool own_folder = true;; own_folder = false) {
    if (folder.empty()) folder = "/";
    struct stat st;
    if (stat(folder.c_str(), &st) != 0) return Status::Ok();  // starting or reading it reports why
    if (st.st_uid != 0 && st.st_uid != geteuid()) {
      return PermissionDeniedError(what + " " + shown + ": folder " + folder + " is owned by uid " +
                                   std::to_string(st.st_uid) + ", so the file could be replaced");
    }
    const bool sticky = (st.st_mode & S_ISVTX) != 0;
    if (StrangersCanWrite(st) && (!sticky || (own_folder && use == TrustedFileUse::kRun))) {
      return PermissionDeniedError(what + " " + shown + ": folder " + folder +
                                   " is writable by group or others (mode " + FileModeText(st.st_mode) +
                                   "), so the file could be replaced or another put beside it");
    }
    if (folder == "/") return Status::Ok();
    folder = folder.substr(0, folder.rfind('/'));
  }
}

}  // namespace

Status CheckTrustedFile(const std::string& path, const std::string& what, TrustedFileUse use) {
  if (path.find('/') == std::string::npos) return Status::Ok();
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) return Status::Ok();  // starting it reports why (NOT_FOUND, ...)
  struct stat file;
  if (stat(resolved, &file) != 0) return Status::Ok();
  if (file.st_uid != 0 && file.st_uid != geteuid()) {
    return PermissionDeniedError(what + " " + path + " is owned by uid " + std::to_string(file.st_uid) +
                                 ": the challenger's user runs or reads it, so only root or that user may own it");
  }
  if ((file.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return PermissionDeniedError(what + " " + path + " is writable by group or others (mode " +
                                 FileModeText(file.st_mode) + "): the challenger's user runs or reads it; chmod go-w");
  }
  std::string given = path;
  if (given[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == nullptr) return InternalError(what + " " + path + ": getcwd failed");
    given = std::string(cwd) + "/" + given;
  }
  WP_RETURN_IF_ERROR(CheckFolders(path, what, given, use));
  return CheckFolders(path, what, resolved, use);
}

}  // namespace wipeproof
