// Carrying a wipeproof Status across the Cap'n Proto RPC edge. A ProverAgent method that fails
// throws StatusToException(status); its description is "wipeproof:CODE: message" (CODE as in
// StatusCodeName, e.g. "wipeproof:PERMISSION_DENIED: wipeOrder signature does not verify ...").
// The caller turns what it catches (or a rejected promise) back into a Status with
// ExceptionToStatus; capnp's "remote exception: " prefix is tolerated.
//
// Thread-safety: pure functions.
#pragma once

#include <kj/exception.h>

#include "common/status.h"

namespace wipeproof::proto {

inline constexpr char kStatusExceptionPrefix[] = "wipeproof:";

// REQUIRES: !status.ok(). Type FAILED, description as above.
kj::Exception StatusToException(const Status& status);

// The Status a StatusToException exception carried. Other exceptions map by type: DISCONNECTED
// and OVERLOADED to UNAVAILABLE, anything else to INTERNAL, with capnp's description.
Status ExceptionToStatus(const kj::Exception& exception);

}  // namespace wipeproof::proto
