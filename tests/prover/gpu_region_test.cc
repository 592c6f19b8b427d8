// DeviceRegion (the GPU backends' acquisition, fill waves and lookup) on the CPU-emulated runtime:
// the same driver code the CUDA and HIP backends run, with allocations that back off (and refuse
// managed or compressible memory), regions that cross allocation boundaries, partial chunks,
// in-place labelling with nothing outside the side scratch, the 192 deferred chunks, lookups of
// every slot kind, failures and release.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>

#include "kernels/chunk_verifier.h"
#include "kernels/gpu/device_program.h"
#include "kernels/gpu/emulated_runtime.h"
#include "prover/backends/gpu/device_region.h"
#include "tests/support/gpu_test_util.h"

namespace wipeproof {
namespace gpu {
namespace {

using testing::Reference;
using testing::Spec;

EmulatedGpuConfig SmallGpu(uint64_t total_mib = 64, uint64_t max_allocation_kib = 0) {
  EmulatedGpuConfig c;
  c.total_bytes = total_mib << 20;
  c.runtime_overhead_bytes = 1 << 20;
  c.max_allocation_bytes = max_allocation_kib << 10;
  c.multiprocessors = 2;
  return c;
}

// Small pieces, so that regions cross allocation boundaries (and a chunk's outputs span pieces).
DeviceRegionOptions Pieces(uint64_t bytes, uint64_t piece_bytes) {
  DeviceRegionOptions o;
  o.bytes = bytes;
  o.policy.max_piece_bytes = piece_bytes;
  o.policy.min_piece_bytes = 4096;
  o.policy.granularity_bytes = 4096;
  return o;
}

FillTuning SmallTuning() {
  FillTuning t;
  t.side_scratch_bytes = 1 << 20;
  return t;
}

std::vector<uint8_t> LookupRange(const DeviceRegion& region, uint64_t first, uint64_t count) {
  std::vector<uint64_t> idx(count);
  for (uint64_t i = 0; i < count; ++i) idx[i] = first + i;
  std::vector<uint8_t> out(count * 32);
  EXPECT_TRUE(region.Lookup(idx.data(), idx.size(), out.data()).ok());
  return out;
}

struct RegionCase {
  LabelFormat format;
  uint32_t m;
  uint64_t first, count;
  uint64_t piece_bytes;
};

class RegionParity : public ::testing::TestWithParam<RegionCase> {};

TEST_P(RegionParity, FillThenLookupEqualsTheCpuEngine) {
  const RegionCase c = GetParam();
  EmulatedRuntime runtime(SmallGpu());
  const RegionSpec spec = Spec(c.format, c.m, c.first, c.count);
  // Room for the plan plus a little that the fill must not touch.
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces((c.count + 100) * 32, c.piece_bytes));
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  FillStats stats;
  uint64_t last_progress = 0;
  FillControl control;
  control.progress = [&](uint64_t done, uint64_t total) {
    EXPECT_GE(done, last_progress);
    EXPECT_EQ(total, c.count);
    last_progress = done;
  };
  Status st = (*region)->Fill(spec, SmallTuning(), control, &stats);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(last_progress, c.count);
  EXPECT_EQ(stats.labels, c.count);
  EXPECT_EQ((*region)->scratch_bytes(), 0u);
  const std::vector<uint8_t> want = Reference(spec);
  const std::vector<uint8_t> got = LookupRange(**region, c.first, c.count);
  for (uint64_t i = 0; i < c.count; ++i) {
    ASSERT_EQ(0, std::memcmp(want.data() + i * 32, got.data() + i * 32, 32))
        << "first differing label " << c.first + i << "\n"
        << stats.plan;
  }
  (*region)->Release();
  EXPECT_EQ(runtime.live_allocations(), 0);
  EXPECT_EQ(runtime.live_mapped_host(), 0);
  EXPECT_EQ(runtime.live_lookup_queues(), 0);
}

// A fill of more teams per launch than fit (FillTuning::teams_per_slot) labels the same bytes, in
// place, and lookups find them, both formats.
TEST(DeviceRegion, MoreTeamsPerSlotLabelTheSameBytes) {
  for (const LabelFormat format : {LabelFormat::kC1, LabelFormat::k192}) {
    EmulatedRuntime runtime(SmallGpu());
    const RegionSpec spec = Spec(format, 256, 77, 256 * 80);
    auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(spec.count * 32, 96 << 10));
    ASSERT_TRUE(region.ok());
    FillTuning t = SmallTuning();
    t.teams_per_slot = 3;
    FillStats stats;
    ASSERT_TRUE((*region)->Fill(spec, t, {}, &stats).ok());
    EXPECT_EQ(Reference(spec), LookupRange(**region, spec.first, spec.count)) << stats.plan;
  }
}

// A fill while a started lookup is not finished is refused (its kernel reads the placement tables
// and the labels the fill would free and overwrite); once finished, the fill runs.
TEST(DeviceRegion, AFillWaitsForNoStartedLookup) {
  EmulatedRuntime runtime(SmallGpu());
  const RegionSpec spec = Spec(LabelFormat::kC1, 256, 0, 256 * 16);
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(spec.count * 32, 64 << 10));
  ASSERT_TRUE(region.ok());
  ASSERT_TRUE((*region)->Fill(spec, SmallTuning(), {}, nullptr).ok());
  const uint64_t idx[2] = {3, 4000};
  std::vector<uint8_t> out(64);
  ASSERT_TRUE((*region)->StartLookup(idx, 2, out.data()).ok());
  const uint64_t tables = runtime.allocated_bytes();
  const Status refill = (*region)->Fill(spec, SmallTuning(), {}, nullptr);
  EXPECT_EQ(refill.code(), StatusCode::kFailedPrecondition) << refill.ToString();
  EXPECT_EQ(runtime.allocated_bytes(), tables) << "the refused fill freed something";
  ASSERT_TRUE((*region)->FinishLookup().ok());
  const std::vector<uint8_t> want = Reference(spec);
  EXPECT_EQ(0, std::memcmp(out.data(), want.data() + 3 * 32, 32));
  EXPECT_EQ(0, std::memcmp(out.data() + 32, want.data() + 4000 * 32, 32));
  EXPECT_TRUE((*region)->Fill(spec, SmallTuning(), {}, nullptr).ok());
  EXPECT_EQ(want, LookupRange(**region, spec.first, spec.count));
}

// The runtime runs the two lookup shapes (1 and 8 threads a label) to the same bytes and refuses
// any other shape before it touches a buffer.
TEST(RuntimeLookup, RunsBothShapesAndRefusesOthers) {
  EmulatedRuntime runtime(SmallGpu());
  void* queue = nullptr;
  ASSERT_TRUE(runtime.CreateLookupQueue(0, &queue).ok());
  std::vector<uint32_t> table(64);
  for (uint32_t i = 0; i < table.size(); ++i) table[i] = i * 2654435761u;
  const uint64_t addresses[4] = {reinterpret_cast<uint64_t>(&table[12]), reinterpret_cast<uint64_t>(&table[0]),
                                 reinterpret_cast<uint64_t>(&table[60]), reinterpret_cast<uint64_t>(&table[32])};
  std::vector<uint32_t> out(16, 0);
  LookupArgs args;
  args.addresses = addresses;
  args.out = out.data();
  args.n = 2;
  for (uint32_t threads : {1u, 8u}) {
    std::fill(out.begin(), out.end(), 0);
    args.threads_per_label = threads;
    ASSERT_TRUE(runtime.RunLookup(0, args, queue).ok()) << threads;
    const uint32_t want[16] = {table[12], table[13], table[14], table[15], table[0],  table[1],  table[2],  table[3],
                               table[60], table[61], table[62], table[63], table[32], table[33], table[34], table[35]};
    EXPECT_TRUE(std::equal(out.begin(), out.end(), want)) << threads << " threads a label";
  }
  for (uint32_t threads : {0u, 2u, 3u, 16u}) {
    std::fill(out.begin(), out.end(), 7);
    args.threads_per_label = threads;
    const Status st = runtime.LaunchLookup(0, args, queue);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << threads;
    EXPECT_NE(st.message().find("threads a label"), std::string::npos) << st.ToString();
    EXPECT_EQ(out, std::vector<uint32_t>(16, 7)) << "a refused lookup wrote labels";
  }
  runtime.DestroyLookupQueue(0, queue);
}

// StartLookup/FinishLookup (the agent's round path): the labels land at FinishLookup; one lookup
// at a time per region; two regions' lookups, started together, overlap on the device (each its
// own queue); a region released with a lookup started waits for it and frees its queue.
TEST(RegionLookup, StartedLookupsOfTwoRegionsOverlapAndOneAtATimePerRegion) {
  EmulatedGpuConfig config = SmallGpu();
  config.lookup_latency_us = 100'000;
  EmulatedRuntime runtime(config);
  const RegionSpec first = Spec(LabelFormat::kC1, 64, 0, 4096);
  const RegionSpec second = Spec(LabelFormat::kC1, 64, 4096, 4096);
  auto a = DeviceRegion::Acquire(&runtime, 0, Pieces(4096 * 32, 1 << 20));
  auto b = DeviceRegion::Acquire(&runtime, 0, Pieces(4096 * 32, 1 << 20));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(runtime.live_lookup_queues(), 2);
  ASSERT_TRUE((*a)->Fill(first, SmallTuning(), {}, nullptr).ok());
  ASSERT_TRUE((*b)->Fill(second, SmallTuning(), {}, nullptr).ok());

  const uint64_t ia[2] = {5, 4095}, ib[2] = {4096, 8000};
  std::vector<uint8_t> out_a(64, 0), out_b(64, 0);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE((*a)->StartLookup(ia, 2, out_a.data()).ok());
  ASSERT_TRUE((*b)->StartLookup(ib, 2, out_b.data()).ok());
  // One lookup at a time per region.
  std::vector<uint8_t> more(32);
  EXPECT_EQ((*a)->StartLookup(ia, 1, more.data()).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*a)->Lookup(ia, 1, more.data()).code(), StatusCode::kFailedPrecondition);
  // Both were in flight at once (StartLookup did not wait for its lookup).
  EXPECT_EQ(runtime.max_lookups_in_flight(), 2) << "the two lookups did not overlap";
  ASSERT_TRUE((*a)->FinishLookup().ok());
  ASSERT_TRUE((*b)->FinishLookup().ok());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::microseconds(config.lookup_latency_us));
  const std::vector<uint8_t> want_a = Reference(first), want_b = Reference(second);
  EXPECT_EQ(0, std::memcmp(out_a.data(), want_a.data() + 5 * 32, 32));
  EXPECT_EQ(0, std::memcmp(out_a.data() + 32, want_a.data() + 4095 * 32, 32));
  EXPECT_EQ(0, std::memcmp(out_b.data(), want_b.data(), 32));
  EXPECT_EQ(0, std::memcmp(out_b.data() + 32, want_b.data() + (8000 - 4096) * 32, 32));
  // Finishing again is a no-op; an index outside the region is refused at the start.
  EXPECT_TRUE((*a)->FinishLookup().ok());
  const uint64_t outside = 4096;
  EXPECT_EQ((*a)->StartLookup(&outside, 1, more.data()).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE((*a)->FinishLookup().ok());

  // Released with a lookup started: it is waited for, then everything is freed.
  ASSERT_TRUE((*b)->StartLookup(ib, 2, out_b.data()).ok());
  (*b)->Release();
  (*a)->Release();
  EXPECT_EQ(runtime.live_lookup_queues(), 0);
  EXPECT_EQ(runtime.live_mapped_host(), 0);
  EXPECT_EQ(runtime.live_allocations(), 0);
}

// A lookup started and then overtaken by Release: FinishLookup must not report labels it never
// copied (device_region.h: FAILED_PRECONDITION, as Lookup after Release).
TEST(RegionLookup, FinishLookupAfterReleaseIsNotOk) {
  EmulatedRuntime runtime(SmallGpu());
  const RegionSpec spec = Spec(LabelFormat::kC1, 64, 0, 4096);
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(4096 * 32, 1 << 20));
  ASSERT_TRUE(region.ok());
  ASSERT_TRUE((*region)->Fill(spec, SmallTuning(), {}, nullptr).ok());
  const uint64_t indices[2] = {5, 4095};
  std::vector<uint8_t> out(64, 0);
  ASSERT_TRUE((*region)->StartLookup(indices, 2, out.data()).ok());
  (*region)->Release();
  const Status finished = (*region)->FinishLookup();
  EXPECT_FALSE(finished.ok()) << "FinishLookup reported OK, yet no label was copied: out is still "
                              << (std::all_of(out.begin(), out.end(), [](uint8_t b) { return b == 0; }) ? "all zero"
                                                                                                      : "something");
}

INSTANTIATE_TEST_SUITE_P(Cases, RegionParity,
                         ::testing::Values(RegionCase{LabelFormat::kC1, 1, 3, 50, 4096},
                                           RegionCase{LabelFormat::k192, 1, 3, 50, 4096},
                                           RegionCase{LabelFormat::kC1, 3, 2, 100, 4096},
                                           RegionCase{LabelFormat::k192, 3, 0, 101, 4096},
                                           RegionCase{LabelFormat::kC1, 1000, 500, 20000, 8192},
                                           RegionCase{LabelFormat::k192, 1000, 2000, 20500, 12288},
                                           RegionCase{LabelFormat::kC1, 4096, 4096 * 5 + 1, 4096 * 6, 40960},
                                           RegionCase{LabelFormat::k192, 4096, 4096 * 2, 4096 * 5 + 77, 65536}));

// Whole chunks of a power-of-two m are labelled in their own slots: the only memory outside the
// plan's label slots is the side scratch (programs, tables, the partial chunks' work labels),
// measured by the runtime's own allocation counter, and nothing of it is left after the fill but
// the lookup's placement tables: the layout's runs and the slot map (16-byte aligned parts).
// threat-model: T-SCRATCH
TEST(DeviceRegion, WholeChunksInPlaceUseNoScratchBeyondTheSideScratch) {
  EmulatedRuntime runtime(SmallGpu(96));
  const uint32_t m = 256;
  const RegionSpec spec = Spec(LabelFormat::kC1, m, m * 3 + 17, m * 300);  // partial chunks at both ends
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(spec.count * 32, 256 * 1024));
  ASSERT_TRUE(region.ok());
  const uint64_t pieces = runtime.allocated_bytes();
  FillStats stats;
  ASSERT_TRUE((*region)->Fill(spec, SmallTuning(), {}, &stats).ok());
  EXPECT_EQ(runtime.peak_allocated_bytes() - pieces, stats.bytes_outside_label_slots_peak);
  EXPECT_EQ(stats.bytes_outside_label_slots_peak, stats.side_scratch_bytes);
  EXPECT_EQ(stats.region_scratch_peak_bytes, 0u);
  EXPECT_EQ(stats.partial_chunks, 2u);
  // Programs and tables plus two chunks' work labels (8 KiB each), well under the 1 MiB cap.
  EXPECT_LT(stats.side_scratch_bytes, 256u * 1024) << stats.plan;
  // The side scratch is gone; the placement tables stay, and are exactly the layout and the map.
  auto aligned = [](uint64_t b) { return (b + 15) / 16 * 16; };
  const uint64_t slot_pieces = (*region)->pieces().size();
  const uint64_t tables = aligned((*region)->layout().runs().size() * 24) + aligned((slot_pieces + 1) * 8) +
                          aligned(slot_pieces * 8) + aligned((*region)->slot_map().bucket_piece().size() * 4);
  EXPECT_EQ((*region)->lookup_tables_bytes(), tables);
  EXPECT_LT(tables, 4096u);
  EXPECT_EQ(runtime.allocated_bytes(), pieces + tables);
  EXPECT_TRUE((*region)->lookup_mode().places_on_device);
  EXPECT_EQ(stats.passes, 1u);
  EXPECT_EQ(Reference(spec), LookupRange(**region, spec.first, spec.count)) << stats.plan;
}

// Every wave of the main phase runs as many teams as the device holds (no runt wave); the chunks
// are spread evenly, so the waves' chunk counts differ by at most one team's worth.
TEST(DeviceRegion, MainWavesAreFullAndEven) {
  EmulatedRuntime runtime(SmallGpu(96));
  const RegionSpec spec = Spec(LabelFormat::kC1, 16, 0, 16 * 3000);
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(spec.count * 32, 1 << 20));
  ASSERT_TRUE(region.ok());
  FillTuning t = SmallTuning();
  t.max_chunks_per_team = 8;  // 64 resident teams x 8 = 512 chunks a wave: six waves of 500
  FillStats stats;
  ASSERT_TRUE((*region)->Fill(spec, t, {}, &stats).ok());
  ASSERT_EQ(stats.launch_log.size(), 6u) << stats.plan;
  for (const LaunchStats& l : stats.launch_log) {
    EXPECT_EQ(l.phase, "main");
    EXPECT_EQ(l.teams, 64u);
    EXPECT_EQ(l.chunks, 500u);
    EXPECT_EQ(l.team_threads, 64u);
  }
  EXPECT_EQ(stats.launch_log.back().labels_done, spec.count);
  EXPECT_EQ(Reference(spec), LookupRange(**region, 0, spec.count));
}

// 192: when the block-0 table does not fit the side scratch it sits in the top of the plan's own
// slots; the chunks there are labelled last, in their own waves, and every label is right.
TEST(DeviceRegion, Format192DefersTheChunksUnderTheBlock0Table) {
  EmulatedRuntime runtime(SmallGpu(96));
  const uint32_t m = 32;  // 1278 nodes: a 40 KiB table, over two chunks' slots
  const RegionSpec spec = Spec(LabelFormat::k192, m, m * 5, m * 400 + 7);  // and a trailing partial chunk
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(spec.count * 32, 64 * 1024));
  ASSERT_TRUE(region.ok());
  FillTuning t = SmallTuning();
  t.cv0_side_max_bytes = 32 * 100;  // the side scratch caches 100 nodes
  FillStats stats;
  ASSERT_TRUE((*region)->Fill(spec, t, {}, &stats).ok());
  EXPECT_GT(stats.deferred_chunks, 0u) << stats.plan;
  EXPECT_EQ(stats.region_scratch_peak_bytes, stats.cv0_table_nodes * 32);
  EXPECT_EQ(stats.passes, 2u);
  EXPECT_EQ(stats.launch_log.back().phase, "deferred");
  EXPECT_EQ(stats.launch_log.back().cv0_nodes, 100u);
  EXPECT_EQ(stats.launch_log.front().cv0_nodes, stats.cv0_table_nodes);
  EXPECT_EQ(Reference(spec), LookupRange(**region, spec.first, spec.count)) << stats.plan;
}

// Lookups of every kind of slot, against the CPU engine: partial chunks at both ends (natural
// layout, one of them a truncated graph), team blocks inside one piece, across one allocation
// boundary and across several (the slot-table path), teams of C and C + 1 (two layout runs).
TEST(DeviceRegion, LookupsOfEverySlotKind) {
  for (uint64_t piece : {96u * 1024, 8u * 1024, 3u * 1024}) {
    EmulatedRuntime runtime(SmallGpu(96));
    const uint32_t m = 64;
    const RegionSpec spec = Spec(LabelFormat::kC1, m, m * 9 + 5, m * 390 + 20);
    auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(spec.count * 32, piece));
    ASSERT_TRUE(region.ok());
    FillTuning t = SmallTuning();
    t.max_chunks_per_team = 7;  // 388 whole chunks over 64 teams: 4 teams of 7, 60 of 6
    FillStats stats;
    ASSERT_TRUE((*region)->Fill(spec, t, {}, &stats).ok());
    EXPECT_EQ((*region)->layout().runs().size(), 2u) << stats.plan;
    // Random order, with repeats, in batches larger than one lookup kernel takes.
    std::mt19937_64 rng(piece);
    std::vector<uint64_t> idx(spec.count + 500);
    for (uint64_t i = 0; i < idx.size(); ++i) idx[i] = spec.first + (i < spec.count ? i : rng() % spec.count);
    std::shuffle(idx.begin(), idx.end(), rng);
    std::vector<uint8_t> got(idx.size() * 32);
    ASSERT_TRUE((*region)->Lookup(idx.data(), idx.size(), got.data()).ok());
    const std::vector<uint8_t> want = Reference(spec);
    for (size_t i = 0; i < idx.size(); ++i) {
      ASSERT_EQ(0, std::memcmp(got.data() + i * 32, want.data() + (idx[i] - spec.first) * 32, 32))
          << "label " << idx[i] << " with pieces of " << piece << " bytes";
    }
  }
}

TEST(DeviceRegion, ReverseThreadOrderAndScratchTeamsGiveTheSameBytes) {
  EmulatedGpuConfig config = SmallGpu();
  config.order = EmulatedThreadOrder::kReverse;
  EmulatedRuntime runtime(config);
  const RegionSpec spec = Spec(LabelFormat::k192, 500, 250, 500 * 9 + 10);
  for (bool in_place : {true, false}) {
    auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(spec.count * 32, 8192));
    ASSERT_TRUE(region.ok());
    FillTuning t = SmallTuning();
    t.in_place = in_place;
    t.threads_per_chunk = 3;
    t.team_threads = 9;
    ASSERT_TRUE((*region)->Fill(spec, t).ok());
    EXPECT_EQ(Reference(spec), LookupRange(**region, spec.first, spec.count)) << (in_place ? "in place" : "scratch");
  }
}

// Labels must occupy physical device bytes: a runtime that reports managed or compressible memory
// gets every piece refused (and freed); one that cannot tell about compression is accepted, and
// the account says so.
// threat-model: T-MANAGED-MEMORY
TEST(DeviceRegion, RefusesManagedAndCompressibleMemory) {
  for (EmulatedMemoryKind kind : {EmulatedMemoryKind::kManaged, EmulatedMemoryKind::kCompressible}) {
    EmulatedGpuConfig config = SmallGpu();
    config.memory_kind = kind;
    EmulatedRuntime runtime(config);
    auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(4 << 20, 1 << 20));
    EXPECT_EQ(region.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(region.status().message().find(kind == EmulatedMemoryKind::kManaged ? "managed" : "compressible"),
              std::string::npos)
        << region.status().ToString();
    EXPECT_EQ(runtime.live_allocations(), 0);
    EXPECT_EQ(runtime.live_mapped_host(), 0);
    EXPECT_EQ(runtime.live_lookup_queues(), 0);
  }
  EmulatedGpuConfig config = SmallGpu();
  config.memory_kind = EmulatedMemoryKind::kUnknownCompression;
  EmulatedRuntime runtime(config);
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(4 << 20, 1 << 20));
  ASSERT_TRUE(region.ok());
  EXPECT_FALSE((*region)->memory_account().compression_checked);
}

TEST(DeviceRegion, MemoryAccountReconcilesCapacity) {
  EmulatedRuntime runtime(SmallGpu(64));  // 64 MiB, 1 MiB taken by the "context"
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(10 << 20, 1 << 20));
  ASSERT_TRUE(region.ok());
  const MemoryAccount& a = (*region)->memory_account();
  EXPECT_EQ(a.total_bytes, 64u << 20);
  EXPECT_EQ(a.context_and_others_bytes, 1u << 20);
  EXPECT_EQ(a.free_before_bytes, 63u << 20);
  EXPECT_EQ(a.acquired_bytes, 10u << 20);
  EXPECT_EQ(a.pieces, 10u);
  EXPECT_EQ(a.largest_piece_bytes, 1u << 20);
  EXPECT_EQ(a.free_after_bytes, 53u << 20);
  EXPECT_EQ(a.acquisition_overhead_bytes, 0);
  EXPECT_TRUE(a.all_pieces_device_memory);
  EXPECT_TRUE(a.compression_checked);
}

TEST(DeviceRegion, TakesAllFreeMemoryButTheReserveWithBackOff) {
  // 96 MiB device, no allocation above 5 MiB: pieces back off, and the reserve stays free.
  EmulatedRuntime runtime(SmallGpu(1024, 5 * 1024));
  DeviceRegionOptions o;
  o.reserve_bytes = 0;  // raised to kMinReserveBytes (512 MiB)
  o.policy.max_piece_bytes = 64 << 20;
  o.policy.min_piece_bytes = 1 << 20;
  o.policy.granularity_bytes = 1 << 20;
  auto region = DeviceRegion::Acquire(&runtime, 0, o);
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  EXPECT_EQ((*region)->free_after_bytes(), kMinReserveBytes);
  EXPECT_GT((*region)->pieces().size(), 50u);
  for (const auto& p : (*region)->pieces()) EXPECT_LE(p.bytes, 5u << 20);
  // A fill at a small m (emulated kernels are slow: not all of it), sampled against the verifier.
  const uint64_t count = 2048 * 24;
  const RegionSpec spec = Spec(LabelFormat::kC1, 2048, 2048 * 1000 + 7, count);
  FillTuning t;
  t.target_threads = 512;
  t.side_scratch_bytes = 8 << 20;
  FillStats stats;
  ASSERT_TRUE((*region)->Fill(spec, t, {}, &stats).ok());
  std::mt19937_64 rng(3);
  for (int i = 0; i < 6; ++i) {
    const uint64_t g = spec.first + (i == 0 ? count - 1 : rng() % count);
    auto chunk = RecomputeChunk(spec.format, spec.seed, spec.chunk_labels, g / 2048, spec.first + count);
    ASSERT_TRUE(chunk.ok());
    uint8_t got[32];
    ASSERT_TRUE((*region)->Lookup(&g, 1, got).ok());
    EXPECT_EQ(0, std::memcmp(got, chunk->labels.data() + (g % 2048) * 32, 32)) << "label " << g;
  }
}

TEST(DeviceRegion, ErrorsAreStatusesAndNothingLeaks) {
  EmulatedRuntime runtime(SmallGpu());
  {
    // More than the device has.
    auto too_big = DeviceRegion::Acquire(&runtime, 0, Pieces(200 << 20, 1 << 20));
    EXPECT_EQ(too_big.status().code(), StatusCode::kResourceExhausted);
    EXPECT_EQ(runtime.live_allocations(), 0);
  }
  {
    EmulatedGpuConfig config = SmallGpu();
    config.fail_allocation_number = 2;  // two pieces, then an error
    EmulatedRuntime failing(config);
    auto broken = DeviceRegion::Acquire(&failing, 0, Pieces(8 << 20, 1 << 20));
    EXPECT_EQ(broken.status().code(), StatusCode::kInternal);
    EXPECT_EQ(failing.live_allocations(), 0);
    EXPECT_EQ(failing.live_mapped_host(), 0);
    EXPECT_EQ(failing.live_lookup_queues(), 0);
  }
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(1 << 20, 1 << 18));
  ASSERT_TRUE(region.ok());
  uint64_t g = 5;
  uint8_t out[32];
  EXPECT_EQ((*region)->Lookup(&g, 1, out).code(), StatusCode::kFailedPrecondition);  // before a fill
  EXPECT_EQ((*region)->Fill(Spec(LabelFormat::kC1, 16, 0, (1 << 20) / 32 + 1)).code(),
            StatusCode::kInvalidArgument);  // more labels than capacity
  EXPECT_EQ((*region)->Fill(Spec(LabelFormat::kC1, 0, 0, 10)).code(), StatusCode::kInvalidArgument);
  // Cancelled: FAILED_PRECONDITION, and lookups refuse the partial fill.
  std::atomic<bool> cancel{true};
  FillControl control;
  control.cancel = &cancel;
  EXPECT_EQ((*region)->Fill(Spec(LabelFormat::kC1, 16, 0, 1000), SmallTuning(), control).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ((*region)->Lookup(&g, 1, out).code(), StatusCode::kFailedPrecondition);
  // A good fill, then an index outside it.
  ASSERT_TRUE((*region)->Fill(Spec(LabelFormat::kC1, 16, 100, 1000), SmallTuning()).ok());
  EXPECT_EQ((*region)->scratch_bytes(), 0u);
  g = 99;
  EXPECT_EQ((*region)->Lookup(&g, 1, out).code(), StatusCode::kInvalidArgument);
  g = 1100;
  EXPECT_EQ((*region)->Lookup(&g, 1, out).code(), StatusCode::kInvalidArgument);
  g = 1099;
  EXPECT_TRUE((*region)->Lookup(&g, 1, out).ok());
  (*region)->Release();
  (*region)->Release();  // idempotent
  EXPECT_EQ((*region)->Lookup(&g, 1, out).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*region)->Fill(Spec(LabelFormat::kC1, 16, 0, 10)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(runtime.live_allocations(), 0);
  EXPECT_EQ(runtime.live_mapped_host(), 0);
  EXPECT_EQ(runtime.live_lookup_queues(), 0);
}

// threat-model: T-SCRATCH
TEST(DeviceRegion, SideScratchIsFreedAfterTheFill) {
  EmulatedRuntime runtime(SmallGpu());
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(1 << 20, 256 << 10));
  ASSERT_TRUE(region.ok());
  const uint64_t before = runtime.allocated_bytes();
  EXPECT_EQ((*region)->scratch_bytes(), 0u);  // nothing outside the pieces between fills
  uint64_t during = 0;
  FillControl control;
  control.progress = [&](uint64_t, uint64_t) { during = std::max(during, (*region)->scratch_bytes()); };
  FillStats stats;
  FillTuning t = SmallTuning();
  t.max_wave_chunks = 8;  // several launches
  ASSERT_TRUE((*region)->Fill(Spec(LabelFormat::k192, 512, 0, (1 << 20) / 32), t, control, &stats).ok());
  EXPECT_GT(stats.launches, 3u);
  EXPECT_EQ(during, stats.side_scratch_bytes);
  EXPECT_LE(stats.side_scratch_bytes, SmallTuning().side_scratch_bytes);
  EXPECT_EQ((*region)->scratch_bytes(), 0u);
  EXPECT_GT((*region)->lookup_tables_bytes(), 0u);
  EXPECT_EQ(runtime.allocated_bytes(), before + (*region)->lookup_tables_bytes());
  (*region)->Release();
  EXPECT_EQ(runtime.allocated_bytes(), 0u) << "the placement tables went with the region";
}

// With the tables kept off the device (DeviceRegionOptions::lookup_places_on_device), or when the
// device has no memory left for them (their allocation, the fill's last, is RESOURCE_EXHAUSTED) or
// that allocation fails otherwise, the host places the halves: the fill succeeds, nothing stays
// outside the label slots, and lookups give the same labels, one by one (Lookup) and started
// (StartLookup).
TEST(DeviceRegion, WithoutDeviceTablesTheHostPlacesTheHalves) {
  const RegionSpec spec = Spec(LabelFormat::kC1, 256, 100, 256 * 64);
  int calls_with_tables = 0;
  for (const char* why : {"tables", "option", "no room", "allocation error"}) {
    EmulatedGpuConfig config = SmallGpu();
    DeviceRegionOptions options = Pieces(spec.count * 32, 64 << 10);
    if (std::string(why) == "option") options.lookup_places_on_device = false;
    if (std::string(why) == "no room") config.exhaust_allocation_number = calls_with_tables - 1;
    if (std::string(why) == "allocation error") config.fail_allocation_number = calls_with_tables - 1;
    EmulatedRuntime runtime(config);
    auto region = DeviceRegion::Acquire(&runtime, 0, options);
    ASSERT_TRUE(region.ok()) << region.status().ToString();
    const uint64_t pieces = runtime.allocated_bytes();
    const Status filled = (*region)->Fill(spec, SmallTuning(), {}, nullptr);
    ASSERT_TRUE(filled.ok()) << why << ": " << filled.ToString();
    const bool tables = std::string(why) == "tables";
    if (tables) calls_with_tables = runtime.allocation_calls();
    EXPECT_EQ((*region)->lookup_mode().places_on_device, tables) << why;
    EXPECT_EQ(runtime.allocated_bytes(), pieces + (*region)->lookup_tables_bytes()) << why;
    EXPECT_EQ((*region)->lookup_tables_bytes() > 0, tables) << why;
    const std::vector<uint8_t> want = Reference(spec);
    EXPECT_EQ(want, LookupRange(**region, spec.first, spec.count)) << why;
    const uint64_t idx[3] = {spec.first + spec.count - 1, spec.first, spec.first + 300};
    std::vector<uint8_t> out(96);
    ASSERT_TRUE((*region)->StartLookup(idx, 3, out.data()).ok());
    ASSERT_TRUE((*region)->FinishLookup().ok());
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(0, std::memcmp(out.data() + 32 * k, want.data() + (idx[k] - spec.first) * 32, 32)) << why << k;
    }
  }
}

// The kernel trusts the step bounds it reads: an upload of them that did not land whole is caught
// on the host (read back) before any launch, and nothing is left held.
// threat-model: T-DEVICE-LOST
TEST(DeviceRegion, AStepBoundsUploadThatDidNotLandWholeFailsBeforeAnyLaunch) {
  EmulatedGpuConfig config = SmallGpu();
  config.corrupt_copy_bytes = BuildDeviceProgram(512, 512).step_begin.size() * 4;
  EmulatedRuntime runtime(config);
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(1 << 20, 1 << 20));
  ASSERT_TRUE(region.ok());
  const Status st = (*region)->Fill(Spec(LabelFormat::kC1, 512, 0, 4096), SmallTuning());
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("step bounds uploaded"), std::string::npos) << st.ToString();
  EXPECT_EQ(runtime.fill_launches(), 0u);
  EXPECT_EQ((*region)->scratch_bytes(), 0u);
  uint64_t g = 0;
  uint8_t out[32];
  EXPECT_EQ((*region)->Lookup(&g, 1, out).code(), StatusCode::kFailedPrecondition);
  (*region)->Release();
  EXPECT_EQ(runtime.live_allocations(), 0);
}

// A GPU whose driver kills long kernels gets launches sized to about a second at a quarter of its
// raw rate (fill_passes.h): here 2 * 10^5 compressions per second and m = 1024 (c1: 96,254 node
// hashes per chunk), so one chunk per launch; the same fill on a device without the limit runs in
// one launch. Labels are right either way.
TEST(DeviceRegion, ATimeLimitedDeviceGetsShortLaunches) {
  const RegionSpec spec = Spec(LabelFormat::kC1, 1024, 0, 6 * 1024);
  const uint64_t per_chunk = CompressionsPerChunk(false, BuildDeviceProgram(1024, 1024).nodes);
  ASSERT_GT(per_chunk, 50000u);  // so a quarter of 2 * 10^5 per second is under one chunk a second
  for (bool limited : {false, true}) {
    EmulatedGpuConfig config = SmallGpu();
    config.kernel_time_limited = limited;
    config.compressions_per_s = 2e5;
    EmulatedRuntime runtime(config);
    auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(spec.count * 32, 1 << 20));
    ASSERT_TRUE(region.ok());
    FillStats stats;
    ASSERT_TRUE((*region)->Fill(spec, SmallTuning(), {}, &stats).ok());
    EXPECT_EQ(stats.time_limited_wave_chunks, limited ? 1u : 0u);
    EXPECT_EQ(stats.launches, limited ? 6u : 1u);
    for (const LaunchStats& l : stats.launch_log) EXPECT_LE(l.chunks, limited ? 1u : 6u);
    EXPECT_EQ(LookupRange(**region, 0, spec.count), Reference(spec));
  }
}

// A device fault (CUDA's sticky errors) is UNAVAILABLE "device lost ...; restart the agent", and
// the runtime refuses everything after it, including a new acquisition; the region's memory is
// still released.
TEST(DeviceRegion, ADeviceFaultIsADeviceLostAndTheRuntimeRefusesWhatFollows) {
  EmulatedGpuConfig config = SmallGpu();
  config.lose_device_at_fill_launch = 1;
  EmulatedRuntime runtime(config);
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(1 << 20, 1 << 20));
  ASSERT_TRUE(region.ok());
  FillTuning t = SmallTuning();
  t.max_wave_chunks = 2;  // several launches; the second faults
  const Status st = (*region)->Fill(Spec(LabelFormat::kC1, 512, 0, 8 * 512), t);
  EXPECT_TRUE(IsDeviceLost(st)) << st.ToString();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("restart the agent"), std::string::npos) << st.ToString();
  EXPECT_TRUE(IsDeviceLost(runtime.Health()));
  GpuDeviceProps props;
  EXPECT_TRUE(IsDeviceLost(runtime.Properties(0, &props)));
  EXPECT_TRUE(IsDeviceLost(DeviceRegion::Acquire(&runtime, 0, Pieces(1 << 16, 1 << 16)).status()));
  uint64_t g = 0;
  uint8_t out[32];
  EXPECT_EQ((*region)->Lookup(&g, 1, out).code(), StatusCode::kFailedPrecondition);
  (*region)->Release();
  EXPECT_EQ(runtime.live_allocations(), 0);
  EXPECT_EQ(runtime.live_mapped_host(), 0);
  EXPECT_EQ(runtime.live_lookup_queues(), 0);
}

}  // namespace
}  // namespace gpu
}  // namespace wipeproof
