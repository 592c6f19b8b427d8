// `wipeproof-challenger keygen --out=PREFIX [--overwrite]` (cli.h): PREFIX-authority.{key,pub},
// PREFIX-challenger.{key,pub} and PREFIX-challenger.crt, the challenger key's TLS certificate
// (proto/tls_certificate.h), which every agent pins (serve --challenger_cert).
#include <cstdio>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_flags.h"
#include "proto/key_files.h"
#include "proto/tls_certificate.h"

namespace wipeproof {

int RunKeygen() {
  if (FLAGS_out.empty()) return ConfigError("keygen", "--out=PREFIX is required");
  const std::string authority_prefix = FLAGS_out + "-authority";
  const std::string challenger_prefix = FLAGS_out + "-challenger";
  const std::string certificate_path = challenger_prefix + proto::kCertificateSuffix;
  if (!FLAGS_overwrite) {
    // Refuse before writing anything, so a half-written set never replaces nothing.
    for (const std::string& path :
         {authority_prefix + proto::kSecretKeySuffix, authority_prefix + proto::kPublicKeySuffix,
          challenger_prefix + proto::kSecretKeySuffix, challenger_prefix + proto::kPublicKeySuffix, certificate_path}) {
      if (FILE* f = std::fopen(path.c_str(), "r")) {
        std::fclose(f);
        return ConfigError("keygen", path + " exists (use --overwrite to replace it)");
      }
    }
  }
  for (const auto& [role, prefix] : {std::pair<const char*, std::string>{"authority", authority_prefix},
                                     std::pair<const char*, std::string>{"challenger", challenger_prefix}}) {
    auto written = proto::GenerateKeyFiles(prefix, FLAGS_overwrite);
    if (!written.ok()) return ConfigError("keygen", written.status());
    std::printf("%-10s key id %s  %s (secret, 0600)  %s\n", role, proto::KeyIdHex(written->key_id).c_str(),
                written->secret_path.c_str(), written->public_path.c_str());
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
   "Writes PREFIX-authority.key/.pub (signs wipe orders) and PREFIX-challenger.key/.pub (signs\n"
   "verdicts, receipts and ledger entries, and authenticates the challenger to agents over TLS),\n"
   "and PREFIX-challenger.crt, the certificate of the challenger key (proto/tls_certificate.h).\n"
   "Secret files get mode 0600, public ones 0644; existing files are kept unless --overwrite. Copy\n"
   "both .pub files and the .crt to every node's agent (serve --challenger_cert pins it); the\n"
   "challenger's .pub is also what auditors need for `ledger verify`. Prints the key ids.",
   {"out", "overwrite"},
   &RunKeygen,
   {{"out",
     "path prefix: writes PREFIX-authority.key/.pub, PREFIX-challenger.key/.pub and PREFIX-challenger.crt "
     "(required)"}}};
  return kSubcommand;
}

}  // namespace wipeproof
