#include "challenger/session/session_runner.h"

#include <glog/logging.h>

#include <memory>
#include <utility>

#include "challenger/session/challenges.h"
#include "challenger/session/expected_labels.h"
#include "challenger/session/session_run.h"
#include "proto/label_wire.h"

namespace wipeproof {

PreparedSession::PreparedSession() = default;
PreparedSession::~PreparedSession() = default;
PreparedSession::PreparedSession(PreparedSession&&) noexcept = default;
PreparedSession& PreparedSession::operator=(PreparedSession&&) noexcept = default;

uint64_t PreparedSession::ExpectedLabelBytes() const {
  if (!challenges) return 0;
  uint64_t labels = 0;
  for (size_t d = 0; d < challenges->devices(); ++d) {
    for (uint32_t b = 0; b < challenges->batches(); ++b) labels += challenges->Indices(d, b).size();
  }
  return labels * proto::kLabelBytes;
}

PreparedSession PrepareSession(SessionPlan plan, const Clock& clock, int threads, uint64_t test_delay_us,
                               std::function<void(uint64_t done_labels, uint64_t total_labels)> progress) {
  PreparedSession out;
  out.plan = std::move(plan);
  const SessionPlan& p = out.plan;
  const int64_t start = clock.MonotonicMicros();
  std::vector<ChallengeRange> ranges;
  for (const PlannedDevice& d : p.devices)
    ranges.push_back({d.first_label, d.label_count, d.labels_per_round, d.hold_labels, d.occupancy_labels});
  auto challenges = GenerateChallenges(ranges, p.profile.rounds, p.holding_batches, p.profile.chunk_labels,
                                       p.occupancy_batches);
  if (!challenges.ok()) {
    out.status = challenges.status();
    return out;
  }
  out.challenges = std::make_unique<ChallengeSet>(std::move(*challenges));
  ExpectedLabelsSpec spec;
  spec.session = p.LabelSession();
  spec.devices = ranges;
  spec.threads = threads;
  spec.test_delay_us = test_delay_us;
  spec.progress = std::move(progress);
  out.expected = ExpectedLabels::Start(spec, *out.challenges);
  out.status = out.expected->Wait().WithContext("expected labels");
  out.prepare_us = static_cast<uint64_t>(clock.MonotonicMicros() - start);
  return out;
}

SessionRunner::SessionRunner(SessionPlan plan, SessionKeys keys, SessionEnv env)
    : plan_(std::move(plan)), keys_(std::move(keys)), env_(env) {
  CHECK(env_.clock != nullptr && env_.timer != nullptr && env_.wait_scope != nullptr && env_.records != nullptr)
      << "SessionEnv: clock, timer, wait_scope and records are required";
}

SessionRunner::SessionRunner(PreparedSession prepared, SessionKeys keys, SessionEnv env)
    : SessionRunner(prepared.plan, std::move(keys), env) {
  prepared_.emplace(std::move(prepared));
}

SessionRunner::~SessionRunner() = default;

Status SessionRunner::Prepare() {
  if (!prepared_)
    prepared_.emplace(PrepareSession(plan_, *env_.clock, env_.threads, env_.expected_labels_test_delay_us,
                                     env_.expected_labels_progress));
  return prepared_->status;
}

StatusOr<SessionOutcome> SessionRunner::Run(AgentConnector& connector) {
  // RPC failures are handled where they happen; anything escaping is a challenger bug, reported as
  // a Status rather than ending a wave run's thread.
  try {
    Status prepared = Prepare();
    if (!prepared.ok()) {
      // No order exists yet; a wave's other members must not wait for this one.
      if (env_.wave != nullptr) env_.wave->Leave(plan_.node_name, env_.barrier_wait);
      return prepared;
    }
    // The order's validity starts when it is signed, after the preparation (which may take tens of
    // seconds at the strongest adversary classes), not when the plan was built.
    plan_.issued_at_unix_us = env_.clock->UnixMicros();
    plan_.expires_at_unix_us = plan_.issued_at_unix_us + static_cast<int64_t>(plan_.profile.order_ttl_us);
    SessionRun session(plan_, keys_, env_, *prepared_->challenges, *prepared_->expected, prepared_->prepare_us);
    return session.Run(connector);
  } catch (const kj::Exception& e) {
    return InternalError(std::string("session runner: ") + e.getDescription().cStr());
  } catch (const std::exception& e) {
    return InternalError(std::string("session runner: ") + e.what());
  }
}

SessionEnv SessionEnvOn(kj::AsyncIoContext& io, const Clock& clock, RecordSink& records, int threads,
                        WaveSync* wave) {
  SessionEnv env;
  env.clock = &clock;
  env.timer = &io.provider->getTimer();
  env.wait_scope = &io.waitScope;
  env.records = &records;
  env.wave = wave;
  env.threads = threads;
  return env;
}

}  // namespace wipeproof
