#include "prover/agent/agent_service.h"

#include <glog/logging.h>
#include <kj/async.h>

#include <string>
#include <system_error>
#include <utility>

#include "common/terminal_text.h"
#include "proto/rpc_status.h"
#include "proto/signing.h"

namespace wipeproof {

kj::Own<void> CallActivity::Begin(std::shared_ptr<CallActivity> activity) {
  activity->Touch();
  ++activity->in_flight_;
  return kj::heap(kj::defer([activity = std::move(activity)]() {
    --activity->in_flight_;
    activity->Touch();
  }));
}

AgentService::AgentService(AgentCore& core, WorkerThreads& workers, ConnectionId connection, PeerKeyId authenticated_as,
                           std::shared_ptr<CallActivity> activity)
    : core_(core),
      workers_(workers),
      connection_(connection),
      authenticated_as_(authenticated_as),
      activity_(std::move(activity)) {}

AgentService::~AgentService() { core_.OnDisconnect(connection_); }

kj::Promise<void> AgentService::startSession(StartSessionContext context) {
  auto call = BeginCall();
  auto order = proto::DecodeEnvelope(context.getParams().getOrder());
  if (!order.ok()) {
    LOG(WARNING) << "order refused: " << TerminalSafe(order.status().ToString());
    return proto::StatusToException(order.status());
  }
  context.releaseParams();
  // Checks on the event loop: a refused order is answered here, without a thread.
  auto admitted = core_.AdmitSession(*order, connection_, authenticated_as_);
  if (!admitted.ok()) return proto::StatusToException(admitted.status());

  // Lets a challenger that gives up on the call (capnp Finish) cancel it: the report then has no
  // one to go to, and the worker ends the session when the fill returns (isWaiting() is false).
  context.allowCancellation();
  using Outcome = StatusOr<proto::SignedEnvelope>;
  auto paf = kj::newPromiseAndCrossThreadFulfiller<Outcome>();
  try {
    workers_.Start([core = &core_, connection = connection_, admitted = std::move(admitted).value(),
                    fulfiller = kj::mv(paf.fulfiller)]() mutable {
      Outcome outcome = core->FillSession(std::move(admitted));
      if (outcome.ok() && !fulfiller->isWaiting()) {
        // Nobody will receive the report: the call was cancelled or the connection is gone (possibly
        // before the session existed, so the disconnect could not end it).
        core->OnDisconnect(connection);
      }
      fulfiller->fulfill(std::move(outcome));
    });
  } catch (const std::system_error& e) {
    // No thread: the task (and the admission in it) is gone, which ended the session.
    LOG(ERROR) << "cannot start a fill thread: " << e.what();
    return proto::StatusToException(UnavailableError(std::string("cannot start a fill thread: ") + e.what()));
  }
  return paf.promise
      .then([context](Outcome outcome) mutable {
        if (!outcome.ok()) kj::throwFatalException(proto::StatusToException(outcome.status()));
        proto::WriteEnvelope(*outcome, context.getResults().initReport());
      })
      .attach(kj::mv(call));
}

kj::Promise<void> AgentService::round(RoundContext context) {
  auto call = BeginCall();
  Status status = core_.AnswerRound(connection_, context.getParams().getRound(), context.getResults().initAnswer());
  if (!status.ok()) return proto::StatusToException(status);
  // The transcript hash waits until the event loop has nothing else to do: by then the answer has
  // been written to the connection (agent_core.h AnswerRound). The core outlives every connection.
  kj::evalLast([&core = core_] { core.HashAnsweredRound(); }).detach([](kj::Exception&& e) {
    LOG(ERROR) << "hashing an answered round: " << e.getDescription().cStr();
  });
  return kj::READY_NOW;
}

kj::Promise<void> AgentService::finish(FinishContext context) {
  auto call = BeginCall();
  auto transcript = core_.Finish(connection_, context.getParams().getVerdict());
  if (!transcript.ok()) return proto::StatusToException(transcript.status());
  proto::WriteEnvelope(*transcript, context.getResults().initTranscript());
  return kj::READY_NOW;
}

kj::Promise<void> AgentService::abort(AbortContext context) {
  auto call = BeginCall();
  auto params = context.getParams();
  const std::string reason(params.getReason().cStr(), params.getReason().size());
  Status status = core_.Abort(connection_, params.getSessionId(), reason.empty() ? "no reason given" : reason);
  if (!status.ok()) return proto::StatusToException(status);
  return kj::READY_NOW;
}

kj::Promise<void> AgentService::status(StatusContext context) {
  auto call = BeginCall();
  WriteStatus(core_.GetStatus(), context.getResults().initStatus());
  return kj::READY_NOW;
}

kj::Promise<void> AgentService::deviceFilled(DeviceFilledContext context) {
  auto call = BeginCall();
  auto params = context.getParams();
  using Outcome = StatusOr<proto::SignedEnvelope>;
  // The notice is signed on the device's fill thread: it reaches this event loop through a
  // cross-thread fulfiller (std::function needs a copyable callable, hence the shared_ptr).
  auto paf = kj::newPromiseAndCrossThreadFulfiller<Outcome>();
  auto fulfiller = std::make_shared<kj::Own<kj::CrossThreadPromiseFulfiller<Outcome>>>(kj::mv(paf.fulfiller));
  core_.AwaitDeviceFilled(connection_, params.getSessionId(), params.getDeviceIndex(),
                          [fulfiller](Outcome outcome) { (*fulfiller)->fulfill(std::move(outcome)); });
  context.allowCancellation();
  return paf.promise
      .then([context](Outcome outcome) mutable {
        if (!outcome.ok()) kj::throwFatalException(proto::StatusToException(outcome.status()));
        proto::WriteEnvelope(*outcome, context.getResults().initNotice());
      })
      .attach(kj::mv(call));
}

kj::Promise<void> AgentService::openRoundChannel(OpenRoundChannelContext context) {
  auto call = BeginCall();
  auto token = core_.OpenRoundChannel(connection_, context.getParams().getSessionId());
  if (!token.ok()) return proto::StatusToException(token.status());
  context.getResults().setToken(proto::ByteView(token->data(), token->size()));
  return kj::READY_NOW;
}

kj::Promise<void> AgentService::describe(DescribeContext context) {
  auto call = BeginCall();
  WriteDescription(core_.Describe(), context.getResults().initDescription());
  return kj::READY_NOW;
}

}  // namespace wipeproof
