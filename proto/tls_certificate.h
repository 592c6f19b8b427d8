// X.509 certificates of the authenticated transport between challenger and agent (TLS 1.3,
// tls_channel.h). Each party has one Ed25519 key pair (key_files.h): it signs the party's messages
// and it is the party's TLS key. Its certificate is self-signed by that key and every field is
// fixed, so (Ed25519 signatures being deterministic) the certificate is a pure function of the
// secret key: `keygen` writes PREFIX.crt beside PREFIX.key and PREFIX.pub, and a party rebuilds its
// own certificate from its key file at start-up. The peer's certificate is copied like its .pub
// file and pinned: it is the only certificate that party trusts.
//
// The certificate of key K (DER, PEM-armoured):
//   version 3; serial number = the 8 bytes of KeyIdOf(K) as an unsigned integer;
//   issuer = subject = CN=CertificateName(KeyIdOf(K)) ("wipeproof-<16 hex digits>");
//   validity 2000-01-01T00:00:00Z to 9999-12-31T23:59:59Z (RFC 5280 "no well-defined expiration":
//   a key is retired by replacing its pinned copies, not by a date);
//   subject public key = K (Ed25519); extensions, in this order: basicConstraints critical CA:FALSE
//   (it can never issue another certificate), extendedKeyUsage serverAuth + clientAuth,
//   subjectAltName DNS:CertificateName(...); signature Ed25519 by K.
//
// Pinning binds a certificate to the project's identity key: PinCertificate accepts a certificate
// only if its public key equals the expected Ed25519 public key byte for byte, its self-signature
// verifies under that key, and its subject and DNS name are that key's CertificateName. KJ's TLS
// layer exposes no key of a peer, so this is where a TLS peer is tied to a key: a completed
// handshake proves the peer holds the private key of the one certificate pinned.
//
// Thread-safety: functions are thread-safe (OpenSSL 3 objects are local to each call).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof::proto {

inline constexpr char kCertificateSuffix[] = ".crt";

// "wipeproof-" and the key id's 16 lowercase hex digits: the certificate's subject CN and its one
// DNS name, which the client names as the server's host (tls_channel.h).
std::string CertificateName(const KeyId& key_id);

// The certificate of `key` as PEM text (see the top of this file); the same bytes every time.
// Errors: INTERNAL when OpenSSL fails (out of memory).
StatusOr<std::string> CertificatePem(const KeyPair& key);

// A certificate that passed PinCertificate: it carries `public_key` and is self-signed by it.
struct PinnedCertificate {
  std::string pem;   // the certificate alone, PEM (re-encoded from the parsed certificate)
  std::string name;  // CertificateName(key_id)
  PublicKey public_key{};
  KeyId key_id{};

  bool empty() const { return pem.empty(); }
};

// Checks `pem` (exactly one certificate; at most kMaxCertificateBytes) against `expected`: Ed25519
// public key equal to `expected` byte for byte, self-signature valid under it, subject CN and the
// one subjectAltName DNS name equal to CertificateName(KeyIdOf(expected)), basicConstraints
// CA:FALSE. `what` names the certificate in errors. Errors: INVALID_ARGUMENT naming what differs,
// e.g. "node-a.crt: the certificate's public key is not the node key (certificate key id ...,
// expected ...)".
inline constexpr size_t kMaxCertificateBytes = 4096;
StatusOr<PinnedCertificate> PinCertificate(std::string_view pem, const PublicKey& expected, const std::string& what);
// Reads `path` (a .crt file, at most kMaxCertificateBytes) and pins it against `expected`.
// Errors: those of ReadPublicTextFile (key_files.h), then PinCertificate's with `path` as `what`.
StatusOr<PinnedCertificate> ReadPinnedCertificate(const std::string& path, const PublicKey& expected);
// Writes CertificatePem(key) to `path` (mode 0644, atomically; ALREADY_EXISTS when it exists and
// overwrite is false).
Status WriteCertificateFile(const std::string& path, const KeyPair& key, bool overwrite = false);

// The Ed25519 private key of `key` as PKCS#8 DER, the form the TLS layer loads. Secret: the bytes
// are zeroed when the object is destroyed.
class PrivateKeyDer {
 public:
  // Errors: INTERNAL when OpenSSL fails.
  static StatusOr<PrivateKeyDer> Of(const KeyPair& key);
  PrivateKeyDer(PrivateKeyDer&& other) noexcept = default;
  PrivateKeyDer& operator=(PrivateKeyDer&& other) noexcept;
  PrivateKeyDer(const PrivateKeyDer&) = delete;
  PrivateKeyDer& operator=(const PrivateKeyDer&) = delete;
  ~PrivateKeyDer();

  const std::vector<uint8_t>& bytes() const { return der_; }

 private:
  PrivateKeyDer() = default;
  std::vector<uint8_t> der_;
};

}  // namespace wipeproof::proto
