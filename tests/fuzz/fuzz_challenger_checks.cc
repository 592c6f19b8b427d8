#include "tests/fuzz/fuzz_challenger_checks.h"

#include <string>

#include "tests/fuzz/fuzz_util.h"

namespace wipeproof::fuzz {

namespace {

std::string HexOf(capnp::Data::Reader data) { return PeerHex(data.begin(), data.size()); }
std::string TextOf(capnp::Text::Reader text) { return PeerText(std::string_view(text.begin(), text.size())); }

}  // namespace

void CheckFillReportLikeChallenger(const proto::SignedEnvelope& envelope, const proto::PublicKey& node_key) {
  if (envelope.kind == proto::MessageKind::FILL_REPORT) {
    auto readable = proto::ParseMessage<proto::FillReport>(proto::AsView(envelope.payload));
    if (readable.ok()) (void)HexOf(readable->root().getSessionId());
  }
  Status signature = proto::VerifySignature(envelope, proto::MessageKind::FILL_REPORT, node_key);
  if (!signature.ok()) {
    (void)PeerText(signature.message());
    return;
  }
  auto parsed = proto::ParseMessage<proto::FillReport>(proto::AsView(envelope.payload));
  if (!parsed.ok()) {
    (void)PeerText(parsed.status().message());
    return;
  }
  (void)proto::Blake2b256(proto::AsView(envelope.payload));
  proto::FillReport::Reader report = parsed->root();
  (void)HexOf(report.getSessionId());
  (void)HexOf(report.getOrderDigest());
  (void)HexOf(report.getNodeKeyId());
  for (proto::DeviceFill::Reader d : report.getDevices()) {
    (void)TextOf(d.getSelector());
    (void)TextOf(d.getNote());
    (void)(d.getFirstLabel() + d.getLabelCount() + d.getBytesHeld() + d.getReserveBytes() + d.getBytesHeldByOthers() +
           d.getTotalBytes() + d.getFillMicros());
  }
}

void CheckTranscriptLikeChallenger(const proto::SignedEnvelope& envelope, const proto::PublicKey& node_key) {
  if (envelope.kind == proto::MessageKind::TRANSCRIPT_DIGEST) {
    auto readable = proto::ParseMessage<proto::TranscriptDigest>(proto::AsView(envelope.payload));
    if (readable.ok()) (void)HexOf(readable->root().getSessionId());
  }
  Status signature = proto::VerifySignature(envelope, proto::MessageKind::TRANSCRIPT_DIGEST, node_key);
  if (!signature.ok()) {
    (void)PeerText(signature.message());
    return;
  }
  auto parsed = proto::ParseMessage<proto::TranscriptDigest>(proto::AsView(envelope.payload));
  if (!parsed.ok()) {
    (void)PeerText(parsed.status().message());
    return;
  }
  proto::TranscriptDigest::Reader t = parsed->root();
  (void)HexOf(t.getSessionId());
  (void)HexOf(t.getNodeKeyId());
  (void)HexOf(t.getDigest());
  (void)HexOf(t.getVerdictDigest());
  (void)t.getRoundCount();
}

void FuzzNodeSignedMessage(const uint8_t* data, size_t size, proto::MessageKind kind,
                           void (*check)(const proto::SignedEnvelope&, const proto::PublicKey&)) {
  if (size < 1) return;
  const uint8_t mode = data[0] % 2;
  ++data, --size;
  const proto::KeyPair& node = FuzzKey(kNodeSeed);
  if (mode == 0) {
    WithRpcRoot<proto::Envelope>(data, size, [&](proto::Envelope::Reader reader) {
      auto envelope = proto::DecodeEnvelope(reader);
      if (!envelope.ok()) {
        (void)PeerText(envelope.status().ToString());
        return;
      }
      check(*envelope, node.public_key);
    });
  } else {
    proto::SignedEnvelope envelope;
    if (!SignFuzzPayload(kind, data, size, node, &envelope)) return;
    check(envelope, node.public_key);
  }
}

}  // namespace wipeproof::fuzz
