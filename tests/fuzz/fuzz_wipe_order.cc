// The agent's startSession (prover/agent/agent_core.h AdmitSession, checks 1-6): the input is a
// WipeOrder payload, signed here with the challenger key the agent trusts, so everything after the
// signature check is reached: ParseMessage<WipeOrder> (canonical form, walk, ValidateShape), the
// address and time checks (order_checks.h), the replay set, and matching the plan against the
// agent's devices (device_match.h). An admitted order is dropped unfilled (the session ends).
// A fresh agent per input (fuzz_agent.h). Unsigned envelopes: fuzz_signed_envelope.
#include "tests/fuzz/fuzz_agent.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  proto::SignedEnvelope order;
  if (!fuzz::SignFuzzPayload(proto::MessageKind::WIPE_ORDER, data, size, agent_test::ChallengerKey(), &order)) return 0;
  auto fixture = fuzz::NewAgent();
  {
    // Dropping an Admitted ends its session; the agent must be idle again either way.
    auto admitted = fixture->core->AdmitSession(order, fuzz::kOwner, fuzz::OwnerKey());
  }
  if (!fixture->core->WaitUntilIdle(10'000'000)) __builtin_trap();
  return 0;
}
