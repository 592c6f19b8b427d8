#include "prover/agent/agent_service.h"

#include <glog/logging.h>
#include <kj/async.h>

#include <string>
#include <utility>

#include "proto/rpc_status.h"
#include "proto/signing.h"

namespace wipeproof {

AgentService::AgentService(AgentCore& core, WorkerThreads& workers, ConnectionId connection)
    : core_(core), workers_(workers), connection_(connection) {}

AgentService::~AgentService() { core_.OnDisconnect(connection_); }

kj::Promise<void> AgentService::startSession(StartSessionContext context) {
  auto order = proto::DecodeEnvelope(context.getParams().getOrder());
  if (!order.ok()) {
    LOG(WARNING) << "order refused: " << order.status().ToString();
    return proto::StatusToException(order.status());
  }
  context.releaseParams();
  // Lets a challenger that gives up on the call (capnp Finish) cancel it: the report then has no
  // one to go to, and the worker ends the session when the fill returns (isWaiting() is false).
  context.allowCancellation();
  using Outcome = StatusOr<proto::SignedEnvelope>;
  auto paf = kj::newPromiseAndCrossThreadFulfiller<Outcome>();
  workers_.Start([core = &core_, connection = connection_, order = std::move(order).value(),
                  fulfiller = kj::mv(paf.fulfiller)]() mutable {
    Outcome outcome = core->StartSession(order, connection);
    if (outcome.ok() && !fulfiller->isWaiting()) {
      // Nobody will receive the report: the call was cancelled or the connection is gone (possibly
      // before the session existed, so the disconnect could not end it).
      core->OnDisconnect(connection);
    }
    fulfiller->fulfill(std::move(outcome));
  });
  return paf.promise.then([context](Outcome outcome) mutable {
    if (!outcome.ok()) kj::throwFatalException(proto::StatusToException(outcome.status()));
    proto::WriteEnvelope(*outcome, context.getResults().initReport());
  });
}

kj::Promise<void> AgentService::round(RoundContext context) {
  Status status = core_.AnswerRound(connection_, context.getParams().getRound(), context.getResults().initAnswer());
  if (!status.ok()) return proto::StatusToException(status);
  return kj::READY_NOW;
}

kj::Promise<void> AgentService::finish(FinishContext context) {
  auto transcript = core_.Finish(connection_, context.getParams().getVerdict());
  if (!transcript.ok()) return proto::StatusToException(transcript.status());
  proto::WriteEnvelope(*transcript, context.getResults().initTranscript());
  return kj::READY_NOW;
}

kj::Promise<void> AgentService::abort(AbortContext context) {
  auto params = context.getParams();
  const std::string reason(params.getReason().cStr(), params.getReason().size());
  core_.Abort(params.getSessionId(), reason.empty() ? "no reason given" : reason);
  return kj::READY_NOW;
}

kj::Promise<void> AgentService::status(StatusContext context) {
  WriteStatus(core_.GetStatus(), context.getResults().initStatus());
  return kj::READY_NOW;
}

kj::Promise<void> AgentService::describe(DescribeContext context) {
  WriteDescription(core_.Describe(), context.getResults().initDescription());
  return kj::READY_NOW;
}

}  // namespace wipeproof
