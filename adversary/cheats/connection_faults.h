// Connection faults: an agent that never takes the session.
//   RefuseOrder (DeviationKind::kRefuseOrder): refuses every order with FAILED_PRECONDITION "busy:
//     test refusal", or Deviation::note when set (e.g. the real agent's "session ... in progress
//     (filling)"): text, never a busy refusal.
//   AlwaysBusy (DeviationKind::kAlwaysBusy): refuses every order with the real agent's typed busy
//     refusal (status BUSY), as a node that hopes to escape its wipes by always being busy would.
//   DisconnectMidFill (DeviationKind::kDisconnectMidFill): once the order verifies, calls
//     Deviation::disconnect and never answers.
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

class DisconnectMidFill final : public Cheat {
 public:
  explicit DisconnectMidFill(const Deviation& deviation) : deviation_(deviation) {}
  Interception OnOrderVerified() override;

 private:
  const Deviation& deviation_;
};

}  // namespace wipeproof::adversary
