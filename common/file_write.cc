#include "common/file_write.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace wipeproof {
namespace {

Status ErrnoError(const std::string& what, int err) {
  if (err == ENOSPC) return ResourceExhaustedError(what + ": disk full");
  if (err == EACCES || err == EPERM || err == EROFS) return PermissionDeniedError(what + ": " + std::strerror(err));
  if (err == ENOENT || err == ENOTDIR) return NotFoundError(what + ": " + std::strerror(err));
  return InternalError(what + ": " + std::strerror(err));
}

Status WriteAll(int fd, std::string_view bytes, const std::string& what) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(what, errno);
    if (n == 0) return InternalError(what + ": write made no progress");
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "directory";
  if (S_ISLNK(mode)) return "symbolic link";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISFIFO(mode)) return "FIFO";
  return "special file";
}

// Writes through to an existing character device or FIFO. The opened descriptor is checked again,
// so a path swapped for a regular file between lstat and open is not truncated or written.
Status WriteThrough(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    ::close(fd);
    return FailedPreconditionError(path + ": changed while being opened; not writing");
  }
  Status status = WriteAll(fd, bytes, path);
  if (::close(fd) != 0 && status.ok() && errno != EINTR) status = ErrnoError(path, errno);
  return status;
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

Status WriteFileReplacing(const std::string& path, std::string_view bytes, mode_t mode) {
  if (path.empty()) return InvalidArgumentError("output path is empty");
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      struct stat target;
      if (::stat(path.c_str(), &target) == 0 && (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode))) {
        return WriteThrough(path, bytes);
      }
      return FailedPreconditionError(path + ": is a symbolic link" +
                                     (::stat(path.c_str(), &target) == 0
                                          ? std::string(" to a ") + (S_ISREG(target.st_mode) ? "regular file" : KindOf(target.st_mode))
                                          : std::string(" to nothing")) +
                                     "; refusing to follow or replace it");
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return WriteThrough(path, bytes);
    if (!S_ISREG(st.st_mode)) {
      return FailedPreconditionError(path + ": is a " + KindOf(st.st_mode) + "; refusing to replace it");
    }
  } else if (errno != ENOENT) {
    return ErrnoError(path, errno);
  }

  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());  // O_CREAT | O_EXCL, mode 0600
  if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
    const int err = errno;
    struct stat dir_st {};
    if (::stat(DirOf(path).c_str(), &dir_st) == 0 && S_ISDIR(dir_st.st_mode)) {
      // The folder is there but makes no new file (a kernel file system such as /proc or /sys).
      return PermissionDeniedError("cannot write " + path + ": the folder " + DirOf(path) +
                                   " takes no new files (" + std::strerror(err) + "); write it elsewhere");
    }
    return NotFoundError("cannot write " + path + ": the folder " + DirOf(path) + " does not exist; create it first");
  }
  if (fd < 0) return ErrnoError(path + ": cannot create a temporary file", errno);
  Status status = Status::Ok();
  if (::fchmod(fd, mode) != 0) status = ErrnoError(tmp, errno);
  if (status.ok()) status = WriteAll(fd, bytes, tmp);
  if (status.ok() && ::fsync(fd) != 0) status = ErrnoError(tmp, errno);
  if (::close(fd) != 0 && status.ok()) status = ErrnoError(tmp, errno);
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) status = ErrnoError(path + ": cannot rename into place", errno);
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  const int dir = ::open(DirOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);  // best effort: make the new name durable
    ::close(dir);
  }
  return Status::Ok();
}

Status RefuseOutputOverInput(const std::string& output, const std::string& input, const std::string& input_what) {
  struct stat out_st {}, in_st {};
  if (::stat(output.c_str(), &out_st) != 0 || ::stat(input.c_str(), &in_st) != 0) return Status::Ok();
  if (out_st.st_dev != in_st.st_dev || out_st.st_ino != in_st.st_ino) return Status::Ok();
  return InvalidArgumentError(output + " is " + input_what + " itself; writing it would destroy it: name another file");
}

}  // namespace wipeproof
