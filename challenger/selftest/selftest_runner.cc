#include "challenger/selftest/selftest_runner.h"

#include <kj/async-io.h>

#include <chrono>
#include <cmath>
#include <random>

#include "adversary/fixed_keys.h"
#include "adversary/relay_agent.h"
#include "challenger/fleet/inventory.h"
#include "challenger/parameters/delegation_document.h"
#include "challenger/fleet/plan_builder.h"
#include "challenger/ledger/record_sink.h"
#include "challenger/parameters/authority_documents.h"
#include "challenger/parameters/profile_json_writer.h"
#include "challenger/selftest/clopper_pearson.h"
#include "challenger/selftest/selftest_copied_order.h"
#include "challenger/selftest/selftest_wave.h"
#include "challenger/session/assumptions.h"
#include "challenger/session/failure.h"
#include "challenger/session/pipe_agent_connector.h"
#include "challenger/session/session_plan.h"
#include "challenger/session/session_runner.h"
#include "proto/label_wire.h"
#include "proto/signed_document.h"
#include "proto/signing.h"

namespace wipeproof::selftest {

namespace {

using proto::FailureReason;

constexpr char kNodeName[] = "selftest-node";
constexpr char kNeighbourName[] = "selftest-neighbour";  // node-b of the wave scenarios
constexpr char kWaveName[] = "selftest-wave";
constexpr size_t kMaxCheckExamples = 3;

// `wave_neighbour`: when set (kOneGpu only), a second node of one GPU with this key, and a complete
// wave of the two.
Inventory SelftestInventory(const SelftestSetup& s, NodeKind kind, const proto::PublicKey& node_key,
                            uint64_t odd_bytes, const proto::PublicKey* wave_neighbour = nullptr) {
  const uint64_t chunk_bytes = uint64_t{s.chunk_labels} * proto::kLabelBytes;
  const uint64_t gpu_bytes = s.device_chunks * chunk_bytes + s.gpu_reserve_bytes;
  InventoryNode node;
  node.name = kNodeName;
  node.address = "127.0.0.1:1";
  node.public_key = node_key;
  if (kind == NodeKind::kHostAndGpu || kind == NodeKind::kHostPartlyPlanned) {
    node.devices.push_back({kHostSelector, "host-dram", s.device_chunks * chunk_bytes});
    // The authority's finding: the host plan covers the node's physical memory, or half of it.
    node.host_physical_memory_bytes = s.device_chunks * chunk_bytes * (kind == NodeKind::kHostPartlyPlanned ? 2 : 1);
  }
  const uint64_t large_reserve = s.relocation_reserve_chunks * chunk_bytes;
  if (kind == NodeKind::kTwoGpusLargeReserve) {
    for (const char* selector : {"GPU-selftest-0", "GPU-selftest-1"}) {
      node.devices.push_back({selector, "selftest-gpu-reserve", s.device_chunks * chunk_bytes + large_reserve});
    }
  } else {
    node.devices.push_back(
        {"GPU-selftest-0", "selftest-gpu", gpu_bytes + (kind == NodeKind::kGpuOddCapacity ? odd_bytes : 0)});
  }
  if (kind == NodeKind::kTwoGpus) node.devices.push_back({"GPU-selftest-1", "selftest-gpu", gpu_bytes});
  Inventory inv;
  inv.nodes = {node};
  if (kind == NodeKind::kOneGpu && wave_neighbour != nullptr) {
    InventoryNode b = node;
    b.name = kNeighbourName;
    b.public_key = *wave_neighbour;
    inv.nodes.push_back(b);
    inv.waves.push_back(Wave{kWaveName, {kNodeName, kNeighbourName}, 0, 0, true, std::nullopt});
  }
  inv.reserve_bytes_by_model = {
      {"host-dram", 0}, {"selftest-gpu", s.gpu_reserve_bytes}, {"selftest-gpu-reserve", large_reserve}};
  SealInventory(&inv);  // the selftest is the authority: its lab delegations name this document
  return inv;
}

Profile SelftestProfile(const SelftestSetup& s, LabelFormat format) {
  Profile p = DefaultProfile();
  p.name = std::string("selftest-m") + std::to_string(s.chunk_labels) + "-" + LabelFormatName(format);
  p.chunk_labels = s.chunk_labels;
  p.format = format;
  p.rounds = s.rounds;
  p.labels_per_round = s.labels_per_round;
  p.round_deadline_us = s.round_deadline_us;
  p.fill_deadline_us = 60'000'000;
  p.adversary = AdversaryClass{s.adversary_class, s.t_min_ps, s.safety_factor};
  p.confidence = 0.99;
  p.calibrated = true;
  p.honest_round_p999_us = s.honest_round_p999_us;
  return p;
}

// The selftest profile as `document` says, loaded as wipe and serve load theirs
// (authority_documents.h) under the selftest's authority key, with the selftest's class file signed
// by that key.
StatusOr<Profile> SelftestProfileDocument(const SelftestSetup& s, LabelFormat format,
                                          adversary::ProfileDocument document, const proto::KeyPair& authority) {
  AuthorityKey key;
  key.public_key = authority.public_key;
  key.name = "the selftest authority key";
  nlohmann::ordered_json classes_json;
  classes_json["classes"] = {
      {{"name", s.adversary_class}, {"t_min_ps", s.t_min_ps}, {"safety_factor", s.safety_factor}}};
  WP_ASSIGN_OR_RETURN(const std::string classes_doc, proto::SignDocument(proto::DocumentType::kAdversaryClasses,
                                                                         classes_json.dump(2) + "\n", authority));
  WP_ASSIGN_OR_RETURN(AdversaryClasses classes, ParseAdversaryClassesDocument(classes_doc, "selftest classes", &key));
  const std::string text = ProfileToJson(SelftestProfile(s, format)).dump(2) + "\n";
  std::string file = text;
  if (document != adversary::ProfileDocument::kUnsigned) {
    WP_ASSIGN_OR_RETURN(file, proto::SignDocument(proto::DocumentType::kParameterProfile, text, authority));
  }
  if (document == adversary::ProfileDocument::kTampered) {
    // Inside the signed string: "round_deadline_us": 7 -> 6.
    const std::string from = "\\\"round_deadline_us\\\": " + std::to_string(s.round_deadline_us);
    const size_t at = file.find(from);
    if (at == std::string::npos) return InternalError("selftest: no round deadline to tamper with");
    file.replace(at, from.size(), "\\\"round_deadline_us\\\": " + std::to_string(s.round_deadline_us - 1));
  }
  return ParseProfileDocument(file, "selftest profile", &key, classes);
}

bool Selected(const ScenarioSpec& s, const std::vector<std::string>& only) {
  if (only.empty()) return true;
  for (const std::string& o : only) {
    // A number names an adversary ("1" is not a prefix of "10a-..."); "1a" or "10b" a prefix.
    const bool number = !o.empty() && o.find_first_not_of("0123456789") == std::string::npos;
    if (o == s.id || o == std::to_string(s.adversary) || (!number && o.size() <= 3 && s.id.rfind(o, 0) == 0))
      return true;
  }
  return false;
}

std::string OutcomeName(const SessionOutcome& o) { return o.pass ? "pass" : FailureReasonName(o.failure.reason); }

// Per-run checks on the signed verdict; returns "" when they hold, else what failed.
std::string CheckRun(const ScenarioSpec& spec, const SessionOutcome& outcome, const proto::PublicKey& challenger,
                     const AgentLog& seen, bool* bound_stated, ScenarioResult* r) {
  auto verdict = proto::VerifyAndParse<proto::Verdict>(outcome.verdict, challenger);
  if (!verdict.ok()) return "verdict does not verify: " + verdict.status().ToString();
  proto::Verdict::Reader v = verdict->root();
  if (v.getPass() != outcome.pass || v.getFailure().getReason() != outcome.failure.reason) {
    return "signed verdict says " + std::string(v.getPass() ? "pass" : FailureReasonName(v.getFailure().getReason())) +
           ", the outcome " + OutcomeName(outcome);
  }
  if (!outcome.ledger.ok()) return "records: " + outcome.ledger.ToString();
  *bound_stated = v.getBoundStated();
  for (auto a : v.getAssumptions()) {
    if (std::string(a.getName().cStr()) == kHostMemoryInPlan && !a.getHeld()) {
      ++r->host_not_planned;
      if (r->host_assumption_detail.empty()) r->host_assumption_detail = a.getDetail().cStr();
    }
  }
  switch (spec.check) {
    case ScenarioCheck::kHostNotPlanned: {
      for (auto a : v.getAssumptions()) {
        if (std::string(a.getName().cStr()) == kHostMemoryInPlan) {
          return a.getHeld() ? "verdict lists host-memory-in-plan as held" : "";
        }
      }
      return "verdict has no host-memory-in-plan assumption";
    }
    case ScenarioCheck::kNoPartialChunk:
      return seen.partial_chunk_ranges == 0 ? "" : "the order planned a range that is not whole chunks";
    case ScenarioCheck::kBoundStated:
      return !outcome.pass || v.getBoundStated()
                 ? ""
                 : "an honest pass states no bound: " + std::string(v.getStatement().cStr());
    case ScenarioCheck::kNoBoundFromProfile: {
      const std::string statement = v.getStatement().cStr();
      if (v.getBoundStated()) return "a bound was stated under a profile the authority did not sign: " + statement;
      if (statement.find("is not signed by the authority") == std::string::npos) {
        return "the statement does not say the profile is not the authority's: " + statement;
      }
      if (v.getProfile().getAuthorityKeyId().size() != 0) return "the verdict names a signer of an unsigned profile";
      return "";
    }
    case ScenarioCheck::kNodeBoundCoversRelocation: {
      const std::string statement = v.getStatement().cStr();
      if (!outcome.pass) return "";  // judged by the outcome counts
      if (!v.getBoundStated()) return "no bound stated: " + statement;
      uint64_t unlabeled = 0;
      for (uint64_t b : seen.unlabeled_bytes) unlabeled += b;
      if (v.getTotalUnwipedBoundBytes() < unlabeled) {
        return "the node bound " + std::to_string(v.getTotalUnwipedBoundBytes()) + " bytes is below the " +
               std::to_string(unlabeled) + " bytes that held no labels";
      }
      if (statement.find("diagnostic only") == std::string::npos) {
        return "the per-device figures are not labelled as diagnostics: " + statement;
      }
      if (!seen.unlabeled_bytes.empty() && v.getDevices().size() > 0 &&
          v.getDevices()[0].getUnwipedBoundBytes() < seen.unlabeled_bytes[0]) {
        ++r->device_figure_understated;
      }
      return "";
    }
    case ScenarioCheck::kWaveInStep:          // judged on the wave (WaveProblem)
    case ScenarioCheck::kCopiedOrderRefused:  // judged on the attempt (SendCopiedOrder)
    case ScenarioCheck::kNone:
      return "";
  }
  return "";
}

// The wave scenarios' checks (ScenarioCheck::kWaveInStep); "" when they hold. node-a drops after
// answering `drop_round` rounds; a pass has `proof_rounds` proof rounds.
// `seen_a`: node-a's agent log. The members run on simulated clocks of their own, so "after" is
// real time as the agents saw it: node-a received its first proof round after node-b's agent
// answered its last fill message (report or notice).
std::string WaveProblem(const WaveOfTwoRun& wave, const AgentLog& seen_a, uint32_t drop_round, uint32_t proof_rounds) {
  if (!wave.b.pass) return "the honest neighbour failed: " + wave.b.failure.Describe();
  if (seen_a.first_proof_round_at != std::chrono::steady_clock::time_point{} &&
      seen_a.first_proof_round_at < wave.seen_b.filled_at) {
    return "node-a received a proof round " +
           std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(wave.seen_b.filled_at -
                                                                                 seen_a.first_proof_round_at)
                              .count()) +
           " us before node-b had sent its last fill message";
  }
  if (!wave.neighbour_released_by_drop) return "node-b's fill was released before node-a dropped";
  if (wave.wave_pass != wave.a.pass) {
    return std::string("the wave verdict says ") + (wave.wave_pass ? "pass" : "fail") + ", node-a " +
           OutcomeName(wave.a);
  }
  uint32_t proofs = 0;
  for (const RoundRecord& r : wave.a.rounds) {
    if (!r.proof) continue;
    if (r.round < drop_round) {
      return "node-a's proof round " + std::to_string(r.round) + " went out before node-b filled";
    }
    ++proofs;
  }
  if (wave.a.pass && proofs != proof_rounds) {
    return "node-a passed after " + std::to_string(proofs) + " proof rounds, not " + std::to_string(proof_rounds);
  }
  return "";
}

}  // namespace

void JudgeScenario(ScenarioResult* r, double confidence) {
  const ScenarioSpec& s = r->spec;
  r->measured = static_cast<double>(r->caught) / static_cast<double>(r->runs);
  r->cp_lower = ClopperPearsonLower(r->caught, r->runs, confidence);
  r->cp_upper = ClopperPearsonUpper(r->caught, r->runs, confidence);
  if (r->unexpected > 0) {
    r->matches = false;
    r->verdict_text = std::to_string(r->unexpected) + " run(s) ended neither in pass nor in " +
                      (s.expected == FailureReason::NONE ? "pass" : FailureReasonName(s.expected));
  } else if (r->check_failures > 0) {
    r->matches = false;
    r->verdict_text = std::to_string(r->check_failures) + " run(s) failed a check: " + r->check_examples.front();
  } else if (s.theory == 0) {
    r->matches = r->caught == 0;
    r->verdict_text = r->matches ? "passed every run, as expected" : "caught in runs expected to pass";
  } else if (s.theory == 1) {
    r->matches = r->caught == r->runs;
    r->verdict_text = r->matches ? "caught in every run, as expected" : "passed in runs expected to be caught";
  } else if (r->runs < kMinRunsToJudgeARate) {
    r->matches = false;
    r->verdict_text = "too few runs to judge a detection rate: " + std::to_string(r->runs) + " < " +
                      std::to_string(kMinRunsToJudgeARate);
  } else {
    // Not significantly below the theoretical rate (the rule), and not significantly above
    // the exact one (which would mean the adversary hid more than its spec says).
    const bool not_below = r->cp_upper >= s.theory;
    const bool not_above = r->cp_lower <= s.exact;
    r->matches = not_below && not_above;
    char text[200];
    if (!not_above) {
      std::snprintf(text, sizeof(text),
                    "lower %.6g%% bound %.4f > exact rate %.4f: caught more often than the spec allows",
                    confidence * 100, r->cp_lower, s.exact);
    } else {
      std::snprintf(text, sizeof(text), "upper %.6g%% bound %.4f %s theoretical %.4f", confidence * 100, r->cp_upper,
                    not_below ? ">=" : "<", s.theory);
    }
    r->verdict_text = text;
  }
}

// Scenario 9c's challenger host: it holds the authority's delegation, which lists `profile` (the
// signed one) and no unsigned profile, and orders under a made-up class instead: `profile`'s t_min
// raised 100-fold and still named as the authority's document, with SignOrder's own check of the
// delegation off, as a host that changed the challenger's code would.
static StatusOr<SessionKeys> RogueChallengerKeys(const proto::KeyPair& authority, const proto::KeyPair& challenger,
                                          int64_t now_unix_us, Profile* profile) {
  constexpr int64_t kDayUs = int64_t{86'400} * 1'000'000;
  DelegationTerms terms;
  terms.challenger = challenger.public_key;
  terms.name = "selftest challenger";
  terms.not_before_unix_us = now_unix_us - kDayUs;
  terms.not_after_unix_us = now_unix_us + 30 * kDayUs;
  terms.profiles = {*profile};
  WP_ASSIGN_OR_RETURN(const proto::SignedEnvelope delegation, SignDelegation(terms, authority));
  SessionKeys keys{authority, challenger};
  keys.authority.secret_key = {};  // the challenger host never holds it
  keys.delegation = proto::EncodeEnvelope(delegation);
  keys.check_own_delegation = false;
  profile->adversary.t_min_ps *= 100;
  if (!profile->endorsement.signed_class) return InternalError("selftest 9c: the signed profile has no signed class");
  profile->endorsement.signed_class->t_min_ps = profile->adversary.t_min_ps;
  profile->endorsement.signed_parameters = std::make_shared<const Profile>(*profile);
  return keys;
}

StatusOr<SelftestResult> RunSelftest(const SelftestOptions& options) {
  if (options.runs == 0) return InvalidArgumentError("runs must be at least 1");
  if (!(options.confidence > 0 && options.confidence < 1)) return InvalidArgumentError("confidence must be in (0, 1)");
  SelftestResult result;
  result.setup = adversary::DefaultSelftestSetup();
  result.options = options;
  result.options.progress = nullptr;
  std::vector<ScenarioSpec> specs;
  for (const ScenarioSpec& s : adversary::SelftestScenarios(result.setup)) {
    if (Selected(s, options.only)) specs.push_back(s);
  }
  for (const std::string& o : options.only) {
    bool known = false;
    for (const ScenarioSpec& s : adversary::SelftestScenarios(result.setup)) known = known || Selected(s, {o});
    if (!known)
      return InvalidArgumentError("unknown scenario '" + o + "' (an id such as 1a-recompute-contiguous, or 0-7, 9, 10)");
  }
  for (LabelFormat f : {LabelFormat::kC1, LabelFormat::k192})
    WP_RETURN_IF_ERROR(ValidateProfile(SelftestProfile(result.setup, f)));

  const proto::KeyPair authority = adversary::FixedKey(0xa1), challenger = adversary::FixedKey(0xc1),
                       node = adversary::FixedKey(0xb1), neighbour = adversary::FixedKey(0xb2),
                       third_party = adversary::FixedKey(0x3d);
  WP_RETURN_IF_ERROR(proto::InitSodium());
  kj::AsyncIoContext io = kj::setupAsyncIo();
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < specs.size(); ++i) {
    const ScenarioSpec& spec = specs[i];
    ScenarioResult r;
    r.spec = spec;
    const auto scenario_start = std::chrono::steady_clock::now();
    std::mt19937_64 rng(options.seed * 1'000'003 + i * 7919 + std::hash<std::string>()(spec.id));
    FakeClock clock;
    adversary::AdversaryMemory memory;
    WP_ASSIGN_OR_RETURN(Profile profile, SelftestProfileDocument(result.setup, spec.format, spec.profile, authority));
    SessionKeys keys{authority, challenger};
    if (spec.profile == adversary::ProfileDocument::kUndelegated) {
      WP_ASSIGN_OR_RETURN(keys, RogueChallengerKeys(authority, challenger, clock.UnixMicros(), &profile));
    }
    adversary::SimTiming timing = result.setup.timing;
    if (spec.format == LabelFormat::k192) {
      timing.recompute_chunk_ps = result.setup.graph_depth * 2 * result.setup.t_min_ps;
    }
    const uint64_t chunk_bytes = uint64_t{result.setup.chunk_labels} * proto::kLabelBytes;
    for (int64_t run = spec.prime ? -1 : 0; run < static_cast<int64_t>(options.runs); ++run) {
      const uint64_t odd = std::uniform_int_distribution<uint64_t>(1, chunk_bytes - 1)(rng);
      AgentLog seen;
      adversary::CheatingAgentOptions agent_options;
      if (run >= 0) agent_options.deviation = spec.deviation;
      agent_options.timing = timing;
      agent_options.memory = &memory;
      agent_options.log = &seen;
      agent_options.rng_seed = rng();
      std::string setting_problem;  // what the scenario's setting (wave, copied order) went wrong in
      StatusOr<SessionOutcome> outcome = InternalError("not run");
      if (spec.setting == adversary::ScenarioSetting::kWaveOfTwo) {
        WaveOfTwoSetup wave;
        wave.inventory = SelftestInventory(result.setup, spec.node, node.public_key, odd, &neighbour.public_key);
        wave.profile = profile;
        wave.keys = keys;
        wave.node_a = node;
        wave.node_b = neighbour;
        wave.agent_a = std::move(agent_options);
        wave.timing_b = timing;
        wave.rng_seed_b = rng();
        wave.threads = options.threads;
        auto ran = RunWaveOfTwo(std::move(wave));
        if (!ran.ok()) return ran.status().WithContext("selftest " + spec.id);
        setting_problem = WaveProblem(*ran, seen, spec.deviation.round, profile.rounds);
        outcome = std::move(ran->a);
      } else {
        const Inventory inventory = SelftestInventory(result.setup, spec.node, node.public_key, odd);
        WP_ASSIGN_OR_RETURN(SessionPlan plan, BuildPlan(inventory, kNodeName, profile,
                                                        LoneSessionWaveContext(inventory, kNodeName), clock));
        if (spec.occupancy_window_us > 0) {
          uint64_t planned = 0;
          for (const PlannedDevice& d : plan.devices) planned += d.planned_bytes();
          WP_RETURN_IF_ERROR(SetOccupancySchedule(
              &plan, {spec.occupancy_window_us, spec.occupancy_mean_gap_us, planned / 4, spec.occupancy_labels}));
          plan.occupancy_batches = spec.occupancy_rounds;  // a pool of exactly K rounds
        }
        if (spec.setting == adversary::ScenarioSetting::kCopiedOrderFirst && run >= 0) {
          // The order the challenger is about to send (Ed25519 is deterministic: the same bytes).
          WP_ASSIGN_OR_RETURN(const proto::SignedEnvelope order, SignOrder(plan, keys));
          AgentLog third_party_seen;
          const adversary::AgentKeys agent_keys{authority.public_key, challenger.public_key, node};
          auto make = [&](kj::Timer&) -> kj::Own<proto::ProverAgent::Server> {
            adversary::CheatingAgentOptions honest;
            honest.timing = timing;
            honest.log = &third_party_seen;
            return kj::heap<adversary::CheatingAgent>(agent_keys, std::move(honest));
          };
          WP_ASSIGN_OR_RETURN(setting_problem,
                              SendCopiedOrder(io, make, node, challenger, third_party, order, third_party_seen));
        }
        // An adversary that cuts the connection (7g) cuts the pipe the session runs over.
        PipeAgentConnector* connection = nullptr;
        agent_options.deviation.disconnect = [&connection] {
          if (connection != nullptr) connection->Cut();
        };
        agent_options.sim_clock = &clock;
        kj::Own<proto::ProverAgent::Server> agent = kj::heap<adversary::CheatingAgent>(
            adversary::AgentKeys{authority.public_key, challenger.public_key, node}, std::move(agent_options));
        if (spec.relay_link_us >= 0 && run >= 0) {
          adversary::RelayDelays link;
          link.round_us = spec.relay_link_us;
          agent = kj::heap<adversary::RelayAgent>(proto::ProverAgent::Client(kj::mv(agent)), link, &clock);
        }
        PipeAgentConnector pipe(io, kj::mv(agent));
        connection = &pipe;
        DiscardingRecordSink sink;
        SessionRunner runner(plan, keys, SessionEnvOn(io, clock, sink, options.threads));
        outcome = runner.Run(pipe);
      }
      if (!outcome.ok()) return outcome.status().WithContext("selftest " + spec.id);
      if (run < 0) continue;  // priming: the adversary's memory of an earlier session

      ++r.runs;
      ++r.outcomes[OutcomeName(*outcome)];
      if (!outcome->pass && outcome->failure.reason == spec.expected) ++r.caught;
      if (!outcome->pass && outcome->failure.reason != spec.expected) ++r.unexpected;
      if (!outcome->pass && r.example_failure.empty()) r.example_failure = PeerText(outcome->failure.Describe(), 400);
      bool bound = false;
      std::string problem = CheckRun(spec, *outcome, challenger.public_key, seen, &bound, &r);
      if (problem.empty()) problem = setting_problem;
      if (!problem.empty()) {
        ++r.check_failures;
        if (r.check_examples.size() < kMaxCheckExamples) r.check_examples.push_back(problem);
      }
      if (outcome->pass && bound) ++r.bounds_stated;
      r.seen.hidden_chunks_challenged += seen.hidden_chunks_challenged;
      r.seen.recompute_charged_us += seen.recompute_charged_us;
      r.seen.max_round_recompute_us = std::max(r.seen.max_round_recompute_us, seen.max_round_recompute_us);
      r.seen.partial_chunk_ranges += seen.partial_chunk_ranges;
      r.seen.relocated_chunks += seen.relocated_chunks;
      r.seen.overwritten_chunks += seen.overwritten_chunks;
      if (r.seen.unlabeled_bytes.size() < seen.unlabeled_bytes.size())
        r.seen.unlabeled_bytes.resize(seen.unlabeled_bytes.size());
      for (size_t d = 0; d < seen.unlabeled_bytes.size(); ++d) r.seen.unlabeled_bytes[d] += seen.unlabeled_bytes[d];
      if (options.progress) options.progress(i, specs.size(), spec.id, r.runs, options.runs);
    }
    JudgeScenario(&r, options.confidence);
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - scenario_start).count();
    result.scenarios.push_back(std::move(r));
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.all_match = !result.scenarios.empty();
  for (const ScenarioResult& r : result.scenarios) result.all_match = result.all_match && r.matches;
  return result;
}

}  // namespace wipeproof::selftest
