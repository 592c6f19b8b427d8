#include "adversary/cheats/connection_faults.h"

#include <string>

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

BusyAfterRefusedRound::BusyAfterRefusedRound() = default;
BusyAfterRefusedRound::~BusyAfterRefusedRound() noexcept {}

Interception BusyAfterRefusedRound::HoldReport() { return kj::mv(report_.promise); }

Interception BusyAfterRefusedRound::OnRound(uint32_t round) {
  if (busy_later_ == nullptr) {
    // The round's refusal goes out first: startSession fails once the event loop has nothing
    // else to do (evalLast), so after the RPC system sent the round's return.
    busy_later_ = kj::evalLast([this]() {
                    report_.fulfiller->reject(proto::StatusToException(
                        BusyError("session a5a5a5a5a5a5a5a5a5a5a5a5a5a5a501 in progress (filling)")));
                  }).eagerlyEvaluate(nullptr);
  }
  return kj::Promise<void>(
      proto::StatusToException(FailedPreconditionError("round " + std::to_string(round) + " refused: still filling")));
}

Interception DisconnectMidFill::OnOrderVerified() {
  deviation_.disconnect();
  return kj::Promise<void>(kj::NEVER_DONE);
}

}  // namespace wipeproof::adversary
