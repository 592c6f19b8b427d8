#include "common/credential_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace wipeproof {

StatusOr<std::string> ReadCredentialFile(const std::string& path, uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return NotFoundError(path + ": " + std::strerror(err));
    if (err == ELOOP) return PermissionDeniedError(path + ": a symbolic link; a credential file must be the file itself");
    return PermissionDeniedError(path + ": cannot open: " + std::strerror(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return InternalError(path + ": fstat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return InvalidArgumentError(path + ": not a regular file");
  if (st.st_uid != ::geteuid()) {
    return PermissionDeniedError(path + ": owned by uid " + std::to_string(st.st_uid) + ", not this process's uid " +
                                 std::to_string(::geteuid()) + " (chown it to the service's user)");
  }
  if ((st.st_mode & 077) != 0) {
    return PermissionDeniedError(path + ": group or others can read or write it: it is a credential (chmod 600)");
  }
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return InternalError(path + ": read: " + std::strerror(errno));
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      return InvalidArgumentError(path + ": over the limit of " + std::to_string(max_bytes) + " bytes");
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace wipeproof
