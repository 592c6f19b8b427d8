// Key files (proto/key_files.h): the input is a file's contents, written to a private temporary
// file (mode 0600, as keygen writes secret keys) and read back as a public and as a secret key
// file; and the inventory's inline key, ParsePublicKeyHex.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "proto/key_files.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

const std::string& KeyPath() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/wipeproof-fuzz-key-" +
           std::to_string(::getpid());
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  (void)proto::ParsePublicKeyHex(fuzz::TextOf(data, size));
  const std::string& path = KeyPath();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return 0;
  const bool written = ::write(fd, data, size) == static_cast<ssize_t>(size);
  ::close(fd);
  if (written) {
    (void)proto::ReadPublicKeyFile(path);
    (void)proto::ReadSecretKeyFile(path);
  }
  ::unlink(path.c_str());
  return 0;
}
