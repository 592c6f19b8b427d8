// What the challenger's session (challenger/session_runner.cc, Session::CheckReport,
// CheckAnswer, CheckTranscript) does with a signed message from the agent, up to the comparisons
// with its own plan: the readability check, the signature under the node key, the bounded parse,
// and reading every field it shows through AgentText/AgentHex. Those Session methods are private
// to session_runner.cc; these mirror their calls to the same production functions, in the same
// order. (The comparisons with the plan are plain field equality.)
//
// Thread-safety: pure functions.
#pragma once

#include "challenger/failure.h"
#include "proto/codec.h"
#include "proto/signing.h"

namespace wipeproof::fuzz {

// Session::CheckReport up to the plan comparisons.
void CheckFillReportLikeChallenger(const proto::SignedEnvelope& envelope, const proto::PublicKey& node_key);
// Session::CheckTranscript up to the comparisons.
void CheckTranscriptLikeChallenger(const proto::SignedEnvelope& envelope, const proto::PublicKey& node_key);

}  // namespace wipeproof::fuzz
