// Where one answered round's time went inside the agent (AgentCore::AnswerRound), for the round
// benchmark (`wipeproof-prover bench --what=rounds`, docs/benchmarks.md "Rounds"). Reported only
// when AgentConfig::round_stages is set, after the round's answer went out, so that measuring costs
// the answer nothing. All times in nanoseconds on the monotonic clock.
#pragma once

#include <cstdint>
#include <functional>

namespace wipeproof {

struct RoundStages {
  uint32_t round_index = 0;
  int64_t checks_ns = 0;       // the round's canonical copy, its parse and every check of it
  int64_t lookups_ns = 0;      // the first device's StartLookup to the last device's FinishLookup
  int64_t answer_ns = 0;       // AnswerRound entered to the answer written (agentMicros, finer)
  int64_t transcript_ns = 0;   // the transcript hash of round and answer, done after the answer went out
};

using RoundStagesSink = std::function<void(const RoundStages&)>;

}  // namespace wipeproof
