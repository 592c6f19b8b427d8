// The lane replay (kernels/gpu/lane_replay.h) against a brute-force count taken from the kernel's
// own item loop (TeamRunStep with an observer that counts each item's hashes), and against the
// figures issue 12 replayed for the kernel before v2 (one loop per op, the shared-scratch layout).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/gpu/lane_replay.h"
#include "kernels/gpu/session_constants.h"
#include "kernels/gpu/team_executor.h"
#include "tests/support/gpu_test_util.h"

namespace wipeproof {
namespace gpu {
namespace {

// Counts each item's hashes (one Write per hash; the teams here work in place, so no output op
// copies a label). The counts do not depend on the labels: nothing is hashed.
struct HashCounter {
  static constexpr bool kAddressesOnly = true;
  std::vector<uint32_t>* counts;
  void Read(uint64_t /*item*/, const uint32_t* /*label*/) const {}
  void Write(uint64_t item, const uint32_t* /*label*/) const {
    if (item >= counts->size()) counts->resize(item + 1, 0);
    ++(*counts)[item];
  }
};

struct Brute {
  double useful = 0, warp_compressions = 0, critical_path = 0;
  uint64_t iterations = 0;
};

// Runs one team of G threads and C chunks of a c1 region through TeamRunStep and counts, per step,
// each warp's loop iterations (warps of 32 and of 64 lanes): an iteration issues the most hashes
// any of its lanes' items needs.
std::vector<Brute> BruteForce(uint32_t m, uint32_t G, uint32_t C, const std::vector<uint32_t>& widths) {
  const RegionSpec spec = testing::Spec(LabelFormat::kC1, m, 0, static_cast<uint64_t>(m) * C);
  const DeviceProgram program = BuildDeviceProgram(m, m);
  std::vector<uint32_t> region(spec.count * 8 + 8), extra(static_cast<size_t>(C) * program.work_labels * 8 + 8);
  std::vector<uint32_t> shared(FillSharedBytes(C) / 4);
  uint64_t slot_begin[2] = {0, spec.count}, base[1] = {reinterpret_cast<uint64_t>(region.data())};
  // One in-place team over the region, described as the fill planner describes its teams.
  const SlotMap slots({{region.data(), spec.count * 32}});
  const RegionChunks rc = DescribeRegion(false, m, 0, spec.count);
  const TeamDesc desc = TeamDescFor({0, C, false, 0}, rc, slots, m, reinterpret_cast<uint64_t>(extra.data()));
  FillWaveArgs a;
  a.session = BuildSessionConstants(spec.format, spec.seed, m, m);
  a.graph[0].program = program.words.data();
  a.graph[0].step_begin = program.step_begin.data();
  a.graph[0].steps = program.steps;
  a.region_count = spec.count;
  a.teams = &desc;
  a.team_count = 1;
  a.max_team_chunks = C;
  a.slots = {slot_begin, base, 1};
  const Team team = MakeTeam(a, 0, shared.data(), 0);
  for (uint32_t t = 0; t < G; ++t) TeamPrologue(a, 0, team, t, G);
  std::vector<Brute> result(widths.size());
  for (uint32_t s = 0; s < program.steps; ++s) {
    std::vector<uint32_t> counts;
    for (uint32_t t = 0; t < G; ++t) TeamRunStep<kFormatC1>(a, team, s, t, G, false, HashCounter{&counts});
    for (size_t wi = 0; wi < widths.size(); ++wi) {
      const uint32_t W = widths[wi];
      Brute& b = result[wi];
      const uint32_t warps = (G + W - 1) / W;
      std::vector<double> per_warp(warps, 0);
      const uint64_t items =
          static_cast<uint64_t>(DecodeOp(program.words.data(), program.step_begin[s + 1] - 1).unit_end) * C;
      for (uint64_t j = 0; j * G < items; ++j) {
        for (uint32_t w = 0; w < warps; ++w) {
          uint32_t most = 0;
          bool any = false;
          for (uint32_t lane = w * W; lane < std::min(G, (w + 1) * W); ++lane) {
            const uint64_t k = j * G + lane;
            if (k >= items) continue;
            any = true;
            const uint32_t n = k < counts.size() ? counts[k] : 0;
            most = std::max(most, n);
            b.useful += n;
          }
          if (!any) continue;
          ++b.iterations;
          b.warp_compressions += most;
          per_warp[w] += most;
        }
      }
      b.critical_path += *std::max_element(per_warp.begin(), per_warp.end());
    }
  }
  return result;
}

TEST(LaneReplay, EqualsABruteForceCountOfTheKernelsItemLoop) {
  const std::vector<uint32_t> widths = {32, 64};
  for (uint32_t m : {17u, 1000u, 4096u}) {
    for (uint32_t G : {7u, 48u, 64u}) {
      for (uint32_t C : {1u, 3u, 8u}) {
        if (m == 4096 && (G != 48 || C != 3)) continue;  // one shape at 4096: the emulation hashes every node
        const std::vector<Brute> brute = BruteForce(m, G, C, widths);
        for (size_t wi = 0; wi < widths.size(); ++wi) {
          const uint32_t W = widths[wi];
          const Brute& b = brute[wi];
          ReplayShape shape;
          shape.team_threads = G;
          shape.chunks = C;
          shape.warp_width = W;
          const ReplayResult r = ReplayTeam(BuildDeviceProgram(m, m), shape, ReplayCost());
          EXPECT_EQ(r.useful_compressions, b.useful) << "m=" << m << " G=" << G << " C=" << C << " W=" << W;
          EXPECT_EQ(r.warp_compressions, b.warp_compressions) << "m=" << m << " G=" << G << " C=" << C << " W=" << W;
          EXPECT_EQ(r.critical_path_compressions, b.critical_path) << "m=" << m << " G=" << G << " C=" << C;
          EXPECT_EQ(r.warp_iterations, b.iterations) << "m=" << m << " G=" << G << " C=" << C << " W=" << W;
        }
      }
    }
  }
}

// Issue 12's replay of the kernel before v2 (one loop per op, copies sharing one scratch), at
// m = 2^14: 0.873 with 8 threads per chunk; and the pooled loop on the work layout at the new
// default (teams of 64 threads, 16 chunks).
TEST(LaneReplay, ReproducesIssue12sFiguresAndThePooledLoopsGain) {
  const uint32_t m = 1u << 14;
  const DeviceProgram before = BuildDeviceProgram(m, m, true, ProgramLayout::kSharedScratch);
  const DeviceProgram after = BuildDeviceProgram(m, m);
  ReplayShape old_shape;
  old_shape.team_threads = 64;
  old_shape.chunks = 8;
  old_shape.pooled = false;
  EXPECT_NEAR(ReplayTeam(before, old_shape, ReplayCost()).lane_use(), 0.873, 0.0005);
  ReplayShape pooled = old_shape;
  pooled.pooled = true;
  EXPECT_NEAR(ReplayTeam(before, pooled, ReplayCost()).lane_use(), 0.942, 0.0005);
  EXPECT_NEAR(ReplayTeam(after, pooled, ReplayCost()).lane_use(), 0.980, 0.0005);
  pooled.chunks = 16;
  const ReplayResult now = ReplayTeam(after, pooled, ReplayCost());
  EXPECT_NEAR(now.lane_use(), 0.996, 0.0005);
  EXPECT_EQ(now.steps, 49137u);
  // 192: two compressions per node hash with every block 0 cached, three with none.
  ReplayCost cached, none;
  cached.format = none.format = 1;
  cached.cv0_nodes = after.nodes;
  EXPECT_EQ(ReplayTeam(after, pooled, cached).useful_compressions, 2 * now.useful_compressions);
  EXPECT_EQ(ReplayTeam(after, pooled, none).useful_compressions, 3 * now.useful_compressions);
  EXPECT_EQ(now.useful_compressions, 16.0 * after.nodes);
}

}  // namespace
}  // namespace gpu
}  // namespace wipeproof
