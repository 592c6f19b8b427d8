#include "challenger/session/compute_statement.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>

#include "kernels/exclusive_chains.h"
#include "kernels/label_spec.h"

namespace wipeproof {

namespace {

const ExclusiveChains& ChainsFor(uint32_t m) {
  static std::mutex mu;
  static std::map<uint32_t, std::unique_ptr<ExclusiveChains>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[m];
  if (!slot) slot = std::make_unique<ExclusiveChains>(ComputeExclusiveChains(m));
  return *slot;
}

std::string Seconds(uint64_t us) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.6g s", static_cast<double>(us) / 1e6);
  return buf;
}

std::string Number(double x) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.6g", x);
  return buf;
}

constexpr uint64_t kLabel = kLabelBytes;  // bytes per label (label_spec.h)

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return p > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(p);
}

}  // namespace

ComputeStatement ComputeComputeStatement(const ComputeStatementInputs& in) {
  const SessionPlan& plan = *in.plan;
  ComputeStatement out;
  const std::string none = "no compute statement: ";
  out.rate_compressions_per_s = plan.compute.compressions_per_s;
  out.interval_us = in.proof_rounds_end_after_order_us;
  if (!in.pass) {
    out.statement = none + "the session failed";
    return out;
  }
  if (!in.bound_stated) {
    out.statement = none + "it rests on the bound, and none is stated (" + in.no_bound_statement + ")";
    return out;
  }
  const uint32_t m = plan.profile.chunk_labels;
  uint64_t planned_labels = 0, reserves = 0, chunks = 0;
  for (const PlannedDevice& d : plan.devices) {
    planned_labels += d.label_count;
    reserves += d.capacity_bytes - std::min(d.capacity_bytes, d.planned_bytes());
    chunks += CeilDiv(d.label_count, m) + 1;  // a range may start and end inside a chunk
  }
  const uint64_t missing_bytes = in.bound_total_bytes - std::min(in.bound_total_bytes, reserves);
  out.held_labels = planned_labels - std::min(planned_labels, CeilDiv(missing_bytes, kLabel));
  if (out.held_labels == 0) {
    out.statement = none + "the bound leaves no planned label held";
    return out;
  }
  if (plan.compute.compressions_per_s <= 0) {
    out.statement = none + (plan.compute.problem.empty() ? std::string("the node's label rate is not declared")
                                                         : plan.compute.problem);
    return out;
  }
  std::string ingress_words;
  if (plan.reach.network_isolated) {
    ingress_words = "the node declared network-isolated";
  } else if (plan.reach.ingress_bytes_per_s > 0) {
    // Bytes that could come in over the interval, rounded up, as labels, rounded up.
    const unsigned __int128 scaled = static_cast<unsigned __int128>(plan.reach.ingress_bytes_per_s) * out.interval_us;
    const unsigned __int128 bytes = scaled / 1'000'000 + (scaled % 1'000'000 != 0);
    const unsigned __int128 labels = bytes / kLabel + (bytes % kLabel != 0);
    out.ingress_labels = labels > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(labels);
    ingress_words = "less " + std::to_string(out.ingress_labels) + " labels its declared ingress of " +
                    std::to_string(plan.reach.ingress_bytes_per_s) + " bytes/s could have brought in";
  } else {
    out.statement = none + "the inventory declares neither network isolation nor an ingress bandwidth for node " +
                    plan.node_name + ": labels computed elsewhere could have come in";
    return out;
  }
  const uint64_t computed = out.held_labels - std::min(out.held_labels, out.ingress_labels);
  if (computed == 0) {
    out.statement = none + "the declared ingress could have brought in every held label";
    return out;
  }
  const uint64_t nodes = LeastNodesForOutputs(ChainsFor(m), chunks, computed);
  out.work_compressions = SaturatingMul(nodes, static_cast<uint64_t>(SequentialCompressionsPerNode(plan.profile.format)));
  const double seconds = static_cast<double>(out.work_compressions) / out.rate_compressions_per_s;
  out.min_compute_us = seconds * 1e6 >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(std::floor(seconds * 1e6));
  if (out.interval_us == 0) {
    out.statement = none + "no proof round was answered";
    return out;
  }
  out.stated = true;
  const double share = static_cast<double>(out.min_compute_us) / static_cast<double>(out.interval_us);
  char confidence[32];
  std::snprintf(confidence, sizeof(confidence), "%.6g%%", plan.profile.confidence * 100.0);
  char percent[32];
  std::snprintf(percent, sizeof(percent), "%.4g%%", share * 100.0);
  out.statement = std::string("at ") + confidence + " confidence node " + plan.node_name + "'s fill required at least " +
                  std::to_string(out.work_compressions) + " BLAKE3 compressions (" + std::to_string(computed) +
                  " labels computed on the node: " + std::to_string(out.held_labels) + " of its " +
                  std::to_string(planned_labels) + " planned labels held by the bound, " + ingress_words +
                  "; each chunk's cheapest exclusive chains, m = " + std::to_string(m) + "): at least " +
                  Seconds(out.min_compute_us) + " of the whole node's compute at its fastest declared rate of " +
                  Number(out.rate_compressions_per_s) + " compressions/s, " + percent + " of the " +
                  Seconds(out.interval_us) + " from its order to its last proof round's answer";
  return out;
}

}  // namespace wipeproof
