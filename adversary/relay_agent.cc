#include "adversary/relay_agent.h"

namespace wipeproof::adversary {

RelayAgent::RelayAgent(proto::ProverAgent::Client helper, RelayDelays delays, FakeClock* clock)
    : helper_(kj::mv(helper)), delays_(delays), clock_(clock) {}

RelayAgent::RelayAgent(proto::ProverAgent::Client helper, RelayDelays delays, kj::Timer* timer)
    : helper_(kj::mv(helper)), delays_(delays), timer_(timer) {}

kj::Promise<void> RelayAgent::Delay(int64_t micros) {
  if (micros <= 0) return kj::READY_NOW;
  if (clock_ != nullptr) {
    clock_->Advance(micros);
    return kj::READY_NOW;
  }
  return timer_->afterDelay(micros * kj::MICROSECONDS);
}

kj::Promise<void> RelayAgent::startSession(StartSessionContext context) {
  auto request = helper_.startSessionRequest();
  request.setOrder(context.getParams().getOrder());
  return request.send().then([this, context](auto&& response) mutable {
    context.getResults().setReport(response.getReport());
    return Delay(delays_.fill_us);
  });
}

kj::Promise<void> RelayAgent::round(RoundContext context) {
  auto request = helper_.roundRequest();
  request.setRound(context.getParams().getRound());
  const bool first = context.getParams().getRound().getRoundIndex() == 0;
  return request.send().then([this, context, first](auto&& response) mutable {
    context.getResults().setAnswer(response.getAnswer());  // the round trip to the helper and back
    return Delay(delays_.round_us + (first ? delays_.first_round_extra_us : 0));
  });
}

kj::Promise<void> RelayAgent::finish(FinishContext context) {
  auto request = helper_.finishRequest();
  request.setVerdict(context.getParams().getVerdict());
  return request.send().then(
      [context](auto&& response) mutable { context.getResults().setTranscript(response.getTranscript()); });
}

kj::Promise<void> RelayAgent::abort(AbortContext context) {
  auto request = helper_.abortRequest();
  request.setSessionId(context.getParams().getSessionId());
  request.setReason(context.getParams().getReason());
  return request.send().ignoreResult();
}

kj::Promise<void> RelayAgent::status(StatusContext context) {
  return helper_.statusRequest().send().then(
      [context](auto&& response) mutable { context.getResults().setStatus(response.getStatus()); });
}

}  // namespace wipeproof::adversary
