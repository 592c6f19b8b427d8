// Envelopes as both sides receive them (proto/signing.h): byte 0 picks the framing, the rest is
//   0: EncodeEnvelope bytes (ledger records, exported heads): DecodeEnvelope(ByteView)
//   1: an RPC parameter/result (startSession's order, finish's verdict and transcript, the fill
//      report): DecodeEnvelope(Envelope::Reader) under RpcReaderOptions
// then verification as every kind under a fixed key (steps 2-5: only the checks before the
// signature can be reached with random bytes; the parsers behind it have their own targets).
// Checks: a decoded envelope re-encodes and decodes to the same values.
#include <cstdlib>

#include "tests/fuzz/fuzz_util.h"

namespace wipeproof::fuzz {
namespace {

void CheckDecoded(const StatusOr<proto::SignedEnvelope>& decoded) {
  if (!decoded.ok()) return;
  const proto::PublicKey& trusted = FuzzKey(kAuthoritySeed).public_key;
  for (uint16_t kind = 0; kind <= 7; ++kind) {
    (void)proto::VerifySignature(*decoded, static_cast<proto::MessageKind>(kind), trusted);
  }
  const proto::Bytes encoded = proto::EncodeEnvelope(*decoded);
  auto again = proto::DecodeEnvelope(proto::AsView(encoded));
  if (!again.ok() || again->kind != decoded->kind || again->payload != decoded->payload ||
      again->signature != decoded->signature || again->signer_key_id != decoded->signer_key_id) {
    std::abort();  // an accepted envelope must survive its own encoding
  }
}

}  // namespace
}  // namespace wipeproof::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  if (size < 1) return 0;
  const uint8_t mode = data[0] % 2;
  ++data, --size;
  const proto::PublicKey& trusted = fuzz::FuzzKey(fuzz::kAuthoritySeed).public_key;
  if (mode == 0) {
    const proto::ByteView bytes(data, size);
    fuzz::CheckDecoded(proto::DecodeEnvelope(bytes));
    (void)proto::VerifyEnvelope(bytes, proto::MessageKind::WIPE_ORDER, trusted);
  } else {
    fuzz::WithRpcRoot<proto::Envelope>(data, size, [&](proto::Envelope::Reader envelope) {
      fuzz::CheckDecoded(proto::DecodeEnvelope(envelope));
      (void)proto::VerifyEnvelope(envelope, proto::MessageKind::FILL_REPORT, trusted);
    });
  }
  return 0;
}
