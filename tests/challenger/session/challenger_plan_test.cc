// Session plans (chunk-aligned, disjoint, reserve respected, signed orders that pass the shape
// check) and challenge indices (distinct chunks per round, in range, per-device counts, fresh per
// session), and the expected-label worker against the reference labeler.
// threat-model: T-PARTIAL-192
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <set>
#include <thread>

#include "challenger/fleet/plan_builder.h"
#include "challenger/session/challenges.h"
#include "challenger/session/expected_labels.h"
#include "challenger/session/session_plan.h"
#include "kernels/region_labeler.h"
#include "proto/codec.h"
#include "proto/delegation.h"
#include "proto/signing.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

constexpr uint32_t kM = testing::kTestChunkLabels;

TEST(PlanTest, LabelCountIsWholeChunksOfCapacityMinusReserve) {
  EXPECT_EQ(PlannedLabelCount(64 * kM * 32, 0, kM), 64u * kM);
  EXPECT_EQ(PlannedLabelCount(64 * kM * 32 + 31, 0, kM), 64u * kM);
  EXPECT_EQ(PlannedLabelCount(64 * kM * 32, 1, kM), 63u * kM);  // one byte of reserve costs a chunk
  EXPECT_EQ(PlannedLabelCount(kM * 32 - 1, 0, kM), 0u);
  EXPECT_EQ(PlannedLabelCount(100, 200, kM), 0u);
}

TEST(PlanTest, ChunkAlignedDisjointAndReserveRespected) {
  Inventory inv = testing::TestInventory();
  inv.nodes[0].host_physical_memory_bytes = 3'000'000'000;  // the inventory's, passed on to the verdict
  inv.nodes[0].devices[1].partition_of = "GPU-p";  // a slice of a GPU split in 2: passed on too
  inv.nodes[0].devices[1].partitions = 2;
  FakeClock clock;
  Profile profile = testing::TestProfile();
  profile.labels_per_round_by_model["test-gpu"] = 500;  // capped at the device's 96 chunks
  auto plan = BuildPlan(inv, "node-a", profile, LoneSessionWaveContext(inv, "node-a"), clock);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->devices.size(), 2u);
  uint64_t next = 0;
  for (const PlannedDevice& d : plan->devices) {
    EXPECT_EQ(d.first_label % kM, 0u) << d.selector;
    EXPECT_EQ(d.label_count % kM, 0u) << d.selector;
    EXPECT_EQ(d.first_label, next);  // laid end to end: disjoint, no shared chunk
    next = d.first_label + d.label_count;
    EXPECT_LE(d.planned_bytes(), d.capacity_bytes - d.allowed_reserve_bytes) << d.selector;
    EXPECT_LT(d.capacity_bytes - d.allowed_reserve_bytes - d.planned_bytes(), uint64_t{kM} * 32) << d.selector;
  }
  EXPECT_EQ(plan->devices[0].labels_per_round, 32u);
  EXPECT_EQ(plan->devices[1].allowed_reserve_bytes, 1000u);
  EXPECT_EQ(plan->devices[1].label_count, 96u * kM);
  EXPECT_EQ(plan->devices[1].labels_per_round, 96u);
  EXPECT_TRUE(plan->host_memory_in_plan);
  EXPECT_FALSE(plan->wave_complete);  // node-b of its wave is not in a lone session
  EXPECT_EQ(plan->wave.name, "wave-1");
  EXPECT_EQ(plan->fill_deadline_us, 60'000'000u);
  EXPECT_EQ(plan->expires_at_unix_us - plan->issued_at_unix_us, 300'000'000);
  EXPECT_EQ(plan->issued_at_unix_us, clock.UnixMicros());
  EXPECT_GT(plan->session_timeout_us, plan->fill_deadline_us + 16 * profile.round_deadline_us);
  EXPECT_EQ(plan->host_physical_memory_bytes, 3'000'000'000u);
  EXPECT_EQ(plan->devices[1].partition_of, "GPU-p");
  EXPECT_EQ(plan->devices[1].partitions, 2u);
  EXPECT_EQ(plan->devices[0].partitions, 0u);

  // The order is signed by the challenger key, under a delegation verifying under the authority key,
  // and passes proto's shape check.
  const proto::KeyPair authority = testing::TestKey(0x11), challenger = testing::TestKey(0x22);
  auto order = SignOrder(*plan, SessionKeys{authority, challenger});
  ASSERT_TRUE(order.ok()) << order.status().ToString();
  EXPECT_FALSE(proto::VerifyAndParse<proto::WipeOrder>(*order, authority.public_key).ok());
  auto parsed = proto::VerifyAndParse<proto::WipeOrder>(*order, challenger.public_key);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(proto::CheckOrderDelegation(parsed->root(), authority.public_key, challenger.public_key,
                                          parsed->root().getIssuedAtUnixUs(), 0)
                  .ok());
  proto::WipeOrder::Reader o = parsed->root();
  EXPECT_EQ(std::string(o.getNodeName().cStr()), "node-a");
  EXPECT_EQ(o.getChunkLabels(), kM);
  EXPECT_EQ(o.getRounds(), 0u);  // never disclosed
  EXPECT_EQ(proto::AsView(proto::KeyIdOf(challenger.public_key)), o.getChallengerKeyId());
  // Each device's own fill deadline; the session's is the largest (fill_deadline_ms is set here).
  EXPECT_EQ(o.getDevices()[0].getFillDeadlineUs(), 60'000'000u);
  EXPECT_EQ(o.getDevices()[1].getCapacityBytes(), 96u * kM * 32 + 1000);
  EXPECT_EQ(std::string(o.getProfile().getName().cStr()), "test-uncalibrated");
  EXPECT_FALSE(o.getProfile().getCalibrated());
  EXPECT_EQ(o.getProfile().getRecomputeFloorUs(), 1u);  // 1.2 us (25 ns, safety 2, m = 64)
  EXPECT_TRUE(o.getHostMemoryInPlan());
  const proto::KeyId node_id = proto::KeyIdOf(testing::TestKey(0x33).public_key);
  EXPECT_EQ(0, std::memcmp(o.getNodeKeyId().begin(), node_id.data(), node_id.size()));
}

TEST(PlanTest, FreshSeedAndSessionIdPerSession) {
  const Inventory inv = testing::TestInventory();
  FakeClock clock;
  auto a = BuildPlan(inv, "node-a", testing::TestProfile(), {}, clock);
  auto b = BuildPlan(inv, "node-a", testing::TestProfile(), {}, clock);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->seed, b->seed);
  EXPECT_NE(a->session_id, b->session_id);
}

TEST(PlanTest, Errors) {
  Inventory inv = testing::TestInventory();
  FakeClock clock;
  EXPECT_EQ(BuildPlan(inv, "node-z", testing::TestProfile(), {}, clock).status().code(), StatusCode::kNotFound);
  inv.nodes[0].devices[0].capacity_bytes = kM * 32 - 1;
  auto small = BuildPlan(inv, "node-a", testing::TestProfile(), {}, clock);
  EXPECT_EQ(small.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(small.status().message().find("node node-a device host"), std::string::npos) << small.status().ToString();
  Profile bad = testing::TestProfile();
  bad.chunk_labels = 100;
  EXPECT_EQ(BuildPlan(testing::TestInventory(), "node-a", bad, {}, clock).status().code(),
            StatusCode::kInvalidArgument);
}

// PlanFromOrder is WriteOrder's inverse: an order read back into a plan and written again is the
// same order, byte for byte (canonical form), for a plain and an endorsed, calibrated profile.
TEST(PlanTest, AnOrderReadBackIntoAPlanWritesTheSameOrder) {
  const Inventory inv = testing::TestInventory();
  FakeClock clock;
  const proto::KeyId challenger = proto::KeyIdOf(testing::TestKey(0x22).public_key);
  for (const Profile& profile : {testing::TestProfile(), testing::Endorsed(testing::CalibratedTestProfile())}) {
    auto plan = BuildPlan(inv, "node-a", profile, LoneSessionWaveContext(inv, "node-a"), clock);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    plan->wave.name = "wave-1";
    plan->wave_complete = true;
    capnp::MallocMessageBuilder first;
    WriteOrder(*plan, challenger, first.initRoot<proto::WipeOrder>());
    auto order = proto::EncodeCanonical(first.getRoot<proto::WipeOrder>().asReader());
    ASSERT_TRUE(order.ok());
    auto parsed = proto::ParseMessage<proto::WipeOrder>(proto::AsView(*order));
    ASSERT_TRUE(parsed.ok());
    const SessionPlan back = PlanFromOrder(parsed->root());
    EXPECT_EQ(back.node_name, plan->node_name);
    EXPECT_EQ(back.session_id, plan->session_id);
    EXPECT_EQ(back.seed, plan->seed);
    ASSERT_EQ(back.devices.size(), plan->devices.size());
    EXPECT_EQ(back.devices[1].selector, plan->devices[1].selector);
    EXPECT_EQ(back.devices[1].label_count, plan->devices[1].label_count);
    EXPECT_EQ(back.profile.endorsement.signed_parameters != nullptr, profile.endorsement.signed_parameters != nullptr);
    capnp::MallocMessageBuilder second;
    WriteOrder(back, challenger, second.initRoot<proto::WipeOrder>());
    auto again = proto::EncodeCanonical(second.getRoot<proto::WipeOrder>().asReader());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *order) << "profile " << profile.name;
  }
}

// The order's sessionTimeoutUs does not disclose R (docs/protocol.md "The session timeout"): it is
// computed for a secret R' uniform in [R, 2R]. Over seeded random plans, the R' an agent solves from
// the order's other fields is consistent with every R in [ceil(R'/2), R'], and at least two plans with
// different R give the very same timeout; every draw still exceeds the longest honest session.
TEST(PlanTest, TheSessionTimeoutDoesNotDiscloseTheRounds) {
  std::mt19937_64 rng(20261203);
  int padded = 0, upper_half = 0;  // trials with R' > R, and with R' > 3R/2
  for (int trial = 0; trial < 200; ++trial) {
    SessionPlan plan;
    plan.fill_deadline_us = 1'000'000 + rng() % 600'000'000;
    plan.wave.wave_fill_deadline_us = rng() % 2 == 0 ? 0 : plan.fill_deadline_us + rng() % 60'000'000;
    plan.profile.round_deadline_us = 1'000 + rng() % 2'000'000;
    plan.profile.rounds = static_cast<uint32_t>(2 + rng() % 5'000);
    SetHoldingSchedule(&plan, std::max(plan.fill_deadline_us, plan.wave.wave_fill_deadline_us));
    const uint32_t r = plan.profile.rounds;
    // The honest session's longest length is SessionTimeoutUs for R itself.
    const uint64_t honest = SessionTimeoutUs(plan, r);
    EXPECT_GE(plan.session_timeout_us, honest) << "trial " << trial;
    EXPECT_LE(plan.session_timeout_us, SessionTimeoutUs(plan, 2 * r)) << "trial " << trial;
    // What an agent knowing every other input solves: R' = (timeout - SessionTimeoutUs(plan, 0)) / 2W.
    const uint64_t per_round = 2 * RoundWaitLimitUs(plan.profile.round_deadline_us);
    const uint64_t base = SessionTimeoutUs(plan, 0);
    ASSERT_EQ((plan.session_timeout_us - base) % per_round, 0u);
    const uint64_t solved = (plan.session_timeout_us - base) / per_round;
    EXPECT_GE(solved, r);
    EXPECT_LE(solved, 2u * r);
    padded += solved > r;
    upper_half += 2 * solved > 3u * r;
    // Every R in [ceil(R'/2), R'] draws this R' with the same chance: R is not a function of the order.
    const uint32_t low = static_cast<uint32_t>((solved + 1) / 2), high = static_cast<uint32_t>(solved);
    ASSERT_LT(low, high) << "trial " << trial << ": only one R fits R' = " << solved;
    for (uint32_t other : {low, high}) {
      SessionPlan twin = plan;
      twin.profile.rounds = other;
      EXPECT_EQ(SessionTimeoutUs(twin, TimeoutRoundsFor(other, solved - other)), plan.session_timeout_us)
          << "trial " << trial << ": R = " << other << " cannot give the same order";
    }
  }
  // R' is drawn, not R itself: R' = R has chance 1/(R + 1) <= 1/3 per trial, R' > 3R/2 about 1/2.
  // For these R (2 to 5001) fewer than 80 of 200 padded, or 40 in the upper half, lies over 8
  // standard deviations below the mean.
  EXPECT_GE(padded, 80);
  EXPECT_GE(upper_half, 40);
  // TimeoutRoundsFor covers [R, 2R] and nothing else.
  EXPECT_EQ(TimeoutRoundsFor(16, 0), 16u);
  EXPECT_EQ(TimeoutRoundsFor(16, 16), 32u);
  EXPECT_EQ(TimeoutRoundsFor(16, 17), 16u);
  EXPECT_EQ(TimeoutRoundsFor(16, UINT64_MAX), 16u + UINT64_MAX % 17);
  EXPECT_EQ(TimeoutRoundsFor(0, 12345), 0u);
  // The CSPRNG's draws vary: 64 draws for R = 16 all equal has probability 17^-63.
  std::set<uint32_t> drawn;
  for (int i = 0; i < 64; ++i) {
    const uint32_t d = DrawTimeoutRounds(16);
    EXPECT_GE(d, 16u);
    EXPECT_LE(d, 32u);
    drawn.insert(d);
  }
  EXPECT_GT(drawn.size(), 1u);
}

TEST(PlanTest, WaveContext) {
  Inventory inv = testing::TestInventory();
  WaveContext lone = LoneSessionWaveContext(inv, "node-a");
  EXPECT_EQ(lone.name, "wave-1");
  EXPECT_TRUE(lone.declared_complete);
  EXPECT_EQ(lone.wave_nodes, 2u);
  EXPECT_FALSE(lone.whole_wave_in_session);
  inv.waves[0].nodes = {"node-a"};
  EXPECT_TRUE(LoneSessionWaveContext(inv, "node-a").whole_wave_in_session);
  EXPECT_TRUE(LoneSessionWaveContext(inv, "node-b").name.empty());
}

std::vector<ChallengeRange> Ranges() {
  return {{0, 64 * kM, 32, 4}, {64 * kM, 96 * kM, 96, 12}, {160 * kM, 7 * kM, 1, 0}};
}

TEST(ChallengeTest, ProofThenHoldingBatchesOfDistinctChunksInRange) {
  auto set = GenerateChallenges(Ranges(), 50, 7, kM);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->proof_batches(), 50u);
  EXPECT_EQ(set->batches(), 57u);
  EXPECT_EQ(set->devices(), 3u);
  std::vector<std::set<uint64_t>> proof_chunks(3);
  for (size_t d = 0; d < 3; ++d) {
    const ChallengeRange range = Ranges()[d];
    for (uint32_t b = 0; b < 57; ++b) {
      const auto idx = set->Indices(d, b);
      ASSERT_EQ(idx.size(), b < 50 ? range.labels_per_round : range.hold_labels) << "device " << d << " batch " << b;
      std::set<uint64_t> chunks;
      for (uint64_t g : idx) {
        EXPECT_GE(g, range.first_label);
        EXPECT_LT(g, range.first_label + range.label_count);
        chunks.insert(g / kM);
        if (b < 50) proof_chunks[d].insert(g / kM);
      }
      EXPECT_EQ(chunks.size(), idx.size()) << "batch " << b << " device " << d << ": a chunk repeats";
    }
  }
  // q = all 96 chunks: every proof batch covers the whole device.
  EXPECT_EQ(proof_chunks[1].size(), 96u);
  EXPECT_EQ(set->Indices(1, 0).size(), 96u);
  EXPECT_EQ(proof_chunks[0].size(), 64u);  // 50 batches of 32 of 64 chunks: all seen (p(miss) ~ 2^-50 each)
}

TEST(ChallengeTest, RanksAreSpreadOverTheChunk) {
  auto set = GenerateChallenges({{0, 4 * kM, 4, 0}}, 200, 0, kM);
  ASSERT_TRUE(set.ok());
  std::set<uint64_t> ranks;
  for (uint32_t b = 0; b < 200; ++b) {
    for (uint64_t g : set->Indices(0, b)) ranks.insert(g % kM);
  }
  EXPECT_GT(ranks.size(), kM * 3 / 4);  // 800 draws over 64 ranks
}

TEST(ChallengeTest, TwoSessionsDrawDifferentIndices) {
  auto a = GenerateChallenges(Ranges(), 4, 2, kM);
  auto b = GenerateChallenges(Ranges(), 4, 2, kM);
  ASSERT_TRUE(a.ok() && b.ok());
  bool differ = false;
  auto values = [](ChallengeSet::Batch batch) { return std::vector<uint64_t>(batch.begin(), batch.end()); };
  for (uint32_t r = 0; r < 6; ++r) differ = differ || values(a->Indices(0, r)) != values(b->Indices(0, r));
  EXPECT_TRUE(differ);
}

TEST(ChallengeTest, Errors) {
  EXPECT_FALSE(GenerateChallenges({{0, 4 * kM, 5, 1}}, 1, 0, kM).ok());  // more than its chunks
  EXPECT_FALSE(GenerateChallenges({{0, 4 * kM, 0, 0}}, 1, 0, kM).ok());
  EXPECT_FALSE(GenerateChallenges({{0, 0, 1, 1}}, 1, 0, kM).ok());
  EXPECT_FALSE(GenerateChallenges({}, 1, 0, kM).ok());
  EXPECT_FALSE(GenerateChallenges({{0, 4 * kM, 2, 3}}, 1, 1, kM).ok());  // holding above proof
  EXPECT_FALSE(GenerateChallenges({{0, 4 * kM, 2, 2}}, 1, 1, kM).ok());  // holding as large as proof
  // A device without holding rounds (q_d = 1 leaves no smaller size): its holding batches are empty.
  auto none = GenerateChallenges({{0, 4 * kM, 1, 0}}, 1, 2, kM);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->batches(), 3u);
  EXPECT_EQ(none->Indices(0, 0).size(), 1u);
  EXPECT_TRUE(none->Indices(0, 1).empty());
  EXPECT_TRUE(none->Indices(0, 2).empty());
  EXPECT_FALSE(GenerateChallenges({{0, 4 * kM, 2, 1}}, 1, 0, 0).ok());  // m == 0
  EXPECT_TRUE(GenerateChallenges({{0, 4 * kM, 2, 0}}, 1, 0, kM).ok());
}

TEST(ChallengeTest, UniformBelowStaysBelow) {
  for (uint64_t bound : {uint64_t{1}, uint64_t{2}, uint64_t{1} << 32, (uint64_t{1} << 33) + 7, UINT64_MAX}) {
    for (int i = 0; i < 100; ++i) EXPECT_LT(UniformBelow(bound), bound);
  }
}

TEST(ExpectedLabelsTest, MatchTheRegionLabeler) {
  const std::vector<ChallengeRange> ranges = {{0, 16 * kM, 8, 2}, {16 * kM, 8 * kM, 8, 1}};
  auto set = GenerateChallenges(ranges, 6, 3, kM);
  ASSERT_TRUE(set.ok());
  ExpectedLabelsSpec spec;
  for (int i = 0; i < kSeedBytes; ++i) spec.session.seed[i] = static_cast<uint8_t>(i * 7);
  spec.session.chunk_labels = kM;
  spec.devices = ranges;
  spec.threads = 2;
  // The precompute's progress: rising counts of labels over both devices, ending at all of them.
  std::vector<std::pair<uint64_t, uint64_t>> progress;
  spec.progress = [&progress](uint64_t done, uint64_t total) { progress.emplace_back(done, total); };
  auto expected = ExpectedLabels::Start(spec, *set);
  ASSERT_TRUE(expected->Wait().ok());
  EXPECT_TRUE(expected->ready());
  uint64_t all_indices = 0;
  for (size_t d = 0; d < 2; ++d) {
    for (uint32_t b = 0; b < 9; ++b) all_indices += set->Indices(d, b).size();
  }
  ASSERT_GE(progress.size(), 2u);  // at least one unit per device
  for (size_t k = 0; k < progress.size(); ++k) {
    EXPECT_EQ(progress[k].second, all_indices);
    if (k > 0) EXPECT_GT(progress[k].first, progress[k - 1].first);
  }
  EXPECT_EQ(progress.back().first, all_indices);
  RegionSpec region = spec.session;
  region.first = 0;
  region.count = 24 * kM;
  std::vector<uint8_t> all(region.count * 32);
  ASSERT_TRUE(LabelRegion(region, all.data()).ok());
  for (size_t d = 0; d < 2; ++d) {
    for (uint32_t b = 0; b < 9; ++b) {
      size_t at = 0;
      for (uint64_t g : set->Indices(d, b)) {
        EXPECT_EQ(0, std::memcmp(expected->Batch(d, b) + at, all.data() + g * 32, 32))
            << "device " << d << " batch " << b << " label " << g;
        at += 32;
      }
    }
  }
}

// With occupancy batches, Wait() covers the proof and holding batches and LookaheadBatches()
// occupancy batches; the rest are computed only as the session asks for them (AskFor), in order,
// and match the region labeler like the others.
TEST(ExpectedLabelsTest, OccupancyBatchesAreComputedAsTheSessionAsks) {
  const std::vector<ChallengeRange> ranges = {{0, 16 * kM, 8, 2, 3}, {16 * kM, 8 * kM, 8, 1, 1}};
  constexpr uint32_t kOccupancy = 300;
  auto set = GenerateChallenges(ranges, 6, 3, kM, kOccupancy);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_EQ(set->first_occupancy_batch(), 9u);
  ExpectedLabelsSpec spec;
  for (int i = 0; i < kSeedBytes; ++i) spec.session.seed[i] = static_cast<uint8_t>(i * 5 + 1);
  spec.session.chunk_labels = kM;
  spec.devices = ranges;
  spec.threads = 2;
  uint64_t first_phase_total = 0;
  spec.progress = [&first_phase_total](uint64_t, uint64_t total) { first_phase_total = total; };
  // The second phase yields to the session's timed rounds: a thread fewer, a higher nice value.
  std::atomic<int> second_phase_threads{0}, second_phase_nice{-100};
  spec.second_phase_started = [&](int threads) {
    second_phase_threads = threads;
    second_phase_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
  };
  errno = 0;
  const int session_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
  ASSERT_EQ(errno, 0);
  auto expected = ExpectedLabels::Start(spec, *set);
  ASSERT_TRUE(expected->Wait().ok());
  // 2 threads: a work unit is 64 chunks; the device with 1 label per batch makes a group 64 batches.
  ASSERT_EQ(expected->LookaheadBatches(), 128u);
  const uint32_t first_phase_end = 9 + 128;
  uint64_t labels = 0;
  for (size_t d = 0; d < 2; ++d) {
    for (uint32_t b = 0; b < first_phase_end; ++b) labels += set->Indices(d, b).size();
  }
  EXPECT_EQ(first_phase_total, labels);
  EXPECT_TRUE(expected->BatchReady(first_phase_end - 1));
  // Nothing asked yet: the worker waits (it computes past the first phase only when asked).
  EXPECT_FALSE(expected->BatchReady(first_phase_end));
  EXPECT_FALSE(expected->BatchReady(set->batches() - 1));
  for (uint32_t b = set->first_occupancy_batch(); b < set->batches(); ++b) {
    expected->AskFor(b);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);  // a hang guard only
    while (!expected->BatchReady(b) && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_TRUE(expected->BatchReady(b)) << "batch " << b;
  }
  EXPECT_TRUE(expected->WorkerStatus().ok());
  EXPECT_EQ(second_phase_threads.load(), 1);
  EXPECT_EQ(second_phase_nice.load(), std::min(19, session_nice + kSecondPhaseNiceIncrement));
  EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid))), session_nice);  // the session's own
  RegionSpec region = spec.session;
  region.first = 0;
  region.count = 24 * kM;
  std::vector<uint8_t> all(region.count * 32);
  ASSERT_TRUE(LabelRegion(region, all.data()).ok());
  for (size_t d = 0; d < 2; ++d) {
    for (uint32_t b = 0; b < set->batches(); ++b) {
      size_t at = 0;
      for (uint64_t g : set->Indices(d, b)) {
        ASSERT_EQ(0, std::memcmp(expected->Batch(d, b) + at, all.data() + g * 32, 32))
            << "device " << d << " batch " << b << " label " << g;
        at += 32;
      }
    }
  }
}

// A session that ends while its worker waits for asks: the destructor wakes and joins it.
TEST(ExpectedLabelsTest, DestructorEndsAWorkerWaitingForAsks) {
  const std::vector<ChallengeRange> ranges = {{0, 16 * kM, 8, 2, 1}};
  auto set = GenerateChallenges(ranges, 2, 1, kM, 1000);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ExpectedLabelsSpec spec;
  spec.session.chunk_labels = kM;
  spec.devices = ranges;
  spec.threads = 1;
  auto expected = ExpectedLabels::Start(spec, *set);
  ASSERT_TRUE(expected->Wait().ok());
  expected->AskFor(set->batches() - 1);  // everything wanted: the worker is busy or done
  expected.reset();
  auto idle = ExpectedLabels::Start(spec, *set);
  ASSERT_TRUE(idle->Wait().ok());
  EXPECT_FALSE(idle->BatchReady(set->batches() - 1));
  idle.reset();  // returns: the worker waited for an ask
}

TEST(ExpectedLabelsTest, DestructorCancels) {
  auto set = GenerateChallenges({{0, 4096 * 4096, 64, 8}}, 64, 16, 4096);
  ASSERT_TRUE(set.ok());
  ExpectedLabelsSpec spec;
  spec.session.chunk_labels = 4096;
  spec.devices = {{0, 4096 * 4096, 64, 8}};
  spec.threads = 1;
  auto expected = ExpectedLabels::Start(spec, *set);
  expected.reset();  // returns after at most one batch, not after all 4096 chunks
  SUCCEED();
}

}  // namespace
}  // namespace wipeproof
