#include "adversary/cheats/connection_faults.h"

#include "proto/rpc_status.h"

namespace wipeproof::adversary {

Interception RefuseOrder::OnOrderReceived() {
  return kj::Promise<void>(proto::StatusToException(
      FailedPreconditionError(deviation_.note.empty() ? "busy: test refusal" : deviation_.note)));
}

Interception AlwaysBusy::OnOrderReceived() {
  return kj::Promise<void>(
      proto::StatusToException(BusyError("session a5a5a5a5a5a5a5a5a5a5a5a5a5a5a501 in progress (filling)")));
}

Interception DisconnectMidFill::OnOrderVerified() {
  deviation_.disconnect();
  return kj::Promise<void>(kj::NEVER_DONE);
}

}  // namespace wipeproof::adversary
