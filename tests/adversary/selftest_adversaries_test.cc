// Every selftest scenario (challenger/selftest/selftest_runner.h) against the real SessionRunner,
// with a small run count: the honest agent passes every run; each adversary ends only in pass or
// its expected failure reason, with the per-run checks holding and the expected detection pattern.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "challenger/selftest/selftest_runner.h"
#include "proto/crypto.h"

namespace wipeproof::selftest {
namespace {

constexpr uint64_t kRuns = 24;

// Each test runs only its own scenarios (ctest runs every test in its own process).
class SelftestAdversariesTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(proto::InitSodium().ok()); }

  void Run(std::vector<std::string> only) {
    SelftestOptions options;
    options.runs = kRuns;
    options.seed = 7;
    // The doc's acceptance is at 99%; here 1 - 1e-6, so a sampled scenario fails by chance with
    // probability < 1e-7 (its true rate is the exact one, above the theoretical).
    options.confidence = 0.999999;
    options.only = std::move(only);
    auto result = RunSelftest(options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    result_ = *std::move(result);
    EXPECT_TRUE(result_.all_match);
  }

  const ScenarioResult& Get(const std::string& id) {
    for (const ScenarioResult& r : result_.scenarios) {
      if (r.spec.id == id) return r;
    }
    ADD_FAILURE() << "no scenario " << id;
    static ScenarioResult none;
    return none;
  }
  // All runs ended in `reason` ("pass" or a FailureReason name).
  void ExpectAll(const std::string& id, const std::string& reason) {
    const ScenarioResult& r = Get(id);
    EXPECT_EQ(r.outcomes, (std::map<std::string, uint64_t>{{reason, kRuns}})) << id << ": " << r.example_failure;
    EXPECT_EQ(r.check_failures, 0u) << id << ": " << (r.check_examples.empty() ? "" : r.check_examples[0]);
    EXPECT_TRUE(r.matches) << id << ": " << r.verdict_text;
  }
  // Runs ended in pass or `reason` only, with `reason` seen (the rate is strictly between 0 and 1).
  void ExpectSampled(const std::string& id, const std::string& reason) {
    const ScenarioResult& r = Get(id);
    EXPECT_EQ(r.runs, kRuns);
    EXPECT_EQ(r.unexpected, 0u) << id << ": " << r.example_failure;
    EXPECT_EQ(r.check_failures, 0u) << id;
    ASSERT_EQ(r.outcomes.count(reason), 1u) << id << " never caught";
    EXPECT_EQ(r.outcomes.at(reason) + (r.outcomes.count("pass") ? r.outcomes.at("pass") : 0), kRuns);
    EXPECT_GT(r.spec.theory, 0.3);
    EXPECT_LT(r.spec.theory, 0.95);
    EXPECT_GE(r.spec.exact, r.spec.theory);
    EXPECT_TRUE(r.matches) << id << ": " << r.verdict_text;
  }

  SelftestResult result_;
};

TEST(SelftestScenariosTest, CatalogueCoversAdversariesOneToSevenAndNineToEleven) {
  const auto all = adversary::SelftestScenarios(adversary::DefaultSelftestSetup());
  EXPECT_EQ(all.size(), 37u);
  std::map<int, int> per_adversary;
  for (const auto& s : all) ++per_adversary[s.adversary];
  EXPECT_EQ(per_adversary, (std::map<int, int>{{0, 1},
                                               {1, 6},
                                               {2, 2},
                                               {3, 4},
                                               {4, 2},
                                               {5, 2},
                                               {6, 3},
                                               {7, 8},
                                               {9, 3},
                                               {10, 3},
                                               {11, 3}}));
}

// threat-model: T-OCCUPANCY-BORROW
TEST_F(SelftestAdversariesTest, BorrowerIsCaughtInTheOccupancyRoundsAtItsRate) {
  Run({"11"});
  ExpectAll("11a-honest-occupancy", "pass");
  ExpectSampled("11b-borrow-after-first-occupancy-round", "wrongLabel");
  // 8 of 32 chunks borrowed after the first of 6 occupancy rounds, 2 labels in each of the other 5.
  EXPECT_NEAR(Get("11b-borrow-after-first-occupancy-round").spec.exact, 1 - std::pow(24.0 * 23 / (32 * 31), 5), 1e-12);
  EXPECT_NEAR(Get("11b-borrow-after-first-occupancy-round").spec.theory, 1 - std::pow(24.0 / 32, 10), 1e-12);
  // Relabelled (really) before every other round: short in 3 of the 5 rounds after the first, and the
  // relabelled labels answer right (a wrong relabel would be caught in every run).
  ExpectSampled("11c-borrow-and-relabel-between-rounds", "wrongLabel");
  EXPECT_NEAR(Get("11c-borrow-and-relabel-between-rounds").spec.exact, 1 - std::pow(24.0 * 23 / (32 * 31), 3), 1e-12);
}

// threat-model: T-HONEST
TEST_F(SelftestAdversariesTest, HonestAgentPassesEveryRunWithABound) {
  Run({"0"});
  ExpectAll("0-honest", "pass");
  EXPECT_EQ(Get("0-honest").bounds_stated, kRuns);
}

// threat-model: T-HIDDEN
TEST_F(SelftestAdversariesTest, HiddenFractionIsCaughtByTheMatchingCheck) {
  Run({"1"});
  ExpectSampled("1a-recompute-contiguous", "lateRound");
  ExpectSampled("1a-recompute-random", "lateRound");
  ExpectSampled("1b-random-bytes-contiguous", "wrongLabel");
  ExpectSampled("1b-random-bytes-random", "wrongLabel");
  ExpectSampled("1c-earlier-session-contiguous", "wrongLabel");
  ExpectSampled("1c-earlier-session-random", "wrongLabel");
  // 2 of 32 chunks, q = 4, R = 3: 1-(30/32)^12.
  EXPECT_NEAR(Get("1b-random-bytes-contiguous").spec.theory, 1 - std::pow(30.0 / 32, 12), 1e-12);
  // (28*27)/(32*31) per round.
  // Exact: the proof rounds (q = 4 of 32 chunks, 2 hidden, R = 3) and up to 16 holding batches of max(1, q/8) = 1.
  EXPECT_NEAR(Get("1b-random-bytes-contiguous").spec.exact,
              1 - std::pow(28.0 * 27 / (32 * 31), 3) * std::pow(30.0 / 32, 16), 1e-12);
}

// threat-model: T-HIDDEN
TEST_F(SelftestAdversariesTest, RecomputeIsChargedDepthTimesTMin) {
  Run({"1a-recompute-contiguous"});
  const SelftestSetup& s = result_.setup;
  EXPECT_EQ(s.graph_depth, 384u);                       // 1.5 * m for m = 256
  EXPECT_EQ(s.timing.recompute_chunk_ps, 15'360'000u);  // 384 * 1 * 40 ns
  const ScenarioResult& r = Get("1a-recompute-contiguous");
  EXPECT_GT(r.seen.hidden_chunks_challenged, 0u);
  EXPECT_EQ(r.seen.max_round_recompute_us, 16u);  // 15.36 us rounded up, all chunks in one batch
  EXPECT_GT(r.seen.max_round_recompute_us + s.timing.round_us, s.round_deadline_us);
}

// threat-model: T-RELAY
TEST_F(SelftestAdversariesTest, RelayIsCaughtExactlyWhenPastTheDeadline) {
  Run({"2"});
  ExpectAll("2-relay-under-deadline", "pass");
  ExpectAll("2-relay-over-deadline", "lateRound");
  EXPECT_EQ(Get("2-relay-under-deadline").spec.relay_link_us + 2, 6);
  EXPECT_EQ(Get("2-relay-over-deadline").spec.relay_link_us + 2, 8);
}

// threat-model: T-RELOCATE-HOST
TEST_F(SelftestAdversariesTest, RelocationPassesOnlyOutsideThePlan) {
  Run({"3"});
  ExpectAll("3a-relocate-host-not-planned", "pass");  // check: host-memory-in-plan not held
  EXPECT_EQ(Get("3a-relocate-host-not-planned").seen.relocated_chunks, 8 * kRuns);
  EXPECT_EQ(Get("3a-relocate-host-not-planned").host_not_planned, kRuns);  // in every signed verdict
  EXPECT_EQ(Get("3b-relocate-host-planned").host_not_planned, 0u);
  ExpectSampled("3b-relocate-host-planned", "wrongLabel");
  EXPECT_EQ(Get("3b-relocate-host-planned").seen.overwritten_chunks, 2 * kRuns);
}

// 3c: labels of GPU 0 moved into GPU 1's allowed reserve. Every label answers and the bound is
// stated; the per-run check holds (the node statement covers every device's unlabeled bytes, the
// per-device figures are labelled diagnostics), while GPU 0's own diagnostic understates what it
// kept: why no bound per device is stated.
// threat-model: T-RELOCATE-RESERVE
TEST_F(SelftestAdversariesTest, RelocationIntoAnotherReserveIsCoveredByTheNodeStatement) {
  Run({"3c-relocate-into-reserve"});
  ExpectAll("3c-relocate-into-reserve", "pass");
  const ScenarioResult& r = Get("3c-relocate-into-reserve");
  EXPECT_EQ(r.bounds_stated, kRuns);
  EXPECT_EQ(r.seen.relocated_chunks, 16 * kRuns);
  const uint64_t chunk = 256 * 32, reserve = 16 * chunk;
  ASSERT_EQ(r.seen.unlabeled_bytes.size(), 2u);
  EXPECT_EQ(r.seen.unlabeled_bytes[0], (reserve + 16 * chunk) * kRuns);  // its reserve and the moved chunks
  EXPECT_EQ(r.seen.unlabeled_bytes[1], 0u);                              // its reserve holds GPU 0's labels
  EXPECT_GT(r.device_figure_understated, kRuns / 2);
}

// 9: a profile that is not the authority's: the honest agent passes every run, and no verdict
// states a bound (each says the profile is not signed by the authority).
// threat-model: T-PROFILE-UNSIGNED
TEST_F(SelftestAdversariesTest, UnsignedOrTamperedProfilesStateNoBound) {
  Run({"9"});
  ExpectAll("9a-unsigned-profile", "pass");
  ExpectAll("9b-tampered-profile", "pass");
  EXPECT_EQ(Get("9a-unsigned-profile").bounds_stated, 0u);
  EXPECT_EQ(Get("9b-tampered-profile").bounds_stated, 0u);
}

// 9c: the challenger's host orders under a class the authority did not delegate (the signed
// profile's t_min raised, still naming the signed document): the honest agent refuses every order,
// naming the delegation.
// threat-model: T-DELEGATION
TEST_F(SelftestAdversariesTest, OrdersOutsideTheDelegationAreRefused) {
  Run({"9c-undelegated-class"});
  ExpectAll("9c-undelegated-class", "orderRefused");
  EXPECT_EQ(Get("9c-undelegated-class").bounds_stated, 0u);
  EXPECT_NE(Get("9c-undelegated-class").example_failure.find("is not one the delegation 'selftest challenger'"),
            std::string::npos)
      << Get("9c-undelegated-class").example_failure;
}

// threat-model: T-UNDER-FILL
TEST_F(SelftestAdversariesTest, UnderFillFailsOnTheAllowedReserve) {
  Run({"4"});
  ExpectAll("4a-held-by-others", "shortCapacity");
  ExpectAll("4b-inflated-reserve", "shortCapacity");
}

// threat-model: T-DEDUP
TEST_F(SelftestAdversariesTest, DedupAcrossDevicesIsCaught) {
  Run({"5"});
  ExpectAll("5a-dedup-whole-device", "wrongLabel");
  ExpectSampled("5b-dedup-partial", "wrongLabel");
}

// threat-model: T-WRONG-KEY
TEST_F(SelftestAdversariesTest, WrongKeyMaterialIsCaught) {
  Run({"6"});
  ExpectAll("6a-wrong-seed", "wrongLabel");
  ExpectAll("6b-wrong-format", "wrongLabel");
  ExpectAll("6c-wrong-m", "wrongLabel");
}

// threat-model: T-PROTOCOL-CHEAT
TEST_F(SelftestAdversariesTest, ProtocolCheatsAreCaught) {
  Run({"7"});
  ExpectAll("7a-replayed-answer", "protocolError");
  ExpectAll("7b-other-round-indices", "wrongLabel");
  ExpectAll("7c-reordered-answer", "wrongLabel");
  ExpectAll("7d-reused-transcript-signature", "badSignature");
  ExpectAll("7e-192-no-partial-chunk", "pass");
  EXPECT_EQ(Get("7e-192-no-partial-chunk").seen.partial_chunk_ranges, 0u);
  // Early fill report and disconnect-on-hidden: caught at the sampling rate, never by anything else.
  ExpectSampled("7f-early-fill-report", "wrongLabel");
  ExpectSampled("7g-disconnect-on-hidden", "disconnected");
}

// 7h: a node refusing every order as busy is a failed wipe every run (nodeBusy), never a pass.
// threat-model: T-BUSY-FOREVER
TEST_F(SelftestAdversariesTest, AnAlwaysBusyNodeFailsEveryWipe) {
  Run({"7h-always-busy"});
  ExpectAll("7h-always-busy", "nodeBusy");
}

// 10: a wave of two in step and the agent's TLS boundary. The honest wave passes every run with
// node-a's proof rounds after node-b's fill; the shell game (node-a drops 4 of 32 chunks while
// node-b fills) is caught at the rate of its proof rounds or above; a copied order sent by a third
// party never reaches the agent (each a per-run check: any run that breaks it fails the test).
// threat-model: T-WAVE-SHELL-GAME
TEST_F(SelftestAdversariesTest, WavesInStepAndCopiedOrders) {
  Run({"10"});
  ExpectAll("10a-honest-wave", "pass");
  ExpectSampled("10b-wave-shell-game", "wrongLabel");
  ExpectAll("10c-copied-order", "pass");
}

// The acceptance rules on synthetic counts: what makes the CLI exit 1.
TEST(JudgeScenarioTest, AcceptsOnlyExpectedOutcomesAndRates) {
  ScenarioResult r;
  r.spec.theory = 0.539;
  r.spec.exact = 0.557;
  r.spec.expected = proto::FailureReason::WRONG_LABEL;
  r.runs = 100;
  r.caught = 45;  // upper 99% bound ~0.57 >= 0.539
  JudgeScenario(&r, 0.99);
  EXPECT_TRUE(r.matches) << r.verdict_text;
  EXPECT_NEAR(r.measured, 0.45, 1e-12);
  r.caught = 40;  // upper bound ~0.52 < 0.539: significantly below the theory
  JudgeScenario(&r, 0.99);
  EXPECT_FALSE(r.matches);
  EXPECT_NE(r.verdict_text.find("< theoretical 0.5390"), std::string::npos) << r.verdict_text;
  r.caught = 70;  // lower 99% bound ~0.58 > exact 0.557: caught more often than the spec allows
  JudgeScenario(&r, 0.99);
  EXPECT_FALSE(r.matches);
  EXPECT_NE(r.verdict_text.find("> exact rate 0.5570"), std::string::npos) << r.verdict_text;
  r.caught = 66;  // lower bound ~0.53 <= 0.557, upper >= 0.539
  JudgeScenario(&r, 0.99);
  EXPECT_TRUE(r.matches) << r.verdict_text;
  r.runs = 10;  // too few runs to judge a rate, whatever was caught
  r.caught = 6;
  JudgeScenario(&r, 0.99);
  EXPECT_FALSE(r.matches);
  EXPECT_NE(r.verdict_text.find("too few runs"), std::string::npos) << r.verdict_text;
  r.runs = 100;
  r.caught = 60;
  r.unexpected = 1;  // e.g. a lateRound where only wrongLabel may happen
  JudgeScenario(&r, 0.99);
  EXPECT_FALSE(r.matches);
  r.unexpected = 0;
  r.check_failures = 1;
  r.check_examples = {"signed verdict says pass, the outcome wrongLabel"};
  JudgeScenario(&r, 0.99);
  EXPECT_FALSE(r.matches);
  r.check_failures = 0;

  r.spec.theory = 0;  // expected to pass: one catch is a mismatch
  r.caught = 1;
  JudgeScenario(&r, 0.99);
  EXPECT_FALSE(r.matches);
  r.caught = 0;
  JudgeScenario(&r, 0.99);
  EXPECT_TRUE(r.matches);

  r.spec.theory = 1;  // always caught: one pass is a mismatch
  r.caught = 99;
  JudgeScenario(&r, 0.99);
  EXPECT_FALSE(r.matches);
  r.caught = 100;
  JudgeScenario(&r, 0.99);
  EXPECT_TRUE(r.matches);
}

TEST(SelftestOptionsTest, RejectsBadOptions) {
  SelftestOptions options;
  options.runs = 0;
  EXPECT_EQ(RunSelftest(options).status().code(), StatusCode::kInvalidArgument);
  options.runs = 1;
  options.only = {"9z-nothing"};
  EXPECT_EQ(RunSelftest(options).status().code(), StatusCode::kInvalidArgument);
}

TEST(SelftestOptionsTest, OnlySelectsByIdPrefixAndNumber) {
  ASSERT_TRUE(proto::InitSodium().ok());
  SelftestOptions options;
  options.runs = 2;
  options.only = {"4", "7e"};
  auto result = RunSelftest(options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->scenarios.size(), 3u);
  EXPECT_EQ(result->scenarios[0].spec.id, "4a-held-by-others");
  EXPECT_EQ(result->scenarios[2].spec.id, "7e-192-no-partial-chunk");
  EXPECT_TRUE(result->all_match);
}

}  // namespace
}  // namespace wipeproof::selftest
