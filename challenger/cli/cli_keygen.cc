// `wipeproof-challenger keygen --out=PREFIX [--overwrite]` (cli.h).
#include <cstdio>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_flags.h"
#include "proto/key_files.h"

namespace wipeproof {

int RunKeygen() {
  if (FLAGS_out.empty()) return ConfigError("keygen", "--out=PREFIX is required");
  const std::string authority_prefix = FLAGS_out + "-authority";
  const std::string challenger_prefix = FLAGS_out + "-challenger";
  if (!FLAGS_overwrite) {
    // Refuse before writing anything, so a half-written pair never replaces nothing.
    for (const std::string& prefix : {authority_prefix, challenger_prefix}) {
      for (const char* suffix : {proto::kSecretKeySuffix, proto::kPublicKeySuffix}) {
        const std::string path = prefix + suffix;
        if (FILE* f = std::fopen(path.c_str(), "r")) {
          std::fclose(f);
          return ConfigError("keygen", path + " exists (use --overwrite to replace it)");
        }
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
  return kExitPass;
}

}  // namespace wipeproof
