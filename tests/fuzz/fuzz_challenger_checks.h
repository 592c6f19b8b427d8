// What the challenger's session (challenger/session/session_runner.cc, Session::CheckReport,
// CheckAnswer, CheckTranscript) does with a signed message from the agent, up to the comparisons
// with its own plan: the readability check, the signature under the node key, the bounded parse,
// and reading every field it shows through PeerText/PeerHex. Those Session methods are private
// to session_runner.cc; these mirror their calls to the same production functions, in the same
// order. (The comparisons with the plan are plain field equality.)
//
// Thread-safety: pure functions.
#pragma once

#include "challenger/session/failure.h"
#include "proto/codec.h"
#include "proto/signing.h"

namespace wipeproof::fuzz {

// Session::CheckReport up to the plan comparisons.
void CheckFillReportLikeChallenger(const proto::SignedEnvelope& envelope, const proto::PublicKey& node_key);
// Session::CheckTranscript up to the comparisons.
void CheckTranscriptLikeChallenger(const proto::SignedEnvelope& envelope, const proto::PublicKey& node_key);

// One fuzz input of a node-signed message the challenger receives (fill report, transcript), as
// `check` handles it. Byte 0 picks: 0, the rest is the RPC-framed result Envelope
// (DecodeEnvelope, then `check`; random bytes fail the signature, as they should); 1, the rest is a
// `kind` payload signed with the node key the challenger trusts, so the parse and field reads after
// the signature check are reached.
void FuzzNodeSignedMessage(const uint8_t* data, size_t size, proto::MessageKind kind,
                           void (*check)(const proto::SignedEnvelope&, const proto::PublicKey&));

}  // namespace wipeproof::fuzz
