// Memory acquisition with back-off (fake allocator), the slot map, placement, the wave planner and
// the label layout: the host-side parts of the GPU backends, tested without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "prover/backends/gpu/fill_passes.h"
#include "prover/backends/gpu/label_layout.h"
#include "prover/backends/gpu/memory_acquisition.h"

namespace wipeproof {
namespace gpu {
namespace {

// A device with `capacity` bytes whose single allocations may not exceed `largest` (fragmentation),
// handing out fake addresses; optionally failing one call with a non-memory error.
class FakeAllocator final : public DeviceAllocator {
 public:
  FakeAllocator(uint64_t capacity, uint64_t largest, int fail_call = -1)
      : capacity_(capacity), largest_(largest), fail_call_(fail_call) {}
  Status Allocate(uint64_t bytes, void** ptr) override {
    attempts_.push_back(bytes);
    if (static_cast<int>(attempts_.size()) - 1 == fail_call_) return InternalError("injected");
    if (bytes > largest_ || used_ + bytes > capacity_) return ResourceExhaustedError("out of memory");
    used_ += bytes;
    next_ += (bytes + 255) / 256 * 256 + 4096;
    live_[next_] = bytes;
    *ptr = reinterpret_cast<void*>(next_);
    return Status::Ok();
  }
  void Free(void* ptr) override {
    auto it = live_.find(reinterpret_cast<uint64_t>(ptr));
    ASSERT_NE(it, live_.end());
    used_ -= it->second;
    live_.erase(it);
  }
  uint64_t used() const { return used_; }
  size_t live() const { return live_.size(); }
  const std::vector<uint64_t>& attempts() const { return attempts_; }

 private:
  uint64_t capacity_, largest_, used_ = 0, next_ = 1ull << 40;
  int fail_call_;
  std::map<uint64_t, uint64_t> live_;
  std::vector<uint64_t> attempts_;
};

TEST(AcquireInPieces, TakesTheTargetInMaxPieces) {
  FakeAllocator fake(100 * kGiB, 100 * kGiB);
  auto pieces = AcquireInPieces(fake, 5 * kGiB + 6 * kMiB);
  ASSERT_TRUE(pieces.ok());
  ASSERT_EQ(pieces->size(), 3u);
  EXPECT_EQ((*pieces)[0].bytes, 2 * kGiB);
  EXPECT_EQ((*pieces)[2].bytes, 1 * kGiB + 6 * kMiB);
  EXPECT_EQ(TotalBytes(*pieces), 5 * kGiB + 6 * kMiB);
  ReleasePieces(fake, &pieces.value());
  EXPECT_EQ(fake.live(), 0u);
}

TEST(AcquireInPieces, HalvesWhenAnAllocationDoesNotFit) {
  // Reported free: 10 GiB, but no single allocation above 700 MiB succeeds.
  FakeAllocator fake(10 * kGiB, 700 * kMiB);
  auto pieces = AcquireInPieces(fake, 10 * kGiB);
  ASSERT_TRUE(pieces.ok());
  EXPECT_EQ(TotalBytes(*pieces), 10 * kGiB);
  for (const auto& p : *pieces) EXPECT_LE(p.bytes, 700 * kMiB);
  // 2 GiB, 1 GiB fail; 512 MiB pieces from then on.
  EXPECT_EQ(fake.attempts()[0], 2 * kGiB);
  EXPECT_EQ(fake.attempts()[1], 1 * kGiB);
  EXPECT_EQ(fake.attempts()[2], 512 * kMiB);
  ReleasePieces(fake, &pieces.value());
}

TEST(AcquireInPieces, StopsAtTheMinimumPieceAndReturnsWhatItHas) {
  FakeAllocator fake(3 * kGiB + 20 * kMiB, 4 * kGiB);  // the runtime reports more than it gives
  auto pieces = AcquireInPieces(fake, 4 * kGiB);
  ASSERT_TRUE(pieces.ok());
  EXPECT_GE(TotalBytes(*pieces), 3 * kGiB);
  EXPECT_LE(TotalBytes(*pieces), 3 * kGiB + 20 * kMiB);
  EXPECT_EQ(fake.attempts().back(), 32 * kMiB);  // the last try was the minimum piece
  ReleasePieces(fake, &pieces.value());
}

TEST(AcquireInPieces, OtherErrorsReleaseEverythingTaken) {
  FakeAllocator fake(100 * kGiB, 100 * kGiB, /*fail_call=*/2);
  auto pieces = AcquireInPieces(fake, 10 * kGiB);
  ASSERT_FALSE(pieces.ok());
  EXPECT_EQ(pieces.status().code(), StatusCode::kInternal);
  EXPECT_EQ(fake.live(), 0u);
  EXPECT_EQ(fake.used(), 0u);
}

TEST(AcquireInPieces, NothingFitsGivesAnEmptyList) {
  FakeAllocator fake(16 * kMiB, 16 * kMiB);
  auto pieces = AcquireInPieces(fake, 1 * kGiB);
  ASSERT_TRUE(pieces.ok());
  EXPECT_TRUE(pieces->empty());
}

TEST(SlotMap, MapsSlotsAcrossPieces) {
  std::vector<DeviceAllocation> pieces = {{reinterpret_cast<void*>(0x10000), 32 * 10},
                                          {reinterpret_cast<void*>(0x90000), 16},  // holds no slot
                                          {reinterpret_cast<void*>(0x50000), 32 * 3 + 7}};
  SlotMap map(pieces);
  EXPECT_EQ(map.slots(), 13u);
  EXPECT_EQ(map.Locate(0).piece, 0u);
  EXPECT_EQ(map.Locate(9).offset_bytes, 9u * 32);
  EXPECT_EQ(map.Locate(10).piece, 2u);
  EXPECT_EQ(map.Locate(10).offset_bytes, 0u);
  EXPECT_EQ(map.Locate(12).offset_bytes, 64u);
  EXPECT_EQ(map.slot_begin(), (std::vector<uint64_t>{0, 10, 10, 13}));
  EXPECT_EQ(map.bases()[2], 0x50000u);
}

// Locate's bucket table agrees with a search of slot_begin for every slot: pieces of very uneven
// sizes (so the table is capped and a bucket spans many pieces) and pieces of no slot.
TEST(SlotMap, LocateAgreesWithASearchOfEverySlot) {
  std::vector<DeviceAllocation> pieces;
  uint64_t base = 0x100000;
  for (uint64_t slots : {1ull, 0ull, 1ull << 20, 3ull, 0ull, 0ull, 5ull, 1ull << 17, 1ull, 70000ull}) {
    pieces.push_back({reinterpret_cast<void*>(base), slots * 32 + (slots % 3)});
    base += 1ull << 26;
  }
  SlotMap map(pieces);
  ASSERT_EQ(map.slots(), 1u + (1u << 20) + 3 + 5 + (1u << 17) + 1 + 70000);
  const std::vector<uint64_t>& begin = map.slot_begin();
  for (uint64_t slot = 0; slot < map.slots(); ++slot) {
    const uint32_t want = static_cast<uint32_t>(std::upper_bound(begin.begin(), begin.end(), slot) - begin.begin()) - 1;
    const SlotMap::Place place = map.Locate(slot);
    ASSERT_EQ(place.piece, want) << "slot " << slot;
    ASSERT_EQ(place.offset_bytes, (slot - begin[want]) * 32) << "slot " << slot;
  }
}

TEST(PlaceFromTop, PlacesAlignedBlocksInsidePiecesAboveTheLimit) {
  std::vector<DeviceAllocation> pieces = {{reinterpret_cast<void*>(0x100000), 1 << 20},
                                          {reinterpret_cast<void*>(0x900000), 300 * 1024}};
  SlotMap map(pieces);
  uint64_t lowest = 0;
  // 100 KiB blocks: 3 fit in the 300 KiB piece, then 10 in the 1 MiB one.
  auto placed = PlaceFromTop(map, 0, map.slots(), 100 * 1024, 100, &lowest);
  ASSERT_EQ(placed.size(), 13u);
  for (uint64_t a : placed) EXPECT_EQ(a % 256, 0u);
  EXPECT_GE(placed[0], 0x900000u);
  EXPECT_LE(placed[0] + 100 * 1024, 0x900000u + 300 * 1024);
  EXPECT_LT(lowest, map.slots());
  // A limit excludes the low slots; a top bound excludes the high ones.
  uint64_t limit = (1 << 20) / 32;  // the second piece only
  placed = PlaceFromTop(map, limit, map.slots(), 100 * 1024, 100, &lowest);
  EXPECT_EQ(placed.size(), 3u);
  EXPECT_GE(lowest, limit);
  placed = PlaceFromTop(map, 0, limit, 100 * 1024, 3, &lowest);
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_LE(placed[0] + 100 * 1024, 0x100000u + (1 << 20));
  EXPECT_EQ(lowest, (placed[2] - 0x100000) / 32);
}

// A device with `resident_64` resident teams of 64 threads; bigger teams cost threads.
WaveLimits Limits(uint64_t resident_64, uint32_t max_c = 16) {
  WaveLimits l;
  l.resident_teams = [resident_64](uint32_t threads) { return std::max<uint64_t>(1, resident_64 * 64 / threads); };
  l.max_chunks_per_team = max_c;
  return l;
}

uint64_t CountChunks(const std::vector<PlannedWave>& waves) {
  uint64_t n = 0;
  for (const auto& w : waves) n += w.Chunks();
  return n;
}

TEST(PlanEvenWaves, SpreadsChunksEvenlyOverTheFewestWaves) {
  std::vector<PlannedWave> waves;
  std::vector<LayoutRun> runs;
  // 1700 chunks, 100 teams of at most 16: two waves of 850, teams of 9 (the first 50) and 8.
  PlanEvenWaves(1000, 2700, "main", false, Limits(100), &waves, &runs);
  ASSERT_EQ(waves.size(), 2u);
  for (const PlannedWave& w : waves) {
    EXPECT_EQ(w.phase, "main");
    EXPECT_EQ(w.team_threads, 64u);
    ASSERT_EQ(w.teams.size(), 100u);
    EXPECT_EQ(w.Chunks(), 850u);
    for (size_t t = 0; t < 100; ++t) EXPECT_EQ(w.teams[t].chunks, t < 50 ? 9u : 8u);
  }
  // Consecutive chunks, in place, and runs that say where each team's block is.
  uint64_t next = 1000;
  for (const PlannedWave& w : waves) {
    for (const PlannedTeam& t : w.teams) {
      EXPECT_EQ(t.first_chunk, next);
      EXPECT_FALSE(t.scratch);
      next += t.chunks;
    }
  }
  EXPECT_EQ(next, 2700u);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].chunk_begin, 1000u);
  EXPECT_EQ(runs[0].chunk_end, 1450u);
  EXPECT_EQ(runs[0].chunks_per_team, 9u);
  EXPECT_EQ(runs[1].chunks_per_team, 8u);
  EXPECT_EQ(runs[3].chunk_end, 2700u);
}

TEST(PlanEvenWaves, LeavesRoomInTheFirstWaveAndHonoursCaps) {
  std::vector<PlannedWave> waves;
  std::vector<LayoutRun> runs;
  PlanEvenWaves(0, 500, "main", false, Limits(100), &waves, &runs, /*first_wave_extra=*/2);
  ASSERT_EQ(waves.size(), 1u);
  EXPECT_EQ(waves[0].teams.size(), 98u);
  EXPECT_EQ(waves[0].Chunks(), 500u);
  // A side-scratch cap of 300 chunks per wave: four waves of 250.
  waves.clear();
  runs.clear();
  WaveLimits capped = Limits(100);
  capped.max_wave_chunks = 300;
  PlanEvenWaves(0, 1000, "main", true, capped, &waves, &runs);
  ASSERT_EQ(waves.size(), 4u);
  for (const auto& w : waves) {
    EXPECT_EQ(w.Chunks(), 250u);
    EXPECT_TRUE(w.teams[0].scratch);
  }
  EXPECT_TRUE(runs.empty());  // scratch teams keep the natural layout
  // A fixed C (threads-per-chunk sweeps): teams of exactly 4, the last one fewer.
  waves.clear();
  WaveLimits fixed = Limits(100);
  fixed.fixed_chunks_per_team = 4;
  PlanEvenWaves(0, 10, "main", false, fixed, &waves, &runs);
  ASSERT_EQ(waves.size(), 1u);
  ASSERT_EQ(waves[0].teams.size(), 3u);
  EXPECT_EQ(waves[0].teams[2].chunks, 2u);
}

TEST(PlanEvenWaves, AWaveSmallerThanTheDeviceGetsBiggerTeams) {
  std::vector<PlannedWave> waves;
  std::vector<LayoutRun> runs;
  // 10 chunks on 100 resident teams of 64: one chunk per team of 256 threads (capped), all resident.
  PlanEvenWaves(7, 17, "deferred", false, Limits(100), &waves, &runs);
  ASSERT_EQ(waves.size(), 1u);
  EXPECT_EQ(waves[0].team_threads, 256u);
  ASSERT_EQ(waves[0].teams.size(), 10u);
  for (const auto& t : waves[0].teams) EXPECT_EQ(t.chunks, 1u);
  // 60 chunks: 60 * 128 threads fit in 100 * 64, 60 * 256 do not.
  waves.clear();
  PlanEvenWaves(0, 60, "main", false, Limits(100), &waves, &runs);
  EXPECT_EQ(waves[0].team_threads, 64u * 1);  // 60 * 128 > 6400: stays at 64
  waves.clear();
  PlanEvenWaves(0, 40, "main", false, Limits(100), &waves, &runs);
  EXPECT_EQ(waves[0].team_threads, 128u);
}

TEST(DescribeRegion, PartialChunksFollowTheFormatRule) {
  RegionChunks c1 = DescribeRegion(false, 1000, 999, 3002);  // ends at 4001
  EXPECT_EQ(c1.chunk_begin, 0u);
  EXPECT_EQ(c1.chunk_end, 5u);
  EXPECT_EQ(c1.whole_begin, 1u);
  EXPECT_EQ(c1.whole_end, 4u);
  EXPECT_EQ(c1.PartialChunks(), (std::vector<uint64_t>{0, 4}));
  EXPECT_EQ(c1.SlotBegin(0), 0u);
  EXPECT_EQ(c1.SlotEnd(0), 1u);
  EXPECT_EQ(c1.SlotBegin(1), 1u);
  EXPECT_EQ(c1.SlotEnd(4), 3002u);
  EXPECT_EQ(c1.GraphOf(4).graph_labels, 1000u);  // c1: graph m, truncated after rank 0
  EXPECT_EQ(c1.GraphOf(4).ranks_needed, 1u);
  EXPECT_EQ(c1.GraphOf(2).ranks_needed, 1000u);
  RegionChunks f192 = DescribeRegion(true, 1000, 1000, 2500);  // ends at 3500: chunk 3 has m' = 500
  EXPECT_EQ(f192.whole_end, 3u);
  EXPECT_EQ(f192.PartialChunks(), (std::vector<uint64_t>{3}));
  EXPECT_EQ(f192.GraphOf(3).graph_labels, 500u);
  EXPECT_EQ(f192.GraphOf(3).ranks_needed, 500u);
  RegionChunks whole = DescribeRegion(true, 1000, 2000, 1000);
  EXPECT_TRUE(whole.PartialChunks().empty());
  RegionChunks inside = DescribeRegion(false, 1000, 5010, 20);  // inside chunk 5
  EXPECT_EQ(inside.PartialChunks(), (std::vector<uint64_t>{5}));
  EXPECT_EQ(inside.whole_begin, inside.whole_end);
  EXPECT_EQ(inside.GraphOf(5).ranks_needed, 30u);
}

// Every label has two 16-byte places, and no two labels share one: the layout is a bijection
// onto the region's slots.
TEST(LabelLayout, IsABijectionOntoTheRegionsSlots) {
  const uint32_t m = 4;
  const uint64_t first = 5, count = 4 * 12 + 2;  // chunk 1 partial, chunks 2..12 whole, chunk 13 partial
  LabelLayout layout(first, count, m);
  layout.AddRuns({{2, 9, 3}, {9, 13, 2}});  // teams of 3 (the last of the run 1), then of 2
  std::set<std::pair<uint64_t, uint32_t>> seen;
  for (uint64_t g = first; g < first + count; ++g) {
    LabelLayout::Half h[2];
    layout.Locate(g, h);
    for (int k = 0; k < 2; ++k) {
      ASSERT_LT(h[k].slot, count);
      ASSERT_TRUE(h[k].byte_offset == 0 || h[k].byte_offset == 16);
      EXPECT_TRUE(seen.insert({h[k].slot, h[k].byte_offset}).second) << "label " << g;
    }
  }
  EXPECT_EQ(seen.size(), 2 * count);
  // Chunk 2 rank 0 opens the first team's block (slot 8 - 5 = 3); its second half is C = 3 units on.
  LabelLayout::Half h[2];
  layout.Locate(8, h);
  EXPECT_EQ(h[0].slot, 3u);
  EXPECT_EQ(h[0].byte_offset, 0u);
  EXPECT_EQ(h[1].slot, 4u);
  EXPECT_EQ(h[1].byte_offset, 16u);
  // Chunk 4, rank 1 (g = 17): team of chunks 2..4, c = 2: units (1*2+0)*3+2 = 8 and 11.
  layout.Locate(17, h);
  EXPECT_EQ(h[0].slot, 3u + 4);
  EXPECT_EQ(h[0].byte_offset, 0u);
  EXPECT_EQ(h[1].slot, 3u + 5);
  EXPECT_EQ(h[1].byte_offset, 16u);
  // The partial chunks stay natural.
  layout.Locate(6, h);
  EXPECT_EQ(h[0].slot, 1u);
  EXPECT_EQ(h[1].slot, 1u);
  EXPECT_EQ(h[1].byte_offset, 16u);
}

// The layout's rule written out plainly (label_layout.h): Locate, which shifts for a power-of-two m,
// divides in 32 bits and counts runs without branches, must give the same places.
void ReferenceLocate(uint64_t first, uint32_t m, const std::vector<LayoutRun>& runs, uint64_t g,
                     LabelLayout::Half halves[2]) {
  const uint64_t chunk = g / m, rank = g % m;
  for (const LayoutRun& r : runs) {
    if (chunk < r.chunk_begin || chunk >= r.chunk_end) continue;
    const uint64_t team_first = r.chunk_begin + (chunk - r.chunk_begin) / r.chunks_per_team * r.chunks_per_team;
    const uint64_t C = std::min<uint64_t>(r.chunks_per_team, r.chunk_end - team_first);
    for (int h = 0; h < 2; ++h) {
      const uint64_t unit = (rank * 2 + h) * C + (chunk - team_first);
      halves[h] = {team_first * m - first + unit / 2, static_cast<uint32_t>(unit & 1) * 16};
    }
    return;
  }
  halves[0] = {g - first, 0};
  halves[1] = {g - first, 16};
}

TEST(LabelLayout, AgreesWithTheRuleForEveryLabel) {
  struct Case {
    uint32_t m;
    int runs;
  };
  // Powers of two and not; few runs (counted) and more than 32 (searched).
  for (const Case c : {Case{8, 3}, Case{6, 3}, Case{4, 40}, Case{5, 40}, Case{1, 2}, Case{2, 32}, Case{3, 33}}) {
    const uint64_t first = 7ull * c.m + (c.m > 1 ? 1 : 0);  // a partial chunk first
    std::vector<LayoutRun> runs;
    uint64_t chunk = 8;
    for (int k = 0; k < c.runs; ++k) {
      const uint32_t per_team = 1 + k % 4;
      const uint64_t length = per_team * 2 + k % 3;  // the run's last team may be smaller
      runs.push_back({chunk, chunk + length, per_team});
      chunk += length + (k % 5 == 4 ? 1 : 0);  // now and then a chunk outside every run
    }
    const uint64_t count = (chunk + 1) * c.m + 1 - first;  // then a whole chunk and a partial one
    LabelLayout layout(first, count, c.m);
    layout.AddRuns(runs);
    std::set<std::pair<uint64_t, uint32_t>> seen;
    for (uint64_t g = first; g < first + count; ++g) {
      LabelLayout::Half got[2], want[2];
      layout.Locate(g, got);
      ReferenceLocate(first, c.m, runs, g, want);
      for (int h = 0; h < 2; ++h) {
        ASSERT_EQ(got[h].slot, want[h].slot) << "m " << c.m << " label " << g << " half " << h;
        ASSERT_EQ(got[h].byte_offset, want[h].byte_offset) << "m " << c.m << " label " << g << " half " << h;
        EXPECT_TRUE(seen.insert({got[h].slot, got[h].byte_offset}).second) << "m " << c.m << " label " << g;
      }
    }
    EXPECT_EQ(seen.size(), 2 * count) << "m " << c.m;
  }
}

// A chunk's offset in its run past 2^32 (m = 1, a run of 2^33 chunks in teams of 3): Locate divides
// in 64 bits there and must still follow the rule.
TEST(LabelLayout, AgreesWithTheRulePastA32BitOffset) {
  const uint64_t first = 5, count = (uint64_t{1} << 33) + 10;
  const std::vector<LayoutRun> runs = {{8, 8 + (uint64_t{1} << 33), 3}};
  LabelLayout layout(first, count, 1);
  layout.AddRuns(runs);
  for (uint64_t offset : {uint64_t{0}, uint64_t{UINT32_MAX} - 2, uint64_t{UINT32_MAX}, uint64_t{UINT32_MAX} + 1,
                          uint64_t{UINT32_MAX} + 5, (uint64_t{1} << 33) - 1}) {
    for (uint64_t g : {8 + offset, 8 + offset + 1}) {
      if (g >= first + count) continue;
      LabelLayout::Half got[2], want[2];
      layout.Locate(g, got);
      ReferenceLocate(first, 1, runs, g, want);
      for (int h = 0; h < 2; ++h) {
        EXPECT_EQ(got[h].slot, want[h].slot) << "label " << g << " half " << h;
        EXPECT_EQ(got[h].byte_offset, want[h].byte_offset) << "label " << g << " half " << h;
      }
    }
  }
}

}  // namespace
}  // namespace gpu
}  // namespace wipeproof
