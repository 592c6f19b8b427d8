// Key files for the `keygen` subcommands of wipeproof-prover and wipeproof-challenger, and for
// loading keys at start-up.
//
// Format: UTF-8 text, one "name: value" per line, '#' comments; values in lowercase hex.
//   PREFIX.key (secret, mode 0600)           PREFIX.pub (public, mode 0644)
//     format: wipeproof-ed25519-secret-v1      format: wipeproof-ed25519-public-v1
//     key-id: <16 hex digits>                  key-id: <16 hex digits>
//     public-key: <64 hex digits>              public-key: <64 hex digits>
//     secret-seed: <64 hex digits>
// key-id is KeyIdOf(public-key); readers check it, and that secret-seed derives public-key.
// Files are written atomically (temporary file in the same folder, fsync, then link/rename), so a
// reader never sees half a key. Files over kMaxKeyFileBytes are refused.
//
// Errors: NOT_FOUND (no such file or folder), ALREADY_EXISTS (target exists and overwrite is
// false), PERMISSION_DENIED (a secret key file accessible by group or others: the message says
// "chmod 600 FILE"; or the OS refused access), INVALID_ARGUMENT (bad contents), INTERNAL (other
// I/O errors, with errno text).
//
// Thread-safety: functions are thread-safe; concurrent writers of the same path are not
// coordinated beyond the atomic final step.
#pragma once

#include <string>

#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof::proto {

inline constexpr size_t kMaxKeyFileBytes = 4096;
inline constexpr char kSecretKeySuffix[] = ".key";
inline constexpr char kPublicKeySuffix[] = ".pub";

struct GeneratedKeyFiles {
  std::string secret_path;  // PREFIX.key
  std::string public_path;  // PREFIX.pub
  PublicKey public_key{};
  KeyId key_id{};
};

// Generates a fresh key pair and writes PREFIX.key (0600) and PREFIX.pub (0644). With
// overwrite=false nothing is written if either file exists (ALREADY_EXISTS naming it).
StatusOr<GeneratedKeyFiles> GenerateKeyFiles(const std::string& path_prefix, bool overwrite = false);

// Writes one file atomically with mode 0600 / 0644 respectively.
Status WriteSecretKeyFile(const std::string& path, const KeyPair& key, bool overwrite = false);
Status WritePublicKeyFile(const std::string& path, const PublicKey& public_key, bool overwrite = false);

// Reads a secret key file. Refuses (PERMISSION_DENIED) a file whose mode grants group or others
// any access, before reading its contents.
StatusOr<KeyPair> ReadSecretKeyFile(const std::string& path);
StatusOr<PublicKey> ReadPublicKeyFile(const std::string& path);

// A public key given as 64 hex digits (inventory files, flags). Errors: INVALID_ARGUMENT.
StatusOr<PublicKey> ParsePublicKeyHex(const std::string& hex);

// Any other public text file of a key (its certificate, PREFIX.crt: tls_certificate.h), written and
// read with the same rules: atomic, mode 0644, at most kMaxKeyFileBytes, a regular file.
Status WritePublicTextFile(const std::string& path, const std::string& contents, bool overwrite = false);
StatusOr<std::string> ReadPublicTextFile(const std::string& path);

}  // namespace wipeproof::proto
