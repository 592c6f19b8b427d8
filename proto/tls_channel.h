// The authenticated transport between challenger and agent: TLS 1.3 through KJ's TLS layer
// (kj/compat/tls.h, libkj-tls over OpenSSL 3). Both ends present the certificate of their own
// Ed25519 key (tls_certificate.h: rebuilt from the key, never read from a file) and trust exactly
// one certificate, the peer's, pinned from a file checked against the peer's public key:
//   - the agent (kServer) requires a client certificate (verifyClients): a handshake completes only
//     with a client holding the pinned challenger certificate's key; a client without a
//     certificate, or with any other, is refused during the handshake;
//   - the challenger (kClient) verifies that the agent presents the pinned node certificate, by
//     chain (the pinned certificate is the only trust anchor; the system trust store is not used)
//     and by name (the certificate's DNS name, CertificateName of the node key).
// TLS 1.3 only: KJ 0.9.2's TlsContext::Options has no TLS 1.3 minimum (its TlsVersion stops at
// TLS_1_2), so the TLS 1.2 cipher list is restricted to one RSA suite, which neither end can use
// with an Ed25519 certificate: a TLS 1.2 handshake fails for want of a shared cipher, and only
// TLS 1.3 (whose suites OpenSSL configures separately) completes. Both ends run OpenSSL 3 and
// therefore negotiate 1.3 anyway; the restriction makes a downgrade impossible rather than
// detected.
//
// Units: bytes. Thread-safety: a TlsChannel's context is used on one kj event loop at a time; the
// object is immutable after Create.
#pragma once

#include <kj/async-io.h>
#include <kj/compat/tls.h>

#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "proto/crypto.h"
#include "proto/tls_certificate.h"

namespace wipeproof::proto {

// TLS 1.2 suites offered: none usable with Ed25519 certificates (see the top of the file).
inline constexpr char kTls12CipherList[] = "ECDHE-RSA-AES128-GCM-SHA256";

class TlsChannel {
 public:
  enum class Role {
    kServer,  // the agent: presents its certificate, requires the pinned client certificate
    kClient,  // the challenger: presents its certificate, requires the pinned server certificate
  };

  // `own`: this party's key pair (its certificate is built from it); `peer`: the one certificate
  // trusted. Errors: INVALID_ARGUMENT when `peer` is empty; INTERNAL when OpenSSL or KJ refuse the
  // configuration.
  static StatusOr<std::unique_ptr<TlsChannel>> Create(Role role, const KeyPair& own, const PinnedCertificate& peer);
  ~TlsChannel() noexcept(false);
  TlsChannel(const TlsChannel&) = delete;
  TlsChannel& operator=(const TlsChannel&) = delete;

  kj::TlsContext& context() { return *context_; }
  const PinnedCertificate& peer() const { return peer_; }
  const std::string& own_name() const { return own_name_; }

  // kServer: the key the client of a completed handshake (`identity`: wrapServer's peerIdentity) is
  // authenticated as: the pinned certificate's key when it presented that certificate, nullopt
  // when it presented none (possible only for a context without verifyClients) or another name.
  std::optional<KeyId> AuthenticatedKey(kj::PeerIdentity& identity) const;

  // kClient: the TLS handshake over `stream`; resolves once the server has proven it holds the
  // pinned certificate's key. Rejects (a kj::Exception) when it has not; DescribeFailure turns that
  // into a sentence naming the pinned certificate.
  kj::Promise<kj::Own<kj::AsyncIoStream>> Connect(kj::Own<kj::AsyncIoStream> stream);
  std::string DescribeFailure(const kj::Exception& e) const;

 private:
  TlsChannel() = default;

  PinnedCertificate peer_;
  std::string own_name_;
  std::unique_ptr<kj::TlsKeypair> own_;
  std::unique_ptr<kj::TlsCertificate> trusted_;
  std::unique_ptr<kj::TlsContext> context_;
};

}  // namespace wipeproof::proto
