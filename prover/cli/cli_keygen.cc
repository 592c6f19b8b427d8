// `wipeproof-prover keygen --out=PREFIX [--force]`: writes the node's Ed25519 key pair as
// PREFIX.key (secret, mode 0600) and PREFIX.pub (public, 0644) (proto/key_files.h), and the key's
// TLS certificate as PREFIX.crt (0644; proto/tls_certificate.h: a pure function of the key, which
// the challenger pins in its inventory beside PREFIX.pub), and prints what the challenger's
// inventory needs as "name: value" lines on stdout:
//   secret-key-file: PREFIX.key
//   public-key-file: PREFIX.pub
//   certificate-file: PREFIX.crt
//   key-id: <16 hex digits>
//   public-key: <64 hex digits>
// Refuses to overwrite any of the files unless --force.
// `keygen --out=PREFIX --certificate_only` writes only PREFIX.crt, of the existing PREFIX.key (a key
// made before certificates existed), and prints the same lines.
#include <gflags/gflags.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>

#include "common/hex.h"
#include "proto/key_files.h"
#include "proto/tls_certificate.h"
#include "prover/cli/cli.h"

DEFINE_string(out, "",
              "keygen: path prefix of the key files; writes PREFIX.key (0600), PREFIX.pub and PREFIX.crt; "
              "required. bench --what=all: file for the signed node profile");
DEFINE_bool(force, false, "keygen: overwrite existing key and certificate files; default false (refuse)");
DEFINE_bool(certificate_only, false,
            "keygen: write only PREFIX.crt, the certificate of the existing PREFIX.key; default false");

namespace wipeproof {

namespace {

Status WithForceHint(Status status) {
  if (status.code() != StatusCode::kAlreadyExists) return status;
  return Status(status.code(), status.message() + " (--force overwrites it)");
}

}  // namespace

int RunKeygen() {
  constexpr char kSub[] = "keygen";
  if (FLAGS_out.empty()) {
    return UsageError(kSub, "--out=PREFIX is required (writes PREFIX.key, PREFIX.pub and PREFIX.crt)");
  }
  const std::string secret_path = FLAGS_out + proto::kSecretKeySuffix;
  const std::string public_path = FLAGS_out + proto::kPublicKeySuffix;
  const std::string certificate_path = FLAGS_out + proto::kCertificateSuffix;
  if (!FLAGS_force && !FLAGS_certificate_only) {
    // Refuse before writing anything, so that no new key is left without its certificate.
    struct stat st;
    if (::lstat(certificate_path.c_str(), &st) == 0) {
      return Failure(kSub, WithForceHint(AlreadyExistsError(certificate_path + " exists; not overwriting it")));
    }
  }
  proto::KeyPair key;
  if (FLAGS_certificate_only) {
    auto existing = proto::ReadSecretKeyFile(secret_path);
    if (!existing.ok()) return Failure(kSub, existing.status().WithContext("--certificate_only"));
    key = *existing;
  } else {
    auto files = proto::GenerateKeyFiles(FLAGS_out, FLAGS_force);
    if (!files.ok()) return Failure(kSub, WithForceHint(files.status()));
    auto written = proto::ReadSecretKeyFile(files->secret_path);
    if (!written.ok()) return Failure(kSub, written.status());
    key = *written;
  }
  Status certificate = proto::WriteCertificateFile(certificate_path, key, FLAGS_force);
  if (!certificate.ok()) return Failure(kSub, WithForceHint(certificate));
  std::printf("secret-key-file: %s\npublic-key-file: %s\ncertificate-file: %s\nkey-id: %s\npublic-key: %s\n",
              secret_path.c_str(), public_path.c_str(), certificate_path.c_str(),
              proto::KeyIdHex(proto::KeyIdOf(key.public_key)).c_str(),
              HexEncode(key.public_key.data(), key.public_key.size()).c_str());
  return kExitOk;
}

const CliSubcommand& KeygenSubcommand() {
  static const CliSubcommand kSubcommand = {"keygen",
   "write this node's Ed25519 key pair and certificate: PREFIX.key (0600), PREFIX.pub, PREFIX.crt",
   "Writes a fresh key pair as PREFIX.key (secret, mode 0600) and PREFIX.pub (public), and the key's\n"
   "TLS certificate as PREFIX.crt (a pure function of the key: proto/tls_certificate.h), and prints\n"
   "secret-key-file, public-key-file, certificate-file, key-id and public-key as \"name: value\"\n"
   "lines for the challenger's inventory. Refuses to overwrite existing files unless --force.\n"
   "--certificate_only writes PREFIX.crt of the existing PREFIX.key (a key made before certificates).",
   {"out", "force", "certificate_only"},
   &RunKeygen,
   {{"out", "path prefix of the key files: writes PREFIX.key (0600), PREFIX.pub and PREFIX.crt (required)"}}};
  return kSubcommand;
}

}  // namespace wipeproof
