// What one session knows, shared by its two halves: the events from the order to the last round
// (session_run.h) and the close: verdict, finish or abort, records (session_close.h). Internal to
// the session room.
//
// Thread-safety: used on the session's thread only.
#pragma once

#include <kj/timer.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "challenger/session/session_checks.h"
#include "challenger/session/session_fills.h"
#include "challenger/session/session_runner.h"
#include "challenger/session/wave_guard.h"
#include "proto/transcript.h"

namespace wipeproof {

struct SessionState {
  SessionState(const SessionPlan& plan, const SessionKeys& keys, const SessionEnv& env, uint64_t prepare_us);
  SessionState(const SessionState&) = delete;
  SessionState& operator=(const SessionState&) = delete;

  // The first failure is the session's: logged, and the wave learns at once that this member will
  // not fill or prove. Later ones are dropped.
  void Fail(SessionFailure f);
  // Microseconds on the session's clock since the order went out.
  uint64_t SinceOrderUs() const;

  const SessionPlan& plan;
  const SessionKeys& keys;
  const SessionEnv& env;
  const std::string name;  // "session <hex id> node <name>", for logs
  WaveGuard wave;
  SessionOutcome out;
  SessionFailure failure;
  std::optional<proto::Held<proto::WipeOrder>> order;  // as signed
  SessionFacts facts;                                  // what the checks read
  proto::TranscriptHasher transcript;
  SessionFills fills;
  // When the order went out, read once: the origin of every offset.
  struct {
    int64_t monotonic_us = -1;  // env clock
    int64_t unix_us = 0;        // env clock's wall time (0: never sent)
    kj::TimePoint real = kj::origin<kj::TimePoint>();
  } sent;
  std::vector<std::string> wave_not_held;  // members of the wave that did not hold labels throughout
  bool inventory_signed = false;           // the order's delegation names the plan's inventory (RecordOrder)
  bool transcript_recordable = false;
  OccupancyFacts occupancy;  // the occupancy window as it ran (SessionRun), for the verdict
};

}  // namespace wipeproof
