// The authenticated transport's building blocks (proto/tls_certificate.h, proto/tls_channel.h):
// certificates as a pure function of a key, pinning that refuses any certificate not carrying the
// expected key (or not self-signed by it, or misnamed, or able to issue others), and TLS 1.3
// handshakes over in-memory streams: mutual authentication as the pinned keys, refusal of clients
// without a certificate or with an unpinned one, of a server that is not the pinned node, and of
// any TLS version below 1.3 (a raw OpenSSL client that stops at TLS 1.2).
#include <gtest/gtest.h>
#include <kj/async-io.h>
#include <kj/compat/tls.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <string>
#include <thread>

#include "proto/crypto.h"
#include "proto/key_files.h"
#include "proto/tls_certificate.h"
#include "proto/tls_channel.h"

namespace wipeproof::proto {
namespace {

KeyPair Key(uint8_t fill) {
  std::array<uint8_t, kKeySeedBytes> seed;
  seed.fill(fill);
  return KeyPairFromSeed(seed);
}

PinnedCertificate Pinned(const KeyPair& key) {
  auto pem = CertificatePem(key);
  EXPECT_TRUE(pem.ok()) << pem.status().ToString();
  auto pinned = PinCertificate(*pem, key.public_key, "test");
  EXPECT_TRUE(pinned.ok()) << pinned.status().ToString();
  return *pinned;
}

::testing::AssertionResult RefusedWith(const StatusOr<PinnedCertificate>& pinned, const std::string& text) {
  if (pinned.ok()) return ::testing::AssertionFailure() << "pinned, want a refusal containing \"" << text << "\"";
  if (pinned.status().code() != StatusCode::kInvalidArgument ||
      pinned.status().message().find(text) == std::string::npos) {
    return ::testing::AssertionFailure() << "got " << pinned.status().ToString() << ", want \"" << text << "\"";
  }
  return ::testing::AssertionSuccess();
}

// A certificate built by hand: subject CN `cn` (and the same DNS name), public key `subject`,
// basicConstraints CA:`ca`, signed by `signer`. Our own certificate when cn is CertificateName of
// subject, ca is false and signer is subject.
std::string HandMadeCertificate(const KeyPair& subject, const KeyPair& signer, const std::string& cn, bool ca) {
  auto seed = subject.seed();
  EVP_PKEY* subject_key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size());
  auto signer_seed = signer.seed();
  EVP_PKEY* signer_key =
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, signer_seed.data(), signer_seed.size());
  X509* cert = X509_new();
  X509_set_version(cert, X509_VERSION_3);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_NID(name, NID_commonName, MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1,
                             -1, 0);
  X509_set_issuer_name(cert, name);
  X509_set_pubkey(cert, subject_key);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  for (const auto& [nid, value] :
       {std::pair<int, std::string>{NID_basic_constraints, ca ? "critical,CA:TRUE" : "critical,CA:FALSE"},
        std::pair<int, std::string>{NID_subject_alt_name, "DNS:" + cn}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }
  X509_sign(cert, signer_key, nullptr);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(size));
  BIO_free(bio);
  X509_free(cert);
  EVP_PKEY_free(subject_key);
  EVP_PKEY_free(signer_key);
  return pem;
}

TEST(TlsCertificateTest, TheCertificateIsAPureFunctionOfTheKey) {
  const KeyPair key = Key(0x33);
  auto first = CertificatePem(key);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*CertificatePem(Key(0x33)), *first);  // rebuilt from the same key: the same bytes
  EXPECT_NE(*CertificatePem(Key(0x44)), *first);
  EXPECT_EQ(first->rfind("-----BEGIN CERTIFICATE-----\n", 0), 0u);
  const PinnedCertificate pinned = Pinned(key);
  EXPECT_EQ(pinned.name, "wipeproof-" + KeyIdHex(KeyIdOf(key.public_key)));
  EXPECT_EQ(pinned.key_id, KeyIdOf(key.public_key));
  EXPECT_EQ(pinned.public_key, key.public_key);
  EXPECT_EQ(pinned.pem, *first);

  char dir[] = "/tmp/wp-tls-cert-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/node.crt";
  ASSERT_TRUE(WriteCertificateFile(path, key).ok());
  EXPECT_EQ(WriteCertificateFile(path, key).code(), StatusCode::kAlreadyExists);
  auto read = ReadPinnedCertificate(path, key.public_key);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->pem, *first);
  std::remove(path.c_str());
  rmdir(dir);
}

// Each check of PinCertificate, on a certificate that passes every other one.
// threat-model: T-BAD-PIN
TEST(TlsCertificateTest, PinningRefusesEveryCertificateThatDoesNotBindTheExpectedKey) {
  const KeyPair node = Key(0x33), other = Key(0x44);
  const std::string name = CertificateName(KeyIdOf(node.public_key));
  // The hand-made twin of our own certificate pins: the checks below each change one thing.
  EXPECT_TRUE(PinCertificate(HandMadeCertificate(node, node, name, false), node.public_key, "twin").ok());

  EXPECT_TRUE(RefusedWith(PinCertificate(*CertificatePem(other), node.public_key, "node.crt"),
                          "node.crt: the certificate's public key (key id " + KeyIdHex(KeyIdOf(other.public_key)) +
                              ") is not the expected key (key id " + KeyIdHex(KeyIdOf(node.public_key)) + ")"));
  EXPECT_TRUE(RefusedWith(PinCertificate(HandMadeCertificate(node, other, name, false), node.public_key, "forged"),
                          "forged: the certificate is not validly self-signed by its key"));
  EXPECT_TRUE(RefusedWith(
      PinCertificate(HandMadeCertificate(node, node, "wipeproof-0000000000000000", false), node.public_key, "misnamed"),
      "misnamed: subject 'wipeproof-0000000000000000', want exactly CN=" + name));
  EXPECT_TRUE(RefusedWith(PinCertificate(HandMadeCertificate(node, node, name, true), node.public_key, "ca"),
                          "ca: the certificate must say basicConstraints CA:FALSE"));
  EXPECT_TRUE(RefusedWith(PinCertificate("not a certificate", node.public_key, "junk"), "junk: not a PEM certificate"));
  EXPECT_TRUE(RefusedWith(PinCertificate(*CertificatePem(node) + *CertificatePem(other), node.public_key, "two"),
                          "two: more than one certificate"));
  EXPECT_TRUE(RefusedWith(PinCertificate(std::string(kMaxCertificateBytes + 1, 'x'), node.public_key, "big"),
                          "over the limit"));
}

// Both ends of an in-memory stream, each through its own channel.
struct Handshake {
  std::string client_error, server_error;
  std::optional<KeyId> client_is;  // as the server saw it
  bool both_ok() const { return client_error.empty() && server_error.empty(); }
};

Handshake RunHandshake(
    kj::AsyncIoContext& io, TlsChannel& server,
    kj::Function<kj::Promise<kj::Own<kj::AsyncIoStream>>(kj::Own<kj::AsyncIoStream>)> client_connect) {
  Handshake h;
  auto pipe = io.provider->newTwoWayPipe();
  auto served = server.context()
                    .wrapServer(kj::AuthenticatedStream{kj::mv(pipe.ends[0]), kj::UnknownPeerIdentity::newInstance()})
                    .then([&](kj::AuthenticatedStream s) -> kj::Promise<void> {
                      h.client_is = server.AuthenticatedKey(*s.peerIdentity);
                      auto buffer = kj::heapArray<char>(4);
                      auto& stream = *s.stream;
                      return stream.read(buffer.begin(), 4).attach(kj::mv(buffer), kj::mv(s.stream));
                    })
                    .catch_([&](kj::Exception&& e) { h.server_error = e.getDescription().cStr(); });
  auto client = client_connect(kj::mv(pipe.ends[1]))
                    .then([&](kj::Own<kj::AsyncIoStream> stream) -> kj::Promise<void> {
                      auto& s = *stream;
                      return s.write("ping", 4)
                          .then([&s]() {
                            // Reads what the server answers: nothing (EOF) or, when it refused us, its alert.
                            auto buffer = kj::heapArray<char>(1);
                            auto& b = *buffer.begin();
                            return s.tryRead(&b, 1, 1).ignoreResult().attach(kj::mv(buffer));
                          })
                          .attach(kj::mv(stream));
                    })
                    .catch_([&](kj::Exception&& e) { h.client_error = e.getDescription().cStr(); });
  served.wait(io.waitScope);
  client.wait(io.waitScope);
  return h;
}

TEST(TlsChannelTest, MutualHandshakeAuthenticatesTheClientAsThePinnedKey) {
  auto io = kj::setupAsyncIo();
  const KeyPair node = Key(0x33), challenger = Key(0x22);
  auto server = TlsChannel::Create(TlsChannel::Role::kServer, node, Pinned(challenger));
  auto client = TlsChannel::Create(TlsChannel::Role::kClient, challenger, Pinned(node));
  ASSERT_TRUE(server.ok() && client.ok());
  Handshake h = RunHandshake(io, **server, [&](kj::Own<kj::AsyncIoStream> s) { return (*client)->Connect(kj::mv(s)); });
  EXPECT_TRUE(h.server_error.empty()) << h.server_error;
  ASSERT_TRUE(h.client_is.has_value());
  EXPECT_EQ(*h.client_is, KeyIdOf(challenger.public_key));
  EXPECT_EQ((*server)->own_name(), CertificateName(KeyIdOf(node.public_key)));
}

// threat-model: T-UNPINNED-CLIENT
TEST(TlsChannelTest, ClientsWithoutTheBoundCertificateAreRefused) {
  auto io = kj::setupAsyncIo();
  const KeyPair node = Key(0x33), challenger = Key(0x22), stranger = Key(0x55);
  auto server = TlsChannel::Create(TlsChannel::Role::kServer, node, Pinned(challenger));
  ASSERT_TRUE(server.ok());

  auto unpinned = TlsChannel::Create(TlsChannel::Role::kClient, stranger, Pinned(node));
  Handshake h =
      RunHandshake(io, **server, [&](kj::Own<kj::AsyncIoStream> s) { return (*unpinned)->Connect(kj::mv(s)); });
  EXPECT_NE(h.server_error.find("certificate verify failed"), std::string::npos) << h.server_error;
  EXPECT_FALSE(h.client_is.has_value());

  const PinnedCertificate node_cert = Pinned(node);
  kj::TlsCertificate trusted(kj::StringPtr(node_cert.pem.c_str()));
  kj::TlsContext::Options options;
  options.useSystemTrustStore = false;
  options.trustedCertificates = kj::arrayPtr(&trusted, 1);
  kj::TlsContext certless(kj::mv(options));
  h = RunHandshake(io, **server, [&](kj::Own<kj::AsyncIoStream> s) {
    return certless.wrapClient(kj::mv(s), kj::StringPtr(node_cert.name.c_str()));
  });
  EXPECT_NE(h.server_error.find("peer did not return a certificate"), std::string::npos) << h.server_error;
  EXPECT_FALSE(h.client_is.has_value());
}

// threat-model: T-IMPOSTOR-AGENT
TEST(TlsChannelTest, AClientRefusesAServerThatIsNotThePinnedNode) {
  auto io = kj::setupAsyncIo();
  const KeyPair node = Key(0x33), impostor = Key(0x44), challenger = Key(0x22);
  auto server = TlsChannel::Create(TlsChannel::Role::kServer, impostor, Pinned(challenger));
  auto client = TlsChannel::Create(TlsChannel::Role::kClient, challenger, Pinned(node));
  ASSERT_TRUE(server.ok() && client.ok());
  Handshake h = RunHandshake(io, **server, [&](kj::Own<kj::AsyncIoStream> s) { return (*client)->Connect(kj::mv(s)); });
  EXPECT_NE(h.client_error.find("TLS peer's certificate is not trusted"), std::string::npos) << h.client_error;
  EXPECT_NE((*client)
                ->DescribeFailure(kj::Exception(kj::Exception::Type::FAILED, "x", 0, kj::str("why")))
                .find("pinned certificate " + CertificateName(KeyIdOf(node.public_key))),
            std::string::npos);
}

TEST(TlsChannelTest, AnEmptyPinIsRefused) {
  EXPECT_EQ(TlsChannel::Create(TlsChannel::Role::kClient, Key(0x22), PinnedCertificate{}).status().code(),
            StatusCode::kInvalidArgument);
}

// A raw OpenSSL client with the right key and certificate, at most TLS version `max_version`, over
// one end of a socket pair. Returns whether SSL_connect and a write succeeded.
bool RawClientHandshake(int fd, int max_version, const KeyPair& key) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_max_proto_version(ctx, max_version);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  SSL_CTX_set_cipher_list(ctx, "ALL");  // every TLS 1.2 suite OpenSSL has
  const std::string pem = *CertificatePem(key);
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  auto seed = key.seed();
  EVP_PKEY* pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size());
  SSL_CTX_use_certificate(ctx, cert);
  SSL_CTX_use_PrivateKey(ctx, pkey);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  const bool ok = SSL_connect(ssl) == 1 && SSL_write(ssl, "ping", 4) == 4;
  ERR_clear_error();
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  EVP_PKEY_free(pkey);
  X509_free(cert);
  BIO_free(bio);
  close(fd);
  return ok;
}

// Only TLS 1.3 completes, even for a client with the pinned certificate: KJ 0.9.2 cannot set a
// TLS 1.3 minimum, and kTls12CipherList leaves no TLS 1.2 suite an Ed25519 certificate can use.
// threat-model: T-TLS-DOWNGRADE
TEST(TlsChannelTest, OnlyTls13Completes) {
  auto io = kj::setupAsyncIo();
  const KeyPair node = Key(0x33), challenger = Key(0x22);
  auto server = TlsChannel::Create(TlsChannel::Role::kServer, node, Pinned(challenger));
  ASSERT_TRUE(server.ok());
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    bool client_ok = false;
    std::thread client([&] { client_ok = RawClientHandshake(fds[1], version, challenger); });
    auto stream = io.lowLevelProvider->wrapSocketFd(fds[0], kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP);
    std::string server_error;
    std::optional<KeyId> who;
    kj::Own<kj::AsyncIoStream> served;  // open until the client is done
    (*server)
        ->context()
        .wrapServer(kj::AuthenticatedStream{kj::mv(stream), kj::UnknownPeerIdentity::newInstance()})
        .then(
            [&](kj::AuthenticatedStream s) {
              who = (*server)->AuthenticatedKey(*s.peerIdentity);
              served = kj::mv(s.stream);
            },
            [&](kj::Exception&& e) { server_error = e.getDescription().cStr(); })
        .wait(io.waitScope);
    client.join();
    served = nullptr;
    if (version == TLS1_2_VERSION) {
      EXPECT_FALSE(client_ok);
      EXPECT_NE(server_error.find("no shared cipher"), std::string::npos) << server_error;
      EXPECT_FALSE(who.has_value());
    } else {
      EXPECT_TRUE(client_ok);
      EXPECT_TRUE(server_error.empty()) << server_error;
      ASSERT_TRUE(who.has_value());
      EXPECT_EQ(*who, KeyIdOf(challenger.public_key));
    }
  }
}

}  // namespace
}  // namespace wipeproof::proto
