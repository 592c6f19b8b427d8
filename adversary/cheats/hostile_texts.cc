#include "adversary/cheats/hostile_texts.h"

#include <string>

#include "proto/rpc_status.h"

namespace wipeproof::adversary {

namespace {

kj::Promise<void> HugeStatusError(const Deviation& deviation) {
  return proto::StatusToException(InternalError(HugeAgentText(deviation.huge_text_bytes)));
}

}  // namespace

Interception HugeOrderRefusal::OnOrderReceived() {
  const std::string huge = HugeAgentText(deviation_.huge_text_bytes);
  switch (form_) {
    case Form::kStatus:
      return kj::Promise<void>(proto::StatusToException(FailedPreconditionError(huge)));
    case Form::kException:
      return kj::Promise<void>(
          kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::heapString(huge.data(), huge.size())));
    case Form::kDisconnect:
      return kj::Promise<void>(kj::Exception(kj::Exception::Type::DISCONNECTED, __FILE__, __LINE__,
                                             kj::heapString(huge.data(), huge.size())));
  }
  return std::nullopt;
}

Interception HugeRoundError::OnRound(uint32_t round) {
  if (round != deviation_.round) return std::nullopt;
  return HugeStatusError(deviation_);
}

Interception HugeRoundError::OnAbort() { return HugeStatusError(deviation_); }

Interception HugeFinishError::OnFinish() { return HugeStatusError(deviation_); }

}  // namespace wipeproof::adversary
