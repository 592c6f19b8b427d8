// `wipeproof-challenger selftest --adversaries`: runs the honest agent and adversaries 1-7 and 9-11 (the
// scenarios of adversary/scenarios.h, each a deviation of adversary/cheating_agent.h) through the
// real SessionRunner many times each, counts outcomes (pass or the verdict's FailureReason: the
// check that caught it), and compares the measured detection rate with the theoretical one
// (docs/results/security-results.md is generated from the result).
//
// Setup, scenarios and the theory of their rates: adversary/scenarios.h.
//
// Acceptance per scenario (ScenarioResult::matches): every run passed or failed with the expected
// reason (nothing else); every per-run check held (the signed verdict verifies and says what the
// outcome says; scenario checks such as "host memory not in plan" for 3a); and
//   rate 0: no run caught;   rate 1: every run caught;
//   otherwise: at least kMinRunsToJudgeARate runs; the one-sided upper Clopper-Pearson bound at
//   `confidence` (99%) of caught/runs is at least the theoretical rate (the measured rate is not
//   significantly below it), and the one-sided lower bound is at most the exact rate (not
//   significantly above it: an adversary that hides more than its spec says is a mismatch too).
// The honest agent must pass every run.
//
// Thread-safety: RunSelftest sets up its own kj event loop on the calling thread (which must not
// have one) and runs sessions one after another.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "adversary/scenarios.h"
#include "challenger/parameters/parameter_profile.h"
#include "common/status.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::selftest {

using adversary::AgentLog;
using adversary::NodeKind;
using adversary::ProfileDocument;
using adversary::ScenarioCheck;
using adversary::ScenarioSpec;
using adversary::SelftestSetup;

struct SelftestOptions {
  uint64_t runs = 200;            // per scenario
  uint64_t seed = 1;              // adversaries' own choices (which chunks to hide, odd capacities)
  double confidence = 0.99;       // Clopper-Pearson, one-sided
  std::vector<std::string> only;  // scenario ids or adversary numbers ("1", "7d-..."); empty = all
  int threads = 1;                // expected-label threads per session
  // (scenario index, scenario count, id, runs done, runs): after every run.
  std::function<void(size_t, size_t, const std::string&, uint64_t, uint64_t)> progress;
};

struct ScenarioResult {
  ScenarioSpec spec;
  uint64_t runs = 0;
  std::map<std::string, uint64_t> outcomes;  // "pass" or a FailureReason name -> runs
  uint64_t caught = 0;                       // failed with the expected reason
  uint64_t unexpected = 0;                   // neither pass nor the expected reason
  uint64_t check_failures = 0;               // per-run checks that did not hold
  std::vector<std::string> check_examples;   // the first few, described
  uint64_t bounds_stated = 0;                // passing verdicts that state a bound
  uint64_t host_not_planned = 0;             // verdicts listing host-memory-in-plan as not held
  std::string host_assumption_detail;        // its detail text, from the first such verdict
  uint64_t device_figure_understated = 0;    // 3c: runs whose per-device diagnostic of the device the
                                             // labels left was below its unlabeled bytes
  double measured = 0;                       // caught / runs
  double cp_lower = 0, cp_upper = 0;         // one-sided bounds at options.confidence
  bool matches = false;
  std::string verdict_text;     // why it matches or not
  std::string example_failure;  // the first failure, described
  AgentLog seen;                // summed over counted runs
  double wall_s = 0;
};

struct SelftestResult {
  SelftestSetup setup;
  SelftestOptions options;
  std::vector<ScenarioResult> scenarios;
  bool all_match = false;
  double wall_s = 0;
};

// Sets measured, cp_lower, cp_upper, matches and verdict_text of `r` from its counts and spec
// (acceptance rules at the top of this file).
void JudgeScenario(ScenarioResult* r, double confidence);

// Fewer runs cannot tell a sampled rate from much lower ones (with 5 runs at 99% even 0 catches
// would "match" 0.54), so a sampled scenario with fewer runs is a mismatch.
inline constexpr uint64_t kMinRunsToJudgeARate = 20;

// Errors: INVALID_ARGUMENT (runs 0, an unknown --only id, confidence outside (0,1)), INTERNAL when
// a session could not run at all (SessionRunner::Run error).
StatusOr<SelftestResult> RunSelftest(const SelftestOptions& options);

// The JSON document of a result (docs/results/security-results.json; its fields are written in
// selftest_report.cc). "scaffold" is null: adversary 8's section, filled by its own check.
nlohmann::json SelftestJson(const SelftestResult& result);

// Puts adversary 8's section (adversary/scaffold/scaffold_report.h ScaffoldExperimentsJson) under "scaffold"
// and folds its "passed" into "all_match".
void AttachScaffold(nlohmann::json* doc, nlohmann::json scaffold);

// Whether every scenario matched and the scaffold check (when present) passed, recomputed from the
// document; INVALID_ARGUMENT when its "all_match" says otherwise or a field is missing.
StatusOr<bool> DocumentAllMatch(const nlohmann::json& doc);

// docs/results/security-results.md from a JSON document of SelftestJson (so it can be re-rendered after
// other sections, e.g. "scaffold", are added). Errors: INVALID_ARGUMENT naming a missing field.
StatusOr<std::string> SelftestMarkdown(const nlohmann::json& doc);

}  // namespace wipeproof::selftest
