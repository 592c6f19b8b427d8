#include "proto/tls_certificate.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sodium.h>

#include <cstring>
#include <memory>
#include <utility>

#include "common/hex.h"
#include "proto/key_files.h"

namespace wipeproof::proto {

namespace {

// OpenSSL objects freed on scope exit.
struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(X509_NAME* p) const { X509_NAME_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(ASN1_STRING* p) const { ASN1_STRING_free(p); }  // ASN1_INTEGER, ASN1_TIME
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BASIC_CONSTRAINTS* p) const { BASIC_CONSTRAINTS_free(p); }
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, Free>;

constexpr char kNotBefore[] = "20000101000000Z";
constexpr char kNotAfter[] = "99991231235959Z";

// The OpenSSL error queue as text (cleared), for INTERNAL errors.
std::string OpenSslErrors() {
  std::string text;
  while (unsigned long e = ERR_get_error()) {
    char line[256];
    ERR_error_string_n(e, line, sizeof(line));
    text += (text.empty() ? "" : "; ") + std::string(line);
  }
  return text.empty() ? "no detail" : text;
}

Status OpenSslError(const std::string& what) { return InternalError(what + ": " + OpenSslErrors()); }

StatusOr<Owned<EVP_PKEY>> PrivateKeyOf(const KeyPair& key) {
  const auto seed = key.seed();
  Owned<EVP_PKEY> pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size()));
  if (!pkey) return OpenSslError("cannot load the Ed25519 key");
  return pkey;
}

Status AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) return OpenSslError(std::string("cannot add ") + value);
  return Status::Ok();
}

StatusOr<std::string> PemOf(X509* cert) {
  Owned<BIO> bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return OpenSslError("cannot encode the certificate");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

// The subject's CN, or "" when it has none or more than one.
std::string CommonName(X509* cert) {
  X509_NAME* subject = X509_get_subject_name(cert);
  if (subject == nullptr || X509_NAME_entry_count(subject) != 1) return "";
  const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (index < 0) return "";
  ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                     static_cast<size_t>(ASN1_STRING_length(value)));
}

// The one DNS name of the subjectAltName extension, or "" when there is not exactly one name.
std::string OnlyDnsName(X509* cert) {
  Owned<GENERAL_NAMES> names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names || sk_GENERAL_NAME_num(names.get()) != 1) return "";
  const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), 0);
  if (name->type != GEN_DNS) return "";
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(name->d.dNSName)),
                     static_cast<size_t>(ASN1_STRING_length(name->d.dNSName)));
}

}  // namespace

std::string CertificateName(const KeyId& key_id) { return "wipeproof-" + KeyIdHex(key_id); }

StatusOr<std::string> CertificatePem(const KeyPair& key) {
  WP_ASSIGN_OR_RETURN(Owned<EVP_PKEY> pkey, PrivateKeyOf(key));
  const KeyId id = KeyIdOf(key.public_key);
  const std::string name = CertificateName(id);

  Owned<X509> cert(X509_new());
  Owned<BIGNUM> serial_bn(BN_bin2bn(id.data(), static_cast<int>(id.size()), nullptr));
  Owned<ASN1_INTEGER> serial(serial_bn ? BN_to_ASN1_INTEGER(serial_bn.get(), nullptr) : nullptr);
  Owned<ASN1_TIME> not_before(ASN1_TIME_new()), not_after(ASN1_TIME_new());
  Owned<X509_NAME> subject(X509_NAME_new());
  if (!cert || !serial || !not_before || !not_after || !subject) return OpenSslError("cannot allocate a certificate");
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1 || X509_set_serialNumber(cert.get(), serial.get()) != 1 ||
      ASN1_TIME_set_string_X509(not_before.get(), kNotBefore) != 1 ||
      ASN1_TIME_set_string_X509(not_after.get(), kNotAfter) != 1 ||
      X509_set1_notBefore(cert.get(), not_before.get()) != 1 || X509_set1_notAfter(cert.get(), not_after.get()) != 1 ||
      X509_NAME_add_entry_by_NID(subject.get(), NID_commonName, MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0) != 1 ||
      X509_set_subject_name(cert.get(), subject.get()) != 1 || X509_set_issuer_name(cert.get(), subject.get()) != 1 ||
      X509_set_pubkey(cert.get(), pkey.get()) != 1) {
    return OpenSslError("cannot build the certificate");
  }
  WP_RETURN_IF_ERROR(AddExtension(cert.get(), NID_basic_constraints, "critical,CA:FALSE"));
  WP_RETURN_IF_ERROR(AddExtension(cert.get(), NID_ext_key_usage, "serverAuth,clientAuth"));
  WP_RETURN_IF_ERROR(AddExtension(cert.get(), NID_subject_alt_name, ("DNS:" + name).c_str()));
  // Ed25519 takes no separate digest: md must be null.
  if (X509_sign(cert.get(), pkey.get(), nullptr) <= 0) return OpenSslError("cannot sign the certificate");
  return PemOf(cert.get());
}

StatusOr<PinnedCertificate> PinCertificate(std::string_view pem, const PublicKey& expected, const std::string& what) {
  if (pem.size() > kMaxCertificateBytes) {
    return InvalidArgumentError(what + ": " + std::to_string(pem.size()) + " bytes, over the limit of " +
                                std::to_string(kMaxCertificateBytes) + " for a certificate");
  }
  ERR_clear_error();
  Owned<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return OpenSslError(what);
  Owned<X509> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) {
    ERR_clear_error();
    return InvalidArgumentError(what + ": not a PEM certificate (-----BEGIN CERTIFICATE-----)");
  }
  // Exactly one certificate: whatever follows may be whitespace only.
  char rest[64];
  for (int n; (n = BIO_read(bio.get(), rest, sizeof(rest))) > 0;) {
    for (int i = 0; i < n; ++i) {
      if (rest[i] != '\n' && rest[i] != '\r' && rest[i] != ' ' && rest[i] != '\t') {
        return InvalidArgumentError(what + ": more than one certificate, or text after it; want exactly one");
      }
    }
  }
  ERR_clear_error();

  const KeyId expected_id = KeyIdOf(expected);
  const std::string expected_name = CertificateName(expected_id);
  EVP_PKEY* key = X509_get0_pubkey(cert.get());
  if (key == nullptr || EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    ERR_clear_error();
    return InvalidArgumentError(what + ": the certificate's key is not Ed25519");
  }
  PublicKey got{};
  size_t got_size = got.size();
  if (EVP_PKEY_get_raw_public_key(key, got.data(), &got_size) != 1 || got_size != got.size()) {
    return OpenSslError(what + ": cannot read the certificate's public key");
  }
  if (got != expected) {
    return InvalidArgumentError(what + ": the certificate's public key (key id " + KeyIdHex(KeyIdOf(got)) +
                                ") is not the expected key (key id " + KeyIdHex(expected_id) +
                                "): pin the certificate that keygen wrote beside that key's .pub file");
  }
  if (X509_verify(cert.get(), key) != 1) {
    ERR_clear_error();
    return InvalidArgumentError(what + ": the certificate is not validly self-signed by its key");
  }
  const std::string cn = CommonName(cert.get());
  if (cn != expected_name) {
    return InvalidArgumentError(what + ": subject '" + cn + "', want exactly CN=" + expected_name);
  }
  const std::string dns = OnlyDnsName(cert.get());
  if (dns != expected_name) {
    return InvalidArgumentError(what + ": subjectAltName DNS name '" + dns + "', want exactly " + expected_name);
  }
  Owned<BASIC_CONSTRAINTS> constraints(
      static_cast<BASIC_CONSTRAINTS*>(X509_get_ext_d2i(cert.get(), NID_basic_constraints, nullptr, nullptr)));
  if (!constraints || constraints->ca != 0) {
    return InvalidArgumentError(what + ": the certificate must say basicConstraints CA:FALSE");
  }
  PinnedCertificate pinned;
  WP_ASSIGN_OR_RETURN(pinned.pem, PemOf(cert.get()));
  pinned.name = expected_name;
  pinned.public_key = expected;
  pinned.key_id = expected_id;
  return pinned;
}

StatusOr<PinnedCertificate> ReadPinnedCertificate(const std::string& path, const PublicKey& expected) {
  WP_ASSIGN_OR_RETURN(std::string text, ReadPublicTextFile(path));
  return PinCertificate(text, expected, path);
}

Status WriteCertificateFile(const std::string& path, const KeyPair& key, bool overwrite) {
  WP_ASSIGN_OR_RETURN(std::string pem, CertificatePem(key));
  return WritePublicTextFile(path, pem, overwrite);
}

StatusOr<PrivateKeyDer> PrivateKeyDer::Of(const KeyPair& key) {
  WP_ASSIGN_OR_RETURN(Owned<EVP_PKEY> pkey, PrivateKeyOf(key));
  const int size = i2d_PrivateKey(pkey.get(), nullptr);
  if (size <= 0) return OpenSslError("cannot encode the Ed25519 key");
  PrivateKeyDer out;
  out.der_.resize(static_cast<size_t>(size));
  unsigned char* p = out.der_.data();
  if (i2d_PrivateKey(pkey.get(), &p) != size) return OpenSslError("cannot encode the Ed25519 key");
  return out;
}

PrivateKeyDer& PrivateKeyDer::operator=(PrivateKeyDer&& other) noexcept {
  if (this != &other) {
    sodium_memzero(der_.data(), der_.size());
    der_ = std::move(other.der_);
  }
  return *this;
}

PrivateKeyDer::~PrivateKeyDer() { sodium_memzero(der_.data(), der_.size()); }

}  // namespace wipeproof::proto
