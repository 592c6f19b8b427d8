#include "adversary/scenarios.h"

#include <algorithm>
#include <cmath>

#include "kernels/graph_metrics.h"

namespace wipeproof::adversary {

namespace {

using proto::FailureReason;

// C(C-h, q) / C(C, q): a round's q distinct chunks all miss the h hidden ones.
double MissOneRound(uint64_t c, uint64_t h, uint64_t q) {
  if (h == 0) return 1;
  if (q > c - h) return 0;
  double p = 1;
  for (uint64_t i = 0; i < q; ++i) p *= static_cast<double>(c - h - i) / static_cast<double>(c - i);
  return p;
}

// Holding batches per device and session (challenger/session/session_plan.h kHoldingBatches).
constexpr double kSelftestHoldingBatches = 16;

// Sets f, N, theory and exact for h hidden of C chunks on a device with q labels per round.
void SampledTheory(ScenarioSpec* s, uint64_t chunks, uint64_t hidden, uint32_t q, uint32_t rounds,
                   const std::string& device) {
  s->chunks = chunks;
  s->hidden = hidden;
  s->f = static_cast<double>(hidden) / static_cast<double>(chunks);
  s->n = uint64_t{q} * rounds;
  s->n_meaning = "q*R = " + std::to_string(q) + "*" + std::to_string(rounds) + " labels challenged on " + device;
  s->theory = 1 - std::pow(1 - s->f, static_cast<double>(s->n));
  // Protocol v2 adds holding rounds (q/8 labels, none when q = 1, at most kSelftestHoldingBatches
  // per device) from a device's fill notice while another device still fills, and after the proof
  // rounds while another still proves: the theory counts only the proof rounds (a lower bound), the
  // exact rate every holding batch a device may get (an upper one).
  const uint32_t hold = q < 2 ? 0 : std::max<uint32_t>(1, q / 8);
  s->exact = 1 - std::pow(MissOneRound(chunks, hidden, q), rounds) *
                     std::pow(MissOneRound(chunks, hidden, hold), kSelftestHoldingBatches);
}

void Certain(ScenarioSpec* s, const SelftestSetup& setup, const std::string& why) {
  s->f = 1;
  s->n = uint64_t{setup.labels_per_round} * setup.rounds;
  s->n_meaning = why;
  s->theory = 1;
  s->exact = 1;
}

void Never(ScenarioSpec* s, const std::string& why) {
  s->f = 0;
  s->n = 0;
  s->n_meaning = why;
  s->theory = 0;
  s->exact = 0;
}

}  // namespace

SelftestSetup DefaultSelftestSetup() {
  SelftestSetup s;
  s.graph_depth = ComputeGraphMetrics(s.chunk_labels).min_output_depth;
  s.timing.recompute_chunk_ps =
      s.graph_depth * static_cast<uint64_t>(SequentialCompressionsPerNode(LabelFormat::kC1)) * s.t_min_ps;
  return s;
}

std::vector<ScenarioSpec> SelftestScenarios(const SelftestSetup& setup) {
  const uint64_t c = setup.device_chunks;
  const uint32_t q = setup.labels_per_round, r = setup.rounds;
  std::vector<ScenarioSpec> all;
  auto add = [&all](ScenarioSpec s) { all.push_back(std::move(s)); };

  {
    ScenarioSpec s;
    s.id = "0-honest";
    s.title = "honest agent";
    s.description = "Fills every planned chunk and answers every round by lookup.";
    s.check = ScenarioCheck::kBoundStated;
    Never(&s, "nothing hidden");
    add(s);
  }
  // 1. Hidden fraction, three ways of answering, two placements.
  struct Hide {
    const char* id;
    HiddenAnswer answer;
    Placement placement;
    uint64_t hidden;
    FailureReason expected;
    const char* text;
  };
  const Hide hides[] = {
      {"1a-recompute-contiguous", HiddenAnswer::kRecompute, Placement::kContiguous, 2, FailureReason::LATE_ROUND,
       "recomputes challenged hidden labels on demand with all host cores (correct labels, depth(m)*c_node*t_min "
       "per batch of 64 chunks charged on the simulated clock)"},
      {"1a-recompute-random", HiddenAnswer::kRecompute, Placement::kRandom, 4, FailureReason::LATE_ROUND,
       "recomputes challenged hidden labels on demand with all host cores (correct labels, depth(m)*c_node*t_min per "
       "batch of 64 chunks charged on the simulated clock)"},
      {"1b-random-bytes-contiguous", HiddenAnswer::kRandomBytes, Placement::kContiguous, 2, FailureReason::WRONG_LABEL,
       "answers random bytes for challenged hidden labels"},
      {"1b-random-bytes-random", HiddenAnswer::kRandomBytes, Placement::kRandom, 4, FailureReason::WRONG_LABEL,
       "answers random bytes for challenged hidden labels"},
      {"1c-earlier-session-contiguous", HiddenAnswer::kEarlierSession, Placement::kContiguous, 2,
       FailureReason::WRONG_LABEL, "answers the label of the same index from the previous session's seed"},
      {"1c-earlier-session-random", HiddenAnswer::kEarlierSession, Placement::kRandom, 4, FailureReason::WRONG_LABEL,
       "answers the label of the same index from the previous session's seed"},
  };
  for (const Hide& h : hides) {
    ScenarioSpec s;
    s.id = h.id;
    s.adversary = 1;
    s.title = "hidden fraction, " +
              std::string(h.answer == HiddenAnswer::kRecompute     ? "recompute"
                          : h.answer == HiddenAnswer::kRandomBytes ? "random bytes"
                                                                   : "earlier session") +
              (h.placement == Placement::kContiguous ? ", contiguous" : ", random");
    s.description = "Keeps " + std::to_string(h.hidden) + " of " + std::to_string(c) + " chunks unlabeled (" +
                    (h.placement == Placement::kContiguous ? "one contiguous run, as a checkpoint would be"
                                                           : "chunks chosen at random") +
                    ") and " + h.text + ".";
    s.deviation.kind = DeviationKind::kHideChunks;
    s.deviation.hidden_fraction = static_cast<double>(h.hidden) / static_cast<double>(c);
    s.deviation.placement = h.placement;
    s.deviation.hidden_answer = h.answer;
    s.prime = h.answer == HiddenAnswer::kEarlierSession;
    s.expected = h.expected;
    SampledTheory(&s, c, h.hidden, q, r, "GPU-selftest-0");
    add(s);
  }
  // 2. Relay, under and over the deadline.
  const int64_t slack = static_cast<int64_t>(setup.round_deadline_us) - setup.timing.round_us;
  for (int over = 0; over < 2; ++over) {
    ScenarioSpec s;
    s.adversary = 2;
    s.relay_link_us = over ? slack + 1 : slack - 1;
    s.id = over ? "2-relay-over-deadline" : "2-relay-under-deadline";
    s.title = std::string("relay, +") + std::to_string(s.relay_link_us) + " us link";
    s.description = "Forwards every call to a helper that holds the labels, adding " + std::to_string(s.relay_link_us) +
                    " us per round: rounds take " + std::to_string(setup.timing.round_us + s.relay_link_us) +
                    " us against the " + std::to_string(setup.round_deadline_us) + " us deadline.";
    if (over) {
      s.expected = FailureReason::LATE_ROUND;
      Certain(&s, setup, "every round is late");
    } else {
      Never(&s, "every round is in time: a relay faster than the deadline is not caught (wave-complete)");
    }
    add(s);
  }
  // 3. Relocation.
  {
    ScenarioSpec s;
    s.id = "3a-relocate-host-not-planned";
    s.adversary = 3;
    s.title = "relocation to unplanned host memory";
    s.description =
        "Computes every label, keeps 8 of the GPU's 32 chunks in host memory (not in the plan) and "
        "answers from there.";
    s.deviation.kind = DeviationKind::kRelocate;
    s.deviation.relocate_chunks = 8;
    s.deviation.host_free_bytes = uint64_t{1} << 30;
    s.check = ScenarioCheck::kHostNotPlanned;
    Never(&s, "all labels answer correctly; the verdict lists host-memory-in-plan as not held");
    add(s);

    ScenarioSpec t;
    t.id = "3b-relocate-host-planned";
    t.adversary = 3;
    t.title = "relocation into planned host memory";
    t.description =
        "Host memory is planned to capacity; moving 2 GPU chunks there overwrites 2 of the host's own "
        "32 labelled chunks (no room), which then answer zeros.";
    t.node = NodeKind::kHostAndGpu;
    t.deviation.kind = DeviationKind::kRelocate;
    t.deviation.relocate_chunks = 2;
    t.expected = FailureReason::WRONG_LABEL;
    SampledTheory(&t, c, 2, q, r, "host");
    add(t);

    ScenarioSpec u;
    u.id = "3c-relocate-into-reserve";
    u.adversary = 3;
    u.title = "relocation into another planned device's reserve";
    u.description = "Two planned GPUs, each with " + std::to_string(setup.relocation_reserve_chunks) +
                    " chunks of allowed reserve; moves " + std::to_string(setup.relocation_reserve_chunks) +
                    " of GPU-selftest-0's chunks into GPU-selftest-1's reserve and answers them from there, so "
                    "GPU-selftest-0 keeps that much of its own memory unwiped while every label answers. The "
                    "verdict's node statement must cover it (reserves count in full); a per-device statement "
                    "for GPU-selftest-0 would not.";
    u.node = NodeKind::kTwoGpusLargeReserve;
    u.deviation.kind = DeviationKind::kRelocateToReserve;
    u.deviation.relocate_chunks = setup.relocation_reserve_chunks;
    u.check = ScenarioCheck::kNodeBoundCoversRelocation;
    Never(&u, "every label answers: the moved labels sit in planned memory (another device's reserve)");
    add(u);

    ScenarioSpec w;
    w.id = "3d-relocate-host-partly-planned";
    w.adversary = 3;
    w.title = "relocation to host memory a small host plan leaves out";
    w.description =
        "Host memory is planned, but the authority found twice as much physical memory on the node; "
        "moves 8 of the GPU's 32 chunks into the unplanned half and answers from there.";
    w.node = NodeKind::kHostPartlyPlanned;
    w.deviation.kind = DeviationKind::kRelocate;
    w.deviation.relocate_chunks = 8;
    w.deviation.host_free_bytes = uint64_t{setup.device_chunks} * setup.chunk_labels * kLabelBytes;
    w.check = ScenarioCheck::kHostNotPlanned;
    Never(&w, "all labels answer correctly; the verdict lists host-memory-in-plan as not held (the plan "
              "covers half the physical memory)");
    add(w);
  }
  // 4. Under-fill.
  for (int reserve = 0; reserve < 2; ++reserve) {
    ScenarioSpec s;
    s.id = reserve ? "4b-inflated-reserve" : "4a-held-by-others";
    s.adversary = 4;
    s.title = reserve ? "under-fill, inflated reserve" : "under-fill, memory 'held by other processes'";
    s.description = std::string("Fills 2 chunks fewer and reports them ") +
                    (reserve ? "as extra reserve (reserveBytes above the allowed reserve)."
                             : "as held by other processes (bytesHeldByOthers).");
    s.deviation.kind = reserve ? DeviationKind::kUnderfillInflatedReserve : DeviationKind::kUnderfillHeldByOthers;
    s.deviation.short_chunks = 2;
    s.expected = FailureReason::SHORT_CAPACITY;
    Certain(&s, setup, "checked on the fill report against capacity - allowed reserve, every session");
    add(s);
  }
  // 5. Dedup.
  {
    ScenarioSpec s;
    s.id = "5a-dedup-whole-device";
    s.adversary = 5;
    s.title = "dedup, whole device";
    s.description = "Two planned GPUs; serves all of GPU-selftest-1 from GPU-selftest-0's copy (same offsets).";
    s.node = NodeKind::kTwoGpus;
    s.deviation.kind = DeviationKind::kDedup;
    s.expected = FailureReason::WRONG_LABEL;
    SampledTheory(&s, c, c, q, r, "GPU-selftest-1");
    add(s);
    ScenarioSpec t = s;
    t.id = "5b-dedup-partial";
    t.title = "dedup, 4 chunks";
    t.description = "Two planned GPUs; serves 4 of GPU-selftest-1's 32 chunks from GPU-selftest-0's copy.";
    t.deviation.dedup_chunks = 4;
    SampledTheory(&t, c, 4, q, r, "GPU-selftest-1");
    add(t);
  }
  // 6. Wrong key material.
  const std::pair<const char*, DeviationKind> wrong[] = {{"6a-wrong-seed", DeviationKind::kWrongSeed},
                                                         {"6b-wrong-format", DeviationKind::kWrongFormat},
                                                         {"6c-wrong-m", DeviationKind::kWrongChunkLabels}};
  for (const auto& [id, kind] : wrong) {
    ScenarioSpec s;
    s.id = id;
    s.adversary = 6;
    s.deviation.kind = kind;
    s.title = kind == DeviationKind::kWrongSeed     ? "wrong seed"
              : kind == DeviationKind::kWrongFormat ? "wrong format (192 for c1)"
                                                    : "wrong m (m/2)";
    s.description = "Fills every chunk, but with " +
                    std::string(kind == DeviationKind::kWrongSeed     ? "the order's seed with one bit flipped"
                                : kind == DeviationKind::kWrongFormat ? "posedb-blake3-192 instead of the order's c1"
                                                                      : "m/2 = 128 instead of the order's m") +
                    ".";
    s.expected = FailureReason::WRONG_LABEL;
    Certain(&s, setup, "every label is wrong");
    add(s);
  }
  // 7. Protocol cheats.
  {
    ScenarioSpec s;
    s.adversary = 7;
    s.id = "7a-replayed-answer";
    s.title = "replayed round answer";
    s.description = "Answers round 1 with round 0's answer message, verbatim.";
    s.deviation.kind = DeviationKind::kReplayAnswer;
    s.expected = FailureReason::PROTOCOL_ERROR;
    Certain(&s, setup, "round 1 always carries round 0's index");
    add(s);

    s.id = "7b-other-round-indices";
    s.title = "another round's indices";
    s.description = "Answers round 1 with the correct labels of round 0's indices under round 1's header.";
    s.deviation.kind = DeviationKind::kOtherRoundIndices;
    s.expected = FailureReason::WRONG_LABEL;
    Certain(&s, setup, "wrong unless two rounds draw the same index (negligible)");
    add(s);

    s.id = "7c-reordered-answer";
    s.title = "reordered answer";
    s.description = "Swaps the first two labels of every answer (all labels correct, order wrong).";
    s.deviation.kind = DeviationKind::kReorderedAnswer;
    Certain(&s, setup, "two different labels swapped");
    add(s);

    s.id = "7d-reused-transcript-signature";
    s.title = "reused transcript signature";
    s.description =
        "Answers every round correctly, then sends this session's transcript digest under the "
        "signature of the previous session's transcript.";
    s.deviation.kind = DeviationKind::kReusedTranscriptSignature;
    s.prime = true;
    s.expected = FailureReason::BAD_SIGNATURE;
    Certain(&s, setup, "the signature never covers another payload");
    add(s);

    ScenarioSpec p;
    p.adversary = 7;
    p.id = "7e-192-no-partial-chunk";
    p.title = "192 plan on a capacity of no whole chunks";
    p.description =
        "Format posedb-blake3-192 on a GPU whose capacity minus reserve is 32 chunks plus 1 to "
        "m*32-1 bytes (random per run); the agent would leave a shallow trailing partial chunk "
        "unlabeled, but the challenger must never plan one.";
    p.node = NodeKind::kGpuOddCapacity;
    p.format = LabelFormat::k192;
    p.deviation.kind = DeviationKind::kPartialChunkProbe;
    p.check = ScenarioCheck::kNoPartialChunk;
    Never(&p, "no partial chunk is ever planned, so there is nothing to exploit");
    add(p);

    // 7f. The fill reported (and noticed) early, the rest written after the rounds began.
    constexpr uint64_t kUnwritten = 4;
    ScenarioSpec e;
    e.adversary = 7;
    e.id = "7f-early-fill-report";
    e.title = "fill reported early";
    e.description = "Reports the fill (and sends the device's notice) while " + std::to_string(kUnwritten) + " of " +
                    std::to_string(c) +
                    " chunks, chosen at random, are still unwritten; they would be written 10 s of simulated time "
                    "later. Every challenge was drawn and its expected label computed before the order, so the "
                    "first round leaves in the turn the notice verifies.";
    e.deviation.kind = DeviationKind::kEarlyFillReport;
    e.deviation.hidden_fraction = static_cast<double>(kUnwritten) / static_cast<double>(c);
    e.deviation.advance_us = 10'000'000;
    e.expected = FailureReason::WRONG_LABEL;
    SampledTheory(&e, c, kUnwritten, q, r, "GPU-selftest-0");
    add(e);

    // 7g. Disconnect when asked for a chunk it does not hold, hoping for a re-run with fresh draws.
    ScenarioSpec g;
    g.adversary = 7;
    g.id = "7g-disconnect-on-hidden";
    g.title = "disconnect when a round asks for a hidden chunk";
    g.description = "Keeps " + std::to_string(kUnwritten) + " of " + std::to_string(c) +
                    " chunks unlabeled (at random) and drops the connection when a round asks for one, hoping to "
                    "be run again with fresh draws: the disconnect after a round's indices were sent is its failed "
                    "wipe (disconnected).";
    g.deviation.kind = DeviationKind::kDisconnectOnHidden;
    g.deviation.hidden_fraction = static_cast<double>(kUnwritten) / static_cast<double>(c);
    g.deviation.placement = Placement::kRandom;
    g.expected = FailureReason::DISCONNECTED;
    SampledTheory(&g, c, kUnwritten, q, r, "GPU-selftest-0");
    add(g);

    // 7h. Always busy: refuse every order as busy, hoping a busy node is never a failed wipe.
    ScenarioSpec b;
    b.adversary = 7;
    b.id = "7h-always-busy";
    b.title = "every order refused as busy";
    b.description = "Refuses every order with the real agent's typed busy refusal (another session in progress), "
                    "though the challenger has no session there: no wipe runs, and the verdict is a failed wipe "
                    "(nodeBusy), which serve and status count as such.";
    b.deviation.kind = DeviationKind::kAlwaysBusy;
    b.expected = FailureReason::NODE_BUSY;
    Certain(&b, setup, "every order: the refusal is the session's failure (nodeBusy), never a pass");
    add(b);
  }
  // 9. A profile that is not the authority's: the honest agent passes, but no bound is stated.
  for (int tampered = 0; tampered < 2; ++tampered) {
    ScenarioSpec s;
    s.adversary = 9;
    s.id = tampered ? "9b-tampered-profile" : "9a-unsigned-profile";
    s.title = tampered ? "tampered parameter profile" : "unsigned parameter profile";
    s.description = tampered ? "The profile the authority signed, with its round deadline lowered by 1 us after "
                               "signing; the honest agent answers every round."
                             : "The same profile, never signed by the authority; the honest agent answers every "
                               "round.";
    s.profile = tampered ? ProfileDocument::kTampered : ProfileDocument::kUnsigned;
    s.check = ScenarioCheck::kNoBoundFromProfile;
    Never(&s,
          "nothing hidden: the session passes, but its verdict states no bound (the profile is not the "
          "authority's)");
    add(s);
  }
  // 9c. The challenger's host orders under a class the authority did not sign: the agent refuses.
  {
    ScenarioSpec s;
    s.adversary = 9;
    s.id = "9c-undelegated-class";
    s.title = "order under a class the authority did not delegate";
    s.description = "The challenger's host holds the authority's delegation (the signed profile only) and signs "
                    "orders under a made-up class: the signed profile's t_min raised 100-fold, still naming the "
                    "authority's document. The honest agent checks the order against the delegation.";
    s.profile = ProfileDocument::kUndelegated;
    s.expected = FailureReason::ORDER_REFUSED;
    Certain(&s, setup,
            "every order: the delegation does not list the order's profile (proto/delegation.h), so the agent "
            "refuses it before filling");
    add(s);
  }
  // 10. Waves and the agent's boundary.
  {
    constexpr uint64_t kDropped = 4;
    for (int cheat = 0; cheat < 2; ++cheat) {
      ScenarioSpec s;
      s.adversary = 10;
      s.setting = ScenarioSetting::kWaveOfTwo;
      s.check = ScenarioCheck::kWaveInStep;
      s.deviation.kind = DeviationKind::kDropAfterRounds;
      s.deviation.round = 1;  // right after the holding round of its fill notice
      s.deviation.placement = Placement::kRandom;
      if (cheat == 0) {
        s.id = "10a-honest-wave";
        s.title = "honest wave of two";
        s.description =
            "Two honest nodes in one complete wave; node-b finishes its fill only after node-a has answered the "
            "holding round of its fill notice. Both must pass, and node-a's proof rounds wait for node-b's fill.";
        Never(&s, "nothing hidden: both nodes and the wave pass");
      } else {
        s.id = "10b-wave-shell-game";
        s.title = "wave shell game";
        s.description =
            "node-a fills, answers the holding round of its fill notice, then drops " + std::to_string(kDropped) +
            " of " + std::to_string(c) +
            " chunks (at random) to hold node-b's checkpoint while node-b, still filling, relabels the memory it "
            "freed (node-b's fill report waits for the drop). Rounds are never disclosed and proof rounds go out "
            "only after every member's fill, so all of node-a's proof rounds meet the dropped chunks.";
        s.deviation.hidden_fraction = static_cast<double>(kDropped) / static_cast<double>(c);
        s.expected = FailureReason::WRONG_LABEL;
        SampledTheory(&s, c, kDropped, q, r, "GPU-selftest-0 of node-a, proof rounds only");
      }
      add(s);
    }
    ScenarioSpec o;
    o.adversary = 10;
    o.id = "10c-copied-order";
    o.title = "copied order from a third party";
    o.description =
        "A third party with a key of its own obtains a copy of the session's signed order (valid, within its "
        "lifetime) and sends it to the agent first, over TCP and TLS, to make the agent hold its memory. The "
        "agent's TLS channel admits only the challenger the agent pins, so the copy never reaches the order "
        "checks; then the challenger's own session runs.";
    o.setting = ScenarioSetting::kCopiedOrderFirst;
    o.check = ScenarioCheck::kCopiedOrderRefused;
    Never(&o, "the copied order starts nothing; the challenger's session then passes");
    add(o);
  }
  // 11. Occupancy windows: a node that borrows memory after its proof rounds.
  {
    constexpr uint64_t kBorrowed = 8;
    constexpr uint32_t kLabels = 2, kRounds = 6;
    for (int cheat = 0; cheat < 3; ++cheat) {
      ScenarioSpec s;
      s.adversary = 11;
      s.occupancy_window_us = 1'000'000;
      s.occupancy_mean_gap_us = 1'000;
      s.occupancy_labels = kLabels;
      s.occupancy_rounds = kRounds;
      s.deviation.kind = DeviationKind::kBorrowBetweenRounds;
      if (cheat == 0) {
        s.id = "11a-honest-occupancy";
        s.title = "honest node through an occupancy window";
        s.description = "The order asks the node to hold its labels after its proof rounds; " +
                        std::to_string(kRounds) + " occupancy rounds of " + std::to_string(kLabels) +
                        " labels at secret exponential gaps follow. It borrows nothing.";
        Never(&s, "nothing borrowed: every occupancy round passes");
      } else if (cheat == 2) {
        // Each round costs 2 us on the simulated clock and the borrower relabels once 1 us has passed:
        // the round right after a borrow finds it short, the next one relabelled (it borrows again
        // after answering it). Short in occupancy rounds 2, 4 and 6 of 6.
        s.id = "11c-borrow-and-relabel-between-rounds";
        s.title = "borrower that relabels";
        s.description = "After each occupancy answer frees " + std::to_string(kBorrowed) + " of " + std::to_string(c) +
                        " chunks (at random) and relabels them (really computed again) before the round after "
                        "next: short in every other occupancy round, whole in the rest.";
        s.deviation.hidden_fraction = static_cast<double>(kBorrowed) / static_cast<double>(c);
        s.deviation.borrow_us = 1;
        s.expected = FailureReason::WRONG_LABEL;
        s.chunks = c;
        s.hidden = kBorrowed;
        s.f = s.deviation.hidden_fraction;
        constexpr uint32_t kShortRounds = kRounds / 2;
        s.n = uint64_t{kLabels} * kShortRounds;
        s.n_meaning = "o*3 = " + std::to_string(kLabels) + "*3 labels asked while short (occupancy rounds 2, 4, 6)";
        s.theory = 1 - std::pow(1 - s.f, static_cast<double>(s.n));
        s.exact = 1 - std::pow(MissOneRound(c, kBorrowed, kLabels), kShortRounds);
      } else {
        s.id = "11b-borrow-after-first-occupancy-round";
        s.title = "borrower";
        s.description = "Holds its labels through the proof rounds and its first occupancy round, then frees " +
                        std::to_string(kBorrowed) + " of " + std::to_string(c) +
                        " chunks (at random) for other work and keeps them free: each later occupancy round asks " +
                        std::to_string(kLabels) + " labels in distinct chunks, drawn afresh.";
        s.deviation.hidden_fraction = static_cast<double>(kBorrowed) / static_cast<double>(c);
        s.expected = FailureReason::WRONG_LABEL;
        s.chunks = c;
        s.hidden = kBorrowed;
        s.f = s.deviation.hidden_fraction;
        s.n = uint64_t{kLabels} * (kRounds - 1);
        s.n_meaning = "o*(K-1) = " + std::to_string(kLabels) + "*" + std::to_string(kRounds - 1) +
                      " labels asked after the borrow (the occupancy rounds after the first)";
        s.theory = 1 - std::pow(1 - s.f, static_cast<double>(s.n));
        s.exact = 1 - std::pow(MissOneRound(c, kBorrowed, kLabels), kRounds - 1);
      }
      add(s);
    }
  }
  return all;
}

}  // namespace wipeproof::adversary
