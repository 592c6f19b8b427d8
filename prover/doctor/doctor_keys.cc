#include "prover/doctor/doctor_keys.h"

#include <sys/stat.h>

#include "common/file_mode.h"
#include "proto/key_files.h"
#include "proto/tls_certificate.h"

namespace wipeproof {
namespace {

CheckResult Missing(const char* check, const char* flag) {
  return {check, CheckStatus::kFail, std::string("not given (--") + flag + ")",
          std::string("give --") + flag + " as for serve"};
}

CheckResult NodeKey(const std::string& path, uid_t user) {
  if (path.empty()) return Missing("node key", "node_key");
  CheckResult r{"node key", CheckStatus::kOk, "", ""};
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return {"node key", CheckStatus::kFail, path + ": cannot be read (no such file, or a folder on the way is closed)",
            "run `wipeproof-prover keygen --out=PREFIX` and give --node_key=PREFIX.key"};
  }
  if (!S_ISREG(st.st_mode))
    return {"node key", CheckStatus::kFail, path + ": not a regular file", "give the .key file"};
  const std::string mode = FileModeText(st.st_mode);
  // Read as serve reads it: the file's kind first (a .pub given here is named as such), then its mode.
  auto key = proto::ReadSecretKeyFile(path);
  if (!key.ok()) {
    const bool wrong_kind = key.status().message().find("public key file") != std::string::npos;
    if (!wrong_kind && (st.st_mode & 077) != 0) {
      return {"node key", CheckStatus::kFail,
              path + ": mode " + mode + " lets group or others read the secret key; serve refuses it",
              "chmod 600 " + path};
    }
    return {"node key", CheckStatus::kFail, path + ": " + key.status().message(),
            "give the PREFIX.key that `wipeproof-prover keygen` wrote"};
  }
  r.detail = path + ": secret key, mode " + mode + ", owner uid " + std::to_string(st.st_uid);
  // The public half beside it (PREFIX.pub), when the file is named PREFIX.key.
  const std::string suffix = proto::kSecretKeySuffix;
  if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const std::string pub_path = path.substr(0, path.size() - suffix.size()) + proto::kPublicKeySuffix;
    struct stat pst {};
    if (stat(pub_path.c_str(), &pst) == 0) {
      auto pub = proto::ReadPublicKeyFile(pub_path);
      if (!pub.ok()) {
        return {"node key", CheckStatus::kFail, r.detail + "; " + pub_path + ": " + pub.status().ToString(),
                "rewrite it from the key: `wipeproof-prover keygen --out=PREFIX --force` (and update the inventory)"};
      }
      if (*pub != key->public_key) {
        return {"node key", CheckStatus::kFail,
                r.detail + "; but " + pub_path + " holds another key (the inventory may list the wrong one)",
                "keep the .key and .pub of one keygen run together"};
      }
      r.detail += "; matches " + pub_path;
    } else {
      r.detail += "; no " + pub_path + " beside it to compare";
    }
  }
  if (st.st_uid != user) {
    r.status = CheckStatus::kWarn;
    r.detail +=
        "; owned by uid " + std::to_string(st.st_uid) + ", not uid " + std::to_string(user) + " that runs this check";
    r.fix = "chown the key to the user that runs the agent";
  }
  return r;
}

}  // namespace

std::vector<CheckResult> CheckKeyFiles(const KeyFilePaths& paths, uid_t user) {
  std::vector<CheckResult> out;
  out.push_back(NodeKey(paths.node_key, user));

  auto public_key = [](const char* check, const char* flag, const std::string& path) -> CheckResult {
    if (path.empty()) return Missing(check, flag);
    auto key = proto::ReadPublicKeyFile(path);
    if (!key.ok()) {
      return {check, CheckStatus::kFail, path + ": " + key.status().ToString(),
              std::string("give --") + flag + " the PREFIX.pub that keygen wrote"};
    }
    return {check, CheckStatus::kOk, path + ": public key", ""};
  };
  out.push_back(public_key("authority key", "authority_key", paths.authority_key));
  out.push_back(public_key("challenger key", "challenger_key", paths.challenger_key));

  if (paths.challenger_cert.empty()) {
    out.push_back(Missing("challenger cert", "challenger_cert"));
  } else {
    auto challenger = proto::ReadPublicKeyFile(paths.challenger_key);
    if (!challenger.ok()) {
      out.push_back({"challenger cert", CheckStatus::kFail,
                     paths.challenger_cert + ": not checked (needs a readable --challenger_key)", ""});
    } else {
      auto cert = proto::ReadPinnedCertificate(paths.challenger_cert, *challenger);
      if (cert.ok()) {
        out.push_back(
            {"challenger cert", CheckStatus::kOk, paths.challenger_cert + ": carries the challenger key", ""});
      } else {
        out.push_back({"challenger cert", CheckStatus::kFail, paths.challenger_cert + ": " + cert.status().ToString(),
                       "give the PREFIX.crt written beside the challenger's PREFIX.pub"});
      }
    }
  }
  return out;
}

}  // namespace wipeproof
