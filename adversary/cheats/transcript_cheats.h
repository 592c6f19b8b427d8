// Adversary 7, the transcript: an agent that answers every round correctly but signs its session's
// transcript otherwise than the protocol says.
//   ReuseTranscriptSignature (DeviationKind::kReusedTranscriptSignature, 7d): sends this session's
//     transcript payload under the signature of the previous session's transcript (AdversaryMemory);
//     the first session, with none to reuse, signs honestly.
//   FlipTranscriptDigest (DeviationKind::kTranscriptMismatch): signs a transcript digest with one
//     bit flipped.
#pragma once

#include "adversary/cheats/cheat.h"

namespace wipeproof::adversary {

class ReuseTranscriptSignature final : public Cheat {
 public:
  explicit ReuseTranscriptSignature(CheatTools tools) : tools_(tools) {}
  void OnTranscriptSending(proto::SignedEnvelope* transcript) override;

 private:
  CheatTools tools_;
};

class FlipTranscriptDigest final : public Cheat {
 public:
  void OnTranscriptDigest(proto::Digest* digest) override { (*digest)[0] ^= 1; }
};

}  // namespace wipeproof::adversary
