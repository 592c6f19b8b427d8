#include "proto/key_files.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "common/hex.h"

namespace wipeproof::proto {

namespace {

constexpr char kSecretFormat[] = "wipeproof-ed25519-secret-v1";
constexpr char kPublicFormat[] = "wipeproof-ed25519-public-v1";
constexpr mode_t kSecretMode = 0600;
constexpr mode_t kPublicMode = 0644;

Status ErrnoStatus(const std::string& what, const std::string& path, int err) {
  const std::string message = what + " " + path + ": " + std::strerror(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return NotFoundError(message);
    case EACCES:
    case EPERM:
      return PermissionDeniedError(message);
    case EEXIST:
      return AlreadyExistsError(message);
    default:
      return InternalError(message);
  }
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Closes fd on scope exit.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

Status WriteAll(int fd, const std::string& contents, const std::string& path) {
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("cannot write", path, errno);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Temporary file in the target's folder with `mode`, contents synced, then linked (no overwrite:
// fails atomically if the target exists) or renamed (overwrite) into place.
Status WriteFileAtomic(const std::string& path, const std::string& contents, mode_t mode, bool overwrite) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());  // created 0600, never wider
  if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
    return NotFoundError("cannot write " + path + ": the folder " + DirName(path) + " does not exist; create it first");
  }
  if (fd < 0) return ErrnoStatus("cannot create a temporary file for", path, errno);
  Status status = [&]() -> Status {
    FdCloser closer(fd);
    if (::fchmod(fd, mode) != 0) return ErrnoStatus("cannot chmod", tmp, errno);
    WP_RETURN_IF_ERROR(WriteAll(fd, contents, tmp));
    if (::fsync(fd) != 0) return ErrnoStatus("cannot fsync", tmp, errno);
    return Status::Ok();
  }();
  if (status.ok()) {
    if (overwrite) {
      if (::rename(tmp.c_str(), path.c_str()) != 0) status = ErrnoStatus("cannot rename into", path, errno);
    } else if (::link(tmp.c_str(), path.c_str()) != 0) {
      status = errno == EEXIST ? AlreadyExistsError(path + " exists; not overwriting it")
                               : ErrnoStatus("cannot link into", path, errno);
    }
  }
  ::unlink(tmp.c_str());  // after rename this is a no-op failure; after link it drops the extra name
  if (!status.ok()) return status;
  int dir = ::open(DirName(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);  // best effort: make the new name durable
    ::close(dir);
  }
  return Status::Ok();
}

// The kind of key file `contents` says it is ("format: ..." line), or "" when it says neither.
std::string KeyFileKind(const std::string& contents) {
  if (contents.find(std::string("format: ") + kSecretFormat) != std::string::npos) return kSecretFormat;
  if (contents.find(std::string("format: ") + kPublicFormat) != std::string::npos) return kPublicFormat;
  return "";
}

// Reads at most kMaxKeyFileBytes. The kind is checked before the mode, so a public key given where a
// secret one is needed is named as such (not "chmod 600" first); with `secret`, group/other access is
// then refused.
StatusOr<std::string> ReadKeyFile(const std::string& path, bool secret) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below as not a regular
  // file); reads of a regular file ignore the flag.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return ErrnoStatus("cannot open key file", path, errno);
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoStatus("cannot stat", path, errno);
  if (!S_ISREG(st.st_mode)) return InvalidArgumentError(path + " is not a regular file");
  if (st.st_size > static_cast<off_t>(kMaxKeyFileBytes)) {
    return InvalidArgumentError(path + " is larger than " + std::to_string(kMaxKeyFileBytes) +
                                " bytes: not a wipeproof key file");
  }
  std::string contents(kMaxKeyFileBytes + 1, '\0');
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::read(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("cannot read", path, errno);
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  if (done > kMaxKeyFileBytes) {
    sodium_memzero(contents.data(), contents.size());
    return InvalidArgumentError(path + " grew past " + std::to_string(kMaxKeyFileBytes));
  }
  contents.resize(done);
  if (secret && KeyFileKind(contents) == kPublicFormat) {
    return InvalidArgumentError(path + " is a public key file; this needs the secret key file (PREFIX.key)");
  }
  if (!secret && KeyFileKind(contents) == kSecretFormat) {
    sodium_memzero(contents.data(), contents.size());
    return InvalidArgumentError(path + " is a secret key file; give the public key file (PREFIX.pub)");
  }
  if (secret && (st.st_mode & 077) != 0) {
    sodium_memzero(contents.data(), contents.size());
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return PermissionDeniedError("secret key file " + path + " has mode " + mode +
                                 " and is accessible by group or others; run: chmod 600 " + path);
  }
  return contents;
}

// "name: value" lines; '#' comments and blank lines skipped; duplicates and junk refused.
StatusOr<std::map<std::string, std::string>> ParseFields(const std::string& contents, const std::string& path) {
  std::map<std::string, std::string> fields;
  std::istringstream in(contents);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) {
      return InvalidArgumentError(path + ":" + std::to_string(number) + ": expected 'name: value'");
    }
    std::string name = line.substr(0, colon);
    std::string value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(value.begin());
    while (!value.empty() && value.back() == ' ') value.pop_back();
    if (!fields.emplace(name, value).second) {
      return InvalidArgumentError(path + ":" + std::to_string(number) + ": duplicate '" + name + "'");
    }
  }
  return fields;
}

StatusOr<std::string> Field(const std::map<std::string, std::string>& fields, const char* name,
                            const std::string& path) {
  auto it = fields.find(name);
  if (it == fields.end()) return InvalidArgumentError(path + ": missing '" + name + "'");
  return it->second;
}

Status CheckFormatAndNames(const std::map<std::string, std::string>& fields, const char* format,
                           std::initializer_list<const char*> allowed, const std::string& path) {
  WP_ASSIGN_OR_RETURN(std::string got, Field(fields, "format", path));
  if (got != format) return InvalidArgumentError(path + ": format '" + got + "', want '" + format + "'");
  for (const auto& [name, value] : fields) {
    bool known = false;
    for (const char* a : allowed) known = known || name == a;
    if (!known) return InvalidArgumentError(path + ": unknown field '" + name + "'");
  }
  return Status::Ok();
}

Status CheckKeyId(const std::map<std::string, std::string>& fields, const PublicKey& public_key,
                  const std::string& path) {
  WP_ASSIGN_OR_RETURN(std::string key_id, Field(fields, "key-id", path));
  const std::string want = KeyIdHex(KeyIdOf(public_key));
  if (key_id != want)
    return InvalidArgumentError(path + ": key-id " + key_id + " does not match public-key (" + want + ")");
  return Status::Ok();
}

std::string PublicFileText(const PublicKey& public_key) {
  return std::string("# wipeproof Ed25519 public key\nformat: ") + kPublicFormat +
         "\nkey-id: " + KeyIdHex(KeyIdOf(public_key)) +
         "\npublic-key: " + HexEncode(public_key.data(), public_key.size()) + "\n";
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

Status WriteSecretKeyFile(const std::string& path, const KeyPair& key, bool overwrite) {
  const auto seed = key.seed();
  std::string text = std::string("# wipeproof Ed25519 secret key. Keep it private: mode 0600.\nformat: ") +
                     kSecretFormat + "\nkey-id: " + KeyIdHex(KeyIdOf(key.public_key)) +
                     "\npublic-key: " + HexEncode(key.public_key.data(), key.public_key.size()) +
                     "\nsecret-seed: " + HexEncode(seed.data(), seed.size()) + "\n";
  Status status = WriteFileAtomic(path, text, kSecretMode, overwrite);
  sodium_memzero(text.data(), text.size());
  return status;
}

Status WritePublicKeyFile(const std::string& path, const PublicKey& public_key, bool overwrite) {
  return WriteFileAtomic(path, PublicFileText(public_key), kPublicMode, overwrite);
}

Status WritePublicTextFile(const std::string& path, const std::string& contents, bool overwrite) {
  if (contents.size() > kMaxKeyFileBytes) {
    return InvalidArgumentError(path + ": " + std::to_string(contents.size()) + " bytes, over the limit of " +
                                std::to_string(kMaxKeyFileBytes));
  }
  return WriteFileAtomic(path, contents, kPublicMode, overwrite);
}

StatusOr<std::string> ReadPublicTextFile(const std::string& path) { return ReadKeyFile(path, /*secret=*/false); }

StatusOr<GeneratedKeyFiles> GenerateKeyFiles(const std::string& path_prefix, bool overwrite) {
  if (path_prefix.empty()) return InvalidArgumentError("key path prefix is empty");
  GeneratedKeyFiles out;
  out.secret_path = path_prefix + kSecretKeySuffix;
  out.public_path = path_prefix + kPublicKeySuffix;
  if (!overwrite) {
    for (const std::string* p : {&out.secret_path, &out.public_path}) {
      if (Exists(*p)) return AlreadyExistsError(*p + " exists; not overwriting it");
    }
  }
  const KeyPair key = GenerateKeyPair();
  WP_RETURN_IF_ERROR(WriteSecretKeyFile(out.secret_path, key, overwrite));
  WP_RETURN_IF_ERROR(WritePublicKeyFile(out.public_path, key.public_key, overwrite));
  out.public_key = key.public_key;
  out.key_id = KeyIdOf(key.public_key);
  return out;
}

StatusOr<KeyPair> ReadSecretKeyFile(const std::string& path) {
  WP_ASSIGN_OR_RETURN(std::string contents, ReadKeyFile(path, /*secret=*/true));
  auto fields_or = ParseFields(contents, path);
  sodium_memzero(contents.data(), contents.size());
  if (!fields_or.ok()) return fields_or.status();
  std::map<std::string, std::string>& fields = *fields_or;
  Status status = CheckFormatAndNames(fields, kSecretFormat, {"format", "key-id", "public-key", "secret-seed"}, path);
  std::array<uint8_t, kKeySeedBytes> seed{};
  if (status.ok()) {
    auto seed_hex = Field(fields, "secret-seed", path);
    status = seed_hex.ok() ? HexDecodeExact(*seed_hex, seed.size(), seed.data(), "secret-seed") : seed_hex.status();
    if (seed_hex.ok()) sodium_memzero(seed_hex->data(), seed_hex->size());
  }
  sodium_memzero(fields["secret-seed"].data(), fields["secret-seed"].size());
  if (!status.ok()) return status.WithContext(path);
  KeyPair key = KeyPairFromSeed(seed);
  sodium_memzero(seed.data(), seed.size());
  WP_ASSIGN_OR_RETURN(std::string public_hex, Field(fields, "public-key", path));
  PublicKey stated{};
  WP_RETURN_IF_ERROR(HexDecodeExact(public_hex, stated.size(), stated.data(), "public-key").WithContext(path));
  if (stated != key.public_key) return InvalidArgumentError(path + ": public-key does not match secret-seed");
  WP_RETURN_IF_ERROR(CheckKeyId(fields, key.public_key, path));
  return key;
}

StatusOr<PublicKey> ReadPublicKeyFile(const std::string& path) {
  WP_ASSIGN_OR_RETURN(std::string contents, ReadKeyFile(path, /*secret=*/false));
  WP_ASSIGN_OR_RETURN(auto fields, ParseFields(contents, path));
  WP_RETURN_IF_ERROR(CheckFormatAndNames(fields, kPublicFormat, {"format", "key-id", "public-key"}, path));
  WP_ASSIGN_OR_RETURN(std::string public_hex, Field(fields, "public-key", path));
  WP_ASSIGN_OR_RETURN(PublicKey key, ParsePublicKeyHex(public_hex));
  WP_RETURN_IF_ERROR(CheckKeyId(fields, key, path));
  return key;
}

StatusOr<PublicKey> ParsePublicKeyHex(const std::string& hex) {
  PublicKey key{};
  WP_RETURN_IF_ERROR(HexDecodeExact(hex, key.size(), key.data(), "public key"));
  return key;
}

}  // namespace wipeproof::proto
