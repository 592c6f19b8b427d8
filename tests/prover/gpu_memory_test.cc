// Memory acquisition with back-off (fake allocator), the slot map, scratch placement and the team
// shape policy: the host-side parts of the GPU backends, tested without a GPU.
#include <gtest/gtest.h>

#include <map>

#include "prover/backends/gpu/fill_passes.h"
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

TEST(ChooseTeamShape, FewerChunksMeanMoreThreadsPerChunk) {
  FillTuning t;
  TeamShape lots = ChooseTeamShape(1 << 20, 100000, t);
  EXPECT_EQ(lots.threads, 64u);
  EXPECT_EQ(lots.chunks, 64u);  // r = 1
  TeamShape mid = ChooseTeamShape(12500, 100000, t);
  EXPECT_EQ(mid.threads / mid.chunks, 8u);
  TeamShape few = ChooseTeamShape(64, 100000, t);
  EXPECT_EQ(few.threads, 256u);  // r capped at max_team_threads
  EXPECT_EQ(few.chunks, 1u);
  TeamShape two = ChooseTeamShape(2, 64, t);
  EXPECT_LE(two.chunks, 2u);
  t.threads_per_chunk = 4;
  t.team_threads = 128;
  TeamShape forced = ChooseTeamShape(1000, 100000, t);
  EXPECT_EQ(forced.threads, 128u);
  EXPECT_EQ(forced.chunks, 32u);
  t.max_chunks_per_team = 8;  // team scratch must fit the pieces
  EXPECT_EQ(ChooseTeamShape(1000, 100000, t).chunks, 8u);
}

TEST(DescribeRegion, PartialChunksFollowTheFormatRule) {
  RegionChunks c1 = DescribeRegion(false, 1000, 999, 3002);  // ends at 4001
  EXPECT_EQ(c1.chunk_begin, 0u);
  EXPECT_EQ(c1.main_end, 5u);
  EXPECT_FALSE(c1.partial_192);
  EXPECT_EQ(c1.SlotBegin(0), 0u);
  EXPECT_EQ(c1.SlotEnd(0), 1u);
  EXPECT_EQ(c1.SlotBegin(1), 1u);
  EXPECT_EQ(c1.SlotEnd(4), 3002u);
  RegionChunks f192 = DescribeRegion(true, 1000, 1000, 2500);  // ends at 3500: chunk 3 has m' = 500
  EXPECT_EQ(f192.main_end, 3u);
  EXPECT_TRUE(f192.partial_192);
  EXPECT_EQ(f192.partial_graph_labels, 500u);
  RegionChunks whole = DescribeRegion(true, 1000, 2000, 1000);
  EXPECT_FALSE(whole.partial_192);
}

}  // namespace
}  // namespace gpu
}  // namespace wipeproof
