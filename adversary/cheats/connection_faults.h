// Connection faults: an agent that never takes the session.
//   RefuseOrder (DeviationKind::kRefuseOrder): refuses every order with FAILED_PRECONDITION "busy:
//     test refusal", or Deviation::note when set (e.g. the real agent's "session ... in progress
//     (filling)"): text, never a busy refusal.
//   AlwaysBusy (DeviationKind::kAlwaysBusy): refuses every order with the real agent's typed busy
//     refusal (status BUSY), as a node that hopes to escape its wipes by always being busy would.
//   DisconnectMidFill (DeviationKind::kDisconnectMidFill): once the order verifies, calls
//     Deviation::disconnect and never answers.
//   BusyAfterRefusedRound (DeviationKind::kBusyAfterRefusedRound): fills and answers deviceFilled
//     but holds startSession's report; refuses the first round it is sent, then fails startSession
//     with the typed busy refusal, as a node would that hopes "busy" reads as "nothing was wiped"
//     after it saw which labels it was asked for.
#pragma once

#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"

namespace wipeproof::adversary {

class RefuseOrder final : public Cheat {
 public:
  explicit RefuseOrder(const Deviation& deviation) : deviation_(deviation) {}
  Interception OnOrderReceived() override;

 private:
  const Deviation& deviation_;
};

class AlwaysBusy final : public Cheat {
 public:
  Interception OnOrderReceived() override;
};

class BusyAfterRefusedRound final : public Cheat {
 public:
  BusyAfterRefusedRound();
  ~BusyAfterRefusedRound() noexcept override;
  Interception HoldReport() override;
  Interception OnRound(uint32_t round) override;

 private:
  kj::PromiseFulfillerPair<void> report_ = kj::newPromiseAndFulfiller<void>();
  kj::Maybe<kj::Promise<void>> busy_later_;
};

class DisconnectMidFill final : public Cheat {
 public:
  explicit DisconnectMidFill(const Deviation& deviation) : deviation_(deviation) {}
  Interception OnOrderVerified() override;

 private:
  const Deviation& deviation_;
};

}  // namespace wipeproof::adversary
