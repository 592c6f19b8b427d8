// Hostile texts: an agent whose errors carry HugeAgentText(Deviation::huge_text_bytes) (control
// bytes, invalid UTF-8, megabytes long), which the challenger must survive and cut to size.
//   HugeOrderRefusal: startSession fails with it as a wipeproof Status (DeviationKind::kHugeRefusal),
//     a plain exception (kHugeException) or a DISCONNECTED exception (kHugeDisconnect).
//   HugeRoundError (kHugeRoundError): round Deviation::round fails with it as a Status, and so does
//     the abort that follows.
//   HugeFinishError (kHugeFinishError): finish fails with it as a Status.
#pragma once

#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"

namespace wipeproof::adversary {

class HugeOrderRefusal final : public Cheat {
 public:
  enum class Form { kStatus, kException, kDisconnect };

  HugeOrderRefusal(const Deviation& deviation, Form form) : deviation_(deviation), form_(form) {}
  Interception OnOrderReceived() override;

 private:
  const Deviation& deviation_;
  Form form_;
};

class HugeRoundError final : public Cheat {
 public:
  explicit HugeRoundError(const Deviation& deviation) : deviation_(deviation) {}
  Interception OnRound(uint32_t round) override;
  Interception OnAbort() override;

 private:
  const Deviation& deviation_;
};

class HugeFinishError final : public Cheat {
 public:
  explicit HugeFinishError(const Deviation& deviation) : deviation_(deviation) {}
  Interception OnFinish() override;

 private:
  const Deviation& deviation_;
};

}  // namespace wipeproof::adversary
