// A relay: a ProverAgent server that forwards every call to a helper agent and answers only after
// an added delay. It is adversary 2 of docs/results/security-results.md (a node that keeps no labels and
// asks a helper that holds them, paying a network link on every round), and the slow or distant
// node the calibration tests measure.
//
// The delay is either simulated (a FakeClock moves by it once the helper has answered: the
// challenger's clock sees exactly it) or real (the answer waits for it on the event loop's timer).
//
// Thread-safety: lives on the thread of the kj event loop it serves, like the helper.
#pragma once

#include <kj/async-io.h>

#include <chrono>
#include <cstdint>

#include "common/clock.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::adversary {

// Microseconds added to each answer.
struct RelayDelays {
  int64_t fill_us = 0;               // startSession and each deviceFilled
  int64_t round_us = 0;              // every round
  int64_t first_round_extra_us = 0;  // round 0, on top of round_us
  // One device's notice waits this much longer than the report (a node that reports its fill
  // before it has sent every device's notice); -1: none.
  int notice_extra_device = -1;
  int64_t notice_extra_us = 0;
};

class RelayAgent final : public proto::ProverAgent::Server {
 public:
  // Simulated delays: `clock` (outlives the relay) moves by them.
  RelayAgent(proto::ProverAgent::Client helper, RelayDelays delays, FakeClock* clock);
  // Real delays on `timer` (outlives the relay).
  RelayAgent(proto::ProverAgent::Client helper, RelayDelays delays, kj::Timer* timer);

 protected:
  kj::Promise<void> startSession(StartSessionContext context) override;
  kj::Promise<void> round(RoundContext context) override;
  kj::Promise<void> finish(FinishContext context) override;
  kj::Promise<void> abort(AbortContext context) override;
  kj::Promise<void> status(StatusContext context) override;
  kj::Promise<void> deviceFilled(DeviceFilledContext context) override;

 private:
  kj::Promise<void> Delay(int64_t micros);
  // fill_us, after the report and after each device's fill notice; simulated: charged once a session.
  kj::Promise<void> FillDelay();
  kj::Promise<void> Until(std::chrono::steady_clock::time_point target);

  proto::ProverAgent::Client helper_;
  RelayDelays delays_;
  bool fill_charged_ = false;  // simulated: this session's fill delay is on the clock already
  FakeClock* clock_ = nullptr;
  kj::Timer* timer_ = nullptr;
};

}  // namespace wipeproof::adversary
