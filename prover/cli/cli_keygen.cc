// `wipeproof-prover keygen --out=PREFIX [--force]`: writes the node's Ed25519 key pair as
// PREFIX.key (secret, mode 0600) and PREFIX.pub (public, 0644) (proto/key_files.h), and prints what
// the challenger's inventory needs as "name: value" lines on stdout:
//   secret-key-file: PREFIX.key
//   public-key-file: PREFIX.pub
//   key-id: <16 hex digits>
//   public-key: <64 hex digits>
// Refuses to overwrite either file unless --force.
#include <gflags/gflags.h>

#include <cstdio>
#include <string>

#include "common/hex.h"
#include "proto/key_files.h"
#include "prover/cli/cli.h"

DEFINE_string(out, "",
              "keygen: path prefix of the key files; writes PREFIX.key (0600) and PREFIX.pub; required. "
              "bench --what=all: file for the signed node profile");
DEFINE_bool(force, false, "keygen: overwrite existing key files; default false (refuse)");

namespace wipeproof {

int RunKeygen() {
  constexpr char kSub[] = "keygen";
  if (FLAGS_out.empty()) return UsageError(kSub, "--out=PREFIX is required (writes PREFIX.key and PREFIX.pub)");
  auto files = proto::GenerateKeyFiles(FLAGS_out, FLAGS_force);
  if (!files.ok()) {
    Status status = files.status();
    if (status.code() == StatusCode::kAlreadyExists) {
      status = Status(status.code(), status.message() + " (--force overwrites it)");
    }
    return Failure(kSub, status);
  }
  std::printf("secret-key-file: %s\npublic-key-file: %s\nkey-id: %s\npublic-key: %s\n", files->secret_path.c_str(),
              files->public_path.c_str(), proto::KeyIdHex(files->key_id).c_str(),
              HexEncode(files->public_key.data(), files->public_key.size()).c_str());
  return kExitOk;
}

}  // namespace wipeproof
