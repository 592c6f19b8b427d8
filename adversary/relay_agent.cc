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
  return Until(std::chrono::steady_clock::now() + std::chrono::microseconds(micros));
}

kj::Promise<void> RelayAgent::Until(std::chrono::steady_clock::time_point target) {
  // The kj timer counts from the event loop's last look at the clock, which lags on a busy machine:
  // wait again for whatever real time is still left, so a delay is never shorter than asked.
  const auto left = std::chrono::duration_cast<std::chrono::microseconds>(target - std::chrono::steady_clock::now());
  if (left.count() <= 0) return kj::READY_NOW;
  return timer_->afterDelay(left.count() * kj::MICROSECONDS).then([this, target] { return Until(target); });
}

kj::Promise<void> RelayAgent::FillDelay() {
  if (clock_ != nullptr) {
    if (fill_charged_) return kj::READY_NOW;
    fill_charged_ = true;
  }
  return Delay(delays_.fill_us);
}

kj::Promise<void> RelayAgent::startSession(StartSessionContext context) {
  fill_charged_ = false;
  auto request = helper_.startSessionRequest();
  request.setOrder(context.getParams().getOrder());
  return request.send().then([this, context](auto&& response) mutable {
    context.getResults().setReport(response.getReport());
    return FillDelay();
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

kj::Promise<void> RelayAgent::deviceFilled(DeviceFilledContext context) {
  auto request = helper_.deviceFilledRequest();
  request.setSessionId(context.getParams().getSessionId());
  request.setDeviceIndex(context.getParams().getDeviceIndex());
  // A device is filled no sooner than the whole fill is late: its notice waits as long as the report.
  const bool extra = context.getParams().getDeviceIndex() == delays_.notice_extra_device;
  return request.send().then([this, context, extra](auto&& response) mutable {
    context.getResults().setNotice(response.getNotice());
    return FillDelay().then([this, extra]() { return extra ? Delay(delays_.notice_extra_us) : kj::READY_NOW; });
  });
}

kj::Promise<void> RelayAgent::status(StatusContext context) {
  return helper_.statusRequest().send().then(
      [context](auto&& response) mutable { context.getResults().setStatus(response.getStatus()); });
}

}  // namespace wipeproof::adversary
