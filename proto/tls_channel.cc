#include "proto/tls_channel.h"

#include <kj/debug.h>

#include <utility>

namespace wipeproof::proto {

StatusOr<std::unique_ptr<TlsChannel>> TlsChannel::Create(Role role, const KeyPair& own, const PinnedCertificate& peer) {
  if (peer.empty()) return InvalidArgumentError("no pinned peer certificate");
  WP_ASSIGN_OR_RETURN(std::string own_pem, CertificatePem(own));
  WP_ASSIGN_OR_RETURN(PrivateKeyDer own_key, PrivateKeyDer::Of(own));
  std::unique_ptr<TlsChannel> channel(new TlsChannel());
  channel->peer_ = peer;
  channel->own_name_ = CertificateName(KeyIdOf(own.public_key));
  try {
    channel->own_ = std::make_unique<kj::TlsKeypair>(
        kj::TlsKeypair{kj::TlsPrivateKey(kj::arrayPtr(own_key.bytes().data(), own_key.bytes().size())),
                       kj::TlsCertificate(kj::StringPtr(own_pem.c_str()))});
    channel->trusted_ = std::make_unique<kj::TlsCertificate>(kj::StringPtr(channel->peer_.pem.c_str()));
    kj::TlsContext::Options options;
    options.useSystemTrustStore = false;
    options.verifyClients = role == Role::kServer;
    options.trustedCertificates = kj::arrayPtr(channel->trusted_.get(), 1);
    options.minVersion = kj::TlsVersion::TLS_1_2;  // the highest KJ 0.9.2 can name; 1.3 via the cipher list
    options.cipherList = kTls12CipherList;
    options.defaultKeypair = *channel->own_;
    channel->context_ = std::make_unique<kj::TlsContext>(kj::mv(options));
  } catch (const kj::Exception& e) {
    return InternalError(std::string("cannot set up TLS: ") + e.getDescription().cStr());
  }
  return channel;
}

TlsChannel::~TlsChannel() noexcept(false) {}

std::optional<KeyId> TlsChannel::AuthenticatedKey(kj::PeerIdentity& identity) const {
  auto* tls = dynamic_cast<kj::TlsPeerIdentity*>(&identity);
  if (tls == nullptr || !tls->hasCertificate()) return std::nullopt;
  // The handshake verified the chain against the one pinned certificate, which cannot issue others
  // (CA:FALSE): the name check is belt and braces. (libkj-tls 0.9.2 declares matchesHostname but
  // does not implement it; the common name is what it offers.)
  try {
    if (tls->getCommonName() != kj::StringPtr(peer_.name.c_str())) return std::nullopt;
  } catch (const kj::Exception&) {
    return std::nullopt;
  }
  return peer_.key_id;
}

kj::Promise<kj::Own<kj::AsyncIoStream>> TlsChannel::Connect(kj::Own<kj::AsyncIoStream> stream) {
  return context_->wrapClient(kj::mv(stream), kj::StringPtr(peer_.name.c_str()));
}

std::string TlsChannel::DescribeFailure(const kj::Exception& e) const {
  return "TLS handshake failed (the peer must hold the key of the pinned certificate " + peer_.name +
         ", and accept ours, " + own_name_ + "): " + e.getDescription().cStr();
}

}  // namespace wipeproof::proto
