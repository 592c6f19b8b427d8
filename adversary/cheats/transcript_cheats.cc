#include "adversary/cheats/transcript_cheats.h"

namespace wipeproof::adversary {

void ReuseTranscriptSignature::OnTranscriptSending(proto::SignedEnvelope* transcript) {
  if (tools_.memory->earlier_transcript) {
    transcript->signature = tools_.memory->earlier_transcript->signature;  // signed once, reused
  }
}

}  // namespace wipeproof::adversary
