// `wipeproof-challenger keygen --out=PREFIX [--role=authority|challenger|both] [--overwrite]` (cli.h):
// PREFIX-authority.{key,pub} (on the authority's offline machine), PREFIX-challenger.{key,pub} and
// PREFIX-challenger.crt, the challenger key's TLS certificate (proto/tls_certificate.h), which every
// agent pins (serve --challenger_cert).
#include <gflags/gflags.h>

#include <cstdio>
#include <vector>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_flags.h"
#include "proto/key_files.h"
#include "proto/tls_certificate.h"

DEFINE_string(role, "both",
              "keygen: which key pairs to write: authority (on the authority's offline machine), challenger (on the "
              "challenger host), or both (a lab; warns that the authority's secret key must not stay there)");

namespace wipeproof {

int RunKeygen() {
  if (FLAGS_out.empty()) return ConfigError("keygen", "--out=PREFIX is required");
  if (FLAGS_role != "authority" && FLAGS_role != "challenger" && FLAGS_role != "both") {
    return ConfigError("keygen", "--role must be authority, challenger or both, got '" + FLAGS_role + "'");
  }
  const bool authority = FLAGS_role != "challenger", challenger_role = FLAGS_role != "authority";
  const std::string authority_prefix = FLAGS_out + "-authority";
  const std::string challenger_prefix = FLAGS_out + "-challenger";
  const std::string certificate_path = challenger_prefix + proto::kCertificateSuffix;
  std::vector<std::pair<const char*, std::string>> roles;
  if (authority) roles.emplace_back("authority", authority_prefix);
  if (challenger_role) roles.emplace_back("challenger", challenger_prefix);
  if (!FLAGS_overwrite) {
    // Refuse before writing anything, so a half-written set never replaces nothing.
    std::vector<std::string> paths;
    for (const auto& [role, prefix] : roles) {
      paths.push_back(prefix + proto::kSecretKeySuffix);
      paths.push_back(prefix + proto::kPublicKeySuffix);
    }
    if (challenger_role) paths.push_back(certificate_path);
    for (const std::string& path : paths) {
      if (FILE* f = std::fopen(path.c_str(), "r")) {
        std::fclose(f);
        return ConfigError("keygen", path + " exists (use --overwrite to replace it)");
      }
    }
  }
  for (const auto& [role, prefix] : roles) {
    auto written = proto::GenerateKeyFiles(prefix, FLAGS_overwrite);
    if (!written.ok()) return ConfigError("keygen", written.status());
    std::printf("%-10s key id %s  %s (secret, 0600)  %s\n", role, proto::KeyIdHex(written->key_id).c_str(),
                written->secret_path.c_str(), written->public_path.c_str());
  }
  if (authority && challenger_role) {
    std::fprintf(stderr,
                 "wipeproof-challenger keygen: warning: %s%s is the authority's secret key, written beside the "
                 "challenger's: fine for a lab; in deployment it lives only on the authority's offline machine "
                 "(keygen --role=authority there), and the challenger gets %s%s and a delegation (`delegate`)\n",
                 authority_prefix.c_str(), proto::kSecretKeySuffix, authority_prefix.c_str(), proto::kPublicKeySuffix);
  }
  if (!challenger_role) {
    std::printf("keep %s%s offline; give %s%s to agents and auditors\n", authority_prefix.c_str(),
                proto::kSecretKeySuffix, authority_prefix.c_str(), proto::kPublicKeySuffix);
    return kExitOk;
  }
  auto challenger = proto::ReadSecretKeyFile(challenger_prefix + proto::kSecretKeySuffix);
  if (!challenger.ok()) return ConfigError("keygen", challenger.status());
  Status certificate = proto::WriteCertificateFile(certificate_path, *challenger, FLAGS_overwrite);
  if (!certificate.ok()) return ConfigError("keygen", certificate);
  std::printf("%-10s certificate %s (%s; copy it to every agent: serve --challenger_cert)\n", "challenger",
              certificate_path.c_str(), proto::CertificateName(proto::KeyIdOf(challenger->public_key)).c_str());
  return kExitOk;
}

const CliSubcommand& KeygenSubcommand() {
  static const CliSubcommand kSubcommand = {"keygen",
   "write the authority and challenger key pairs, and the challenger's certificate",
   "Writes PREFIX-authority.key/.pub (the authority: signs profiles, classes and delegations, offline)\n"
   "with --role=authority, PREFIX-challenger.key/.pub (signs orders under a delegation, verdicts,\n"
   "receipts and ledger entries, and authenticates the challenger to agents over TLS) and\n"
   "PREFIX-challenger.crt, the certificate of the challenger key (proto/tls_certificate.h), with\n"
   "--role=challenger; both (the default, for a lab) warns that the authority's secret key must not\n"
   "stay on a challenger host. Secret files get mode 0600, public ones 0644; existing files are kept\n"
   "unless --overwrite. Copy both .pub files and the .crt to every node's agent (serve\n"
   "--challenger_cert pins it); auditors need both .pub files. Prints the key ids.",
   {"out", "role", "overwrite"},
   &RunKeygen,
   {{"out",
     "path prefix: writes PREFIX-authority.key/.pub, PREFIX-challenger.key/.pub and PREFIX-challenger.crt "
     "(required)"}}};
  return kSubcommand;
}

}  // namespace wipeproof
