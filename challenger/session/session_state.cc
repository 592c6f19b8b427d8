#include "challenger/session/session_state.h"

#include <glog/logging.h>

#include <utility>

#include "common/hex.h"

namespace wipeproof {

SessionState::SessionState(const SessionPlan& plan_in, const SessionKeys& keys_in, const SessionEnv& env_in,
                           uint64_t prepare_us)
    : plan(plan_in),
      keys(keys_in),
      env(env_in),
      name("session " + HexEncode(plan_in.session_id.data(), plan_in.session_id.size()) + " node " + plan_in.node_name),
      wave(env_in.wave, plan_in.node_name, env_in.barrier_wait),
      facts{&plan_in, proto::WipeOrder::Reader(), {}},
      fills(facts, &transcript) {
  out.node_name = plan.node_name;
  out.session_id = plan.session_id;
  out.prepare_us = prepare_us;
}

void SessionState::Fail(SessionFailure f) {
  if (failure.failed()) return;
  // INFO, not WARNING: the failure is the verdict's, which wipe and serve print themselves.
  LOG(INFO) << name << ": " << f.Describe();
  failure = std::move(f);
  wave.Failed();
}

uint64_t SessionState::SinceOrderUs() const {
  return static_cast<uint64_t>(env.clock->MonotonicMicros() - sent.monotonic_us);
}

}  // namespace wipeproof
