// The compute statement (challenger/session/compute_statement.h): the held labels from the bound,
// the ingress allowance, the least work of the rest from the exclusive chains, and every reason it
// is not stated; figures recomputed here from their definitions.
#include "challenger/session/compute_statement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/exclusive_chains.h"

namespace wipeproof {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kM = 64;

// Two devices: 10 chunks (capacity 100 bytes above them) and 6 chunks (exactly).
SessionPlan TwoDevicePlan() {
  SessionPlan plan;
  plan.node_name = "node-x";
  plan.profile.chunk_labels = kM;
  plan.profile.confidence = 0.99;
  PlannedDevice a;
  a.selector = "GPU-a";
  a.label_count = 10 * kM;
  a.capacity_bytes = 10 * kM * 32 + 100;
  PlannedDevice b;
  b.selector = "host";
  b.label_count = 6 * kM;
  b.first_label = 10 * kM;
  b.capacity_bytes = 6 * kM * 32;
  plan.devices = {a, b};
  plan.compute.compressions_per_s = 1e6;
  plan.reach.network_isolated = true;
  return plan;
}

ComputeStatementInputs Passing(const SessionPlan& plan, uint64_t missing_planned_bytes) {
  ComputeStatementInputs in;
  in.plan = &plan;
  in.pass = true;
  in.bound_stated = true;
  in.bound_total_bytes = 100 + missing_planned_bytes;  // the reserve counted in full
  in.proof_rounds_end_after_order_us = 2'000'000;
  return in;
}

// Chunks the statement counts: each device's chunks plus one (a range may straddle).
constexpr uint64_t kChunks = (10 + 1) + (6 + 1);

TEST(ComputeStatement, EveryHeldLabelOfAnIsolatedNodeCostsItsCheapestChains) {
  const SessionPlan plan = TwoDevicePlan();
  const ExclusiveChains chains = ComputeExclusiveChains(kM);
  const ComputeStatement all = ComputeComputeStatement(Passing(plan, 0));
  ASSERT_TRUE(all.stated) << all.statement;
  EXPECT_EQ(all.held_labels, 16u * kM);
  EXPECT_EQ(all.ingress_labels, 0u);
  EXPECT_EQ(all.work_compressions, LeastNodesForOutputs(chains, kChunks, 16 * kM));
  // Never more than the chains of 16 whole chunks: the statement is below what an honest fill did.
  EXPECT_LE(all.work_compressions, 16 * chains.prefix[kM]);
  EXPECT_EQ(all.min_compute_us, static_cast<uint64_t>(std::floor(all.work_compressions / 1e6 * 1e6)));
  EXPECT_EQ(all.interval_us, 2'000'000u);
  EXPECT_THAT(all.statement, HasSubstr("at 99% confidence node node-x's fill required at least " +
                                       std::to_string(all.work_compressions) + " BLAKE3 compressions"));
  EXPECT_THAT(all.statement, HasSubstr("the node declared network-isolated"));
  EXPECT_THAT(all.statement, HasSubstr("of the 2 s from its order to its last proof round's answer"));

  // 100 bytes short beyond the reserve: 4 labels (rounded up) fewer held.
  const ComputeStatement short_by_100 = ComputeComputeStatement(Passing(plan, 100));
  EXPECT_EQ(short_by_100.held_labels, 16u * kM - 4);
  EXPECT_EQ(short_by_100.work_compressions, LeastNodesForOutputs(chains, kChunks, 16 * kM - 4));
  EXPECT_LT(short_by_100.work_compressions, all.work_compressions);

  // The 192 format: two compressions per node.
  SessionPlan n192 = plan;
  n192.profile.format = LabelFormat::k192;
  EXPECT_EQ(ComputeComputeStatement(Passing(n192, 0)).work_compressions, 2 * all.work_compressions);
}

TEST(ComputeStatement, ADeclaredIngressIsSubtractedRoundedUp) {
  SessionPlan plan = TwoDevicePlan();
  plan.reach.network_isolated = false;
  plan.reach.ingress_bytes_per_s = 1000;  // 2 s: 2000 bytes, 62.5 -> 63 labels
  const ComputeStatement s = ComputeComputeStatement(Passing(plan, 0));
  ASSERT_TRUE(s.stated) << s.statement;
  EXPECT_EQ(s.ingress_labels, 63u);
  EXPECT_EQ(s.work_compressions, LeastNodesForOutputs(ComputeExclusiveChains(kM), kChunks, 16 * kM - 63));
  EXPECT_THAT(s.statement, HasSubstr("less 63 labels its declared ingress of 1000 bytes/s could have brought in"));
  // An ingress that could bring in everything states nothing.
  plan.reach.ingress_bytes_per_s = uint64_t{1} << 40;
  const ComputeStatement all_in = ComputeComputeStatement(Passing(plan, 0));
  EXPECT_FALSE(all_in.stated);
  EXPECT_EQ(all_in.statement, "no compute statement: the declared ingress could have brought in every held label");
}

TEST(ComputeStatement, SaysWhyItStatesNothing) {
  const SessionPlan plan = TwoDevicePlan();
  ComputeStatementInputs failed = Passing(plan, 0);
  failed.pass = false;
  EXPECT_EQ(ComputeComputeStatement(failed).statement, "no compute statement: the session failed");
  ComputeStatementInputs no_bound = Passing(plan, 0);
  no_bound.bound_stated = false;
  no_bound.no_bound_statement = "no bound: parameters not calibrated";
  EXPECT_EQ(ComputeComputeStatement(no_bound).statement,
            "no compute statement: it rests on the bound, and none is stated (no bound: parameters not calibrated)");
  SessionPlan unrated = plan;
  unrated.compute = {0, "the inventory's label_rates has no entry for model 'x' (device GPU-a)"};
  EXPECT_EQ(ComputeComputeStatement(Passing(unrated, 0)).statement,
            "no compute statement: the inventory's label_rates has no entry for model 'x' (device GPU-a)");
  SessionPlan open = plan;
  open.reach.network_isolated = false;
  const ComputeStatement s = ComputeComputeStatement(Passing(open, 0));
  EXPECT_FALSE(s.stated);
  EXPECT_THAT(s.statement, HasSubstr("declares neither network isolation nor an ingress bandwidth for node node-x"));
  ComputeStatementInputs no_rounds = Passing(plan, 0);
  no_rounds.proof_rounds_end_after_order_us = 0;
  EXPECT_FALSE(ComputeComputeStatement(no_rounds).stated);
  // A bound that leaves nothing held.
  EXPECT_EQ(ComputeComputeStatement(Passing(plan, uint64_t{1} << 40)).statement,
            "no compute statement: the bound leaves no planned label held");
}

}  // namespace
}  // namespace wipeproof
