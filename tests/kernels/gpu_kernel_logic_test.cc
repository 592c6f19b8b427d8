// The GPU fill kernel's logic, run on the CPU (label-spec.md §3-§6): the unrolled compression, the
// device-side chunk key derivation, the packed schedule, and whole teams of emulated threads, all
// compared byte for byte with the CPU engine (the oracle), for both formats and many team shapes.
// The same functions run inside the CUDA/HIP kernels; gpu_device_test.cc repeats the parity
// checks on a real device when one is present.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <tuple>

#include "kernels/blake3_compress.h"
#include "kernels/gpu/fast_compress.h"
#include "kernels/gpu/team_executor.h"
#include "kernels/label_spec.h"
#include "prover/backends/gpu/label_layout.h"
#include "tests/support/gpu_test_util.h"

namespace wipeproof {
namespace gpu {
namespace {

using testing::DirectRun;
using testing::DirectRunOptions;
using testing::Reference;
using testing::Spec;

TEST(FastCompress, EqualsReferenceCompression) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    uint32_t cv[8], block[16];
    for (auto& w : cv) w = rng();
    for (auto& w : block) w = rng();
    const uint64_t counter = (static_cast<uint64_t>(rng()) << 32) | rng();
    const uint32_t len = rng() % 65, flags = rng() % 128;
    uint32_t want[8], got[8];
    Blake3CompressCv(cv, block, counter, len, flags, want);
    FastCompressCv(cv, block, counter, len, flags, got);
    ASSERT_EQ(0, std::memcmp(want, got, sizeof want)) << "trial " << trial;
    FastCompressCv(cv, block, counter, len, flags, cv);  // out may alias cv
    ASSERT_EQ(0, std::memcmp(want, cv, sizeof want));
  }
}

TEST(DeviceChunkWords, EqualHostDerivationBothFormats) {
  uint8_t seed[kSeedBytes];
  for (int i = 0; i < kSeedBytes; ++i) seed[i] = static_cast<uint8_t>(i * 13 + 1);
  for (uint32_t m : {1u, 3u, 1000u, 4096u, 1u << 14, 1u << 17, 1u << 20}) {
    for (uint64_t chunk : {0ull, 1ull, 255ull, 65536ull, 0x123456789ull, (1ull << 42) + 17}) {
      const SessionConstants c1 = BuildSessionConstants(LabelFormat::kC1, seed, m, m);
      const ChunkHashParams want_c1 = DeriveChunkHashParams(LabelFormat::kC1, seed, chunk, m, m);
      uint32_t words[kChunkWords];
      DeriveChunkWords(c1, c1.descriptor, chunk, words);
      EXPECT_EQ(0, std::memcmp(words, want_c1.key, 32)) << "c1 m=" << m << " chunk=" << chunk;
      const uint32_t m_partial = m > 2 ? m - 2 : m;  // 192's descriptor follows the chunk's own graph
      const SessionConstants s192 = BuildSessionConstants(LabelFormat::k192, seed, m, m_partial);
      const ChunkHashParams want_192 = DeriveChunkHashParams(LabelFormat::k192, seed, chunk, m, m_partial);
      DeriveChunkWords(s192, s192.descriptor, chunk, words);
      EXPECT_EQ(0, std::memcmp(words, want_192.block2, 64)) << "192 m=" << m << " chunk=" << chunk;
      EXPECT_EQ(0, std::memcmp(s192.int_key, want_192.key, 32));
      EXPECT_EQ(0, std::memcmp(s192.src_key, want_192.src_key, 32));
    }
  }
}

TEST(DeviceProgram, HoldsEveryOpOnceWithItsNodeNumbersAndUnits) {
  for (uint32_t m : {1u, 2u, 3u, 5u, 17u, 1000u, 4096u, 5000u, 1u << 14}) {
    for (uint32_t ranks : {1u, m / 2 + 1, m}) {
      if (ranks > m) continue;
      for (ProgramLayout layout : {ProgramLayout::kWork, ProgramLayout::kSharedScratch}) {
        const std::vector<GraphOp> ops =
            layout == ProgramLayout::kWork ? WorkLayoutOps(m, ranks) : BuildGraphProgram(m, ranks);
        for (bool levelled : {false, true}) {
          const DeviceProgram p = BuildDeviceProgram(m, ranks, levelled, layout);
          ASSERT_EQ(ops.size(), p.ops);
          ASSERT_EQ(p.words.size(), p.ops * kOpWords);
          ASSERT_EQ(p.step_begin.size(), p.steps + 1u);
          ASSERT_EQ(p.step_begin.back(), p.ops);
          // The same multiset of ops (the levelled program reorders them).
          auto key = [](uint32_t kind, uint32_t src, uint32_t dst, uint32_t width, uint32_t lb, uint64_t nb) {
            return std::make_tuple(kind, src, dst, width, lb, nb);
          };
          std::multiset<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint64_t>> want, got;
          uint64_t nodes = 0, units = 0;
          for (const GraphOp& op : ops) {
            const bool out = op.kind == GraphOpKind::kOutput;
            want.insert(key(static_cast<uint32_t>(op.kind), op.src, out ? op.src : op.dst, op.width,
                            out ? 0 : op.log_bit, op.node_base));
            if (!out) nodes = std::max<uint64_t>(nodes, op.node_base + op.width);
            units += op.kind == GraphOpKind::kButterfly ? op.width / 2 : op.width;
          }
          for (uint32_t s = 0; s < p.steps; ++s) {
            ASSERT_LT(p.step_begin[s], p.step_begin[s + 1]);
            if (!levelled) ASSERT_EQ(p.step_begin[s + 1], p.step_begin[s] + 1);
            uint32_t unit_end = 0;
            for (uint32_t k = p.step_begin[s]; k < p.step_begin[s + 1]; ++k) {
              const DeviceOp op = DecodeOp(p.words.data(), k);
              const bool out = op.kind == kOpOutput;
              got.insert(
                  key(op.kind, op.src, op.dst, op.width, out ? 0 : op.log_bit, out ? op.first_rank : op.node_base));
              unit_end += OpUnits(op);
              ASSERT_EQ(op.unit_end, unit_end) << "m=" << m << " step " << s;
            }
          }
          EXPECT_EQ(want, got) << "m=" << m;
          EXPECT_EQ(nodes, p.nodes);
          EXPECT_EQ(units, p.units);
          if (levelled && m >= 1000) EXPECT_LT(p.steps * 3, p.ops * 2) << "super-steps should merge ops";
        }
      }
    }
  }
}

// The work layout (device_program.h): every op inside the chunk's WorkLabels(m) slots, output rank
// r read from work slot r, and the schedule's footprint (live labels plus outputs emitted,
// replayed) exactly m for powers of two, where the shared-scratch layout needs 1.5 * 2^level.
TEST(DeviceProgram, WorkLayoutLabelsAChunkInItsOwnSlots) {
  EXPECT_EQ(WorkLabels(1), 1u);
  EXPECT_EQ(WorkLabels(2), 2u);
  EXPECT_EQ(WorkLabels(3), 4u);
  EXPECT_EQ(WorkLabels(1000), 1024u);
  EXPECT_EQ(WorkLabels(4096), 4096u);
  EXPECT_EQ(WorkLabels(4097), 8192u);
  for (uint32_t m : {1u, 2u, 3u, 5u, 17u, 1000u, 4096u, 1u << 14}) {
    const std::vector<GraphOp> ops = WorkLayoutOps(m, m);
    uint64_t ranks = 0;
    for (const GraphOp& op : ops) {
      const uint32_t hi = std::max(op.src, op.dst) + op.width;
      ASSERT_LE(hi, WorkLabels(m)) << "m=" << m;
      if (op.kind == GraphOpKind::kOutput) {
        EXPECT_EQ(op.src, op.node_base) << "m=" << m << ": rank r must sit in work slot r";
        ranks += op.width;
      }
    }
    EXPECT_EQ(ranks, m);
    EXPECT_EQ(FootprintLabels(ops), WorkLabels(m)) << "m=" << m;
    const GraphShape shape = ShapeForChunkLabels(m);
    if (m >= 2) EXPECT_EQ(FootprintLabels(BuildGraphProgram(m, m)), shape.scratch_labels + shape.half) << "m=" << m;
  }
  // The copies share no slot, so levelling runs them side by side: 2^14: 73,713 steps before, 49,137 now.
  EXPECT_EQ(BuildDeviceProgram(1u << 14, 1u << 14, true, ProgramLayout::kSharedScratch).steps, 73713u);
  EXPECT_EQ(BuildDeviceProgram(1u << 14, 1u << 14).steps, 49137u);
}

// Records, per step, which items read and wrote each label; any label written by one item and
// touched by another would make the result depend on thread timing on a GPU.
class HazardObserver {
 public:
  void Read(uint64_t item, const uint32_t* label) const { reads_[label].insert(item); }
  void Write(uint64_t item, const uint32_t* label) const { writes_[label].insert(item); }
  // Returns the number of conflicting labels, and clears.
  int Conflicts() const {
    int conflicts = 0;
    for (const auto& [label, writers] : writes_) {
      std::set<uint64_t> touched = writers;
      auto r = reads_.find(label);
      if (r != reads_.end()) touched.insert(r->second.begin(), r->second.end());
      if (touched.size() > 1) ++conflicts;
    }
    reads_.clear();
    writes_.clear();
    return conflicts;
  }

 private:
  mutable std::map<const uint32_t*, std::set<uint64_t>> reads_, writes_;
};

// The pooled item loop splits item k into (unit k / C, chunk k % C) by a multiply and a shift:
// exact for every C the kernel accepts over the whole item range (k < 2^29), checked at every
// multiple of C and its neighbours near 0, near 2^29, and at random k.
TEST(TeamExecutor, ChunkDividerIsExactDivision) {
  std::mt19937_64 rng(12);
  for (uint32_t C = 1; C <= kMaxTeamChunks; ++C) {
    const ChunkDivider d = MakeChunkDivider(C);
    auto check = [&](uint64_t k) { ASSERT_EQ((k * d.magic) >> d.shift, k / C) << "k=" << k << " C=" << C; };
    for (uint64_t k = 0; k < 4096; ++k) check(k);
    const uint64_t top = 1ull << 29;
    for (uint64_t q = top / C - 64; q <= top / C + 1; ++q) {
      for (uint64_t k : {q * C - 1, q * C, q * C + C - 1}) check(k);
    }
    for (int i = 0; i < 2000; ++i) check(rng() % top);
  }
}

TEST(TeamExecutor, ItemsOfOneSuperStepNeverTouchAnotherItemsLabels) {
  for (uint32_t m : {2u, 3u, 17u, 1000u, 4096u}) {
    for (uint32_t chunks : {1u, 3u}) {
      RegionSpec spec = Spec(LabelFormat::kC1, m, 0, static_cast<uint64_t>(m) * chunks);
      const DeviceProgram program = BuildDeviceProgram(m, m);
      std::vector<uint32_t> region(spec.count * 8 + 8), extra(static_cast<size_t>(chunks) * program.work_labels * 8);
      std::vector<uint32_t> shared(FillSharedBytes(chunks) / 4);
      uint64_t slot_begin[2] = {0, spec.count}, base[1] = {reinterpret_cast<uint64_t>(region.data())};
      TeamDesc desc;
      desc.chunks = chunks;
      const ChunkDivider div = MakeChunkDivider(chunks);
      desc.chunk_magic = div.magic;
      desc.chunk_shift = div.shift;
      desc.inplace_slots = m;
      desc.seg0 = base[0];
      desc.split = 2 * chunks * m;
      desc.extra = reinterpret_cast<uint64_t>(extra.data());
      FillWaveArgs a;
      a.session = BuildSessionConstants(spec.format, spec.seed, m, m);
      a.graph[0].program = program.words.data();
      a.graph[0].step_begin = program.step_begin.data();
      a.graph[0].steps = program.steps;
      a.graph[0].work_labels = program.work_labels;
      a.region_count = spec.count;
      a.teams = &desc;
      a.team_count = 1;
      a.max_team_chunks = chunks;
      a.slots = {slot_begin, base, 1};
      const Team team = MakeTeam(a, 0, shared.data(), 0);
      TeamPrologue(a, 0, team, 0, 1);
      // One "thread" runs every item of a step; items are numbered across the whole step.
      HazardObserver obs;
      for (uint32_t s = 0; s < program.steps; ++s) {
        TeamRunStep<kFormatC1>(a, team, s, 0, 1, false, obs);
        ASSERT_EQ(0, obs.Conflicts()) << "m=" << m << " chunks=" << chunks << " step " << s;
      }
      // In place, the team block holds the labels interleaved (label_layout.h).
      LabelLayout layout(0, spec.count, m);
      layout.AddRuns({{0, chunks, chunks}});
      std::vector<uint8_t> got(spec.count * 32);
      for (uint64_t g = 0; g < spec.count; ++g) {
        LabelLayout::Half h[2];
        layout.Locate(g, h);
        for (int k = 0; k < 2; ++k)
          std::memcpy(got.data() + g * 32 + k * 16,
                      reinterpret_cast<const uint8_t*>(region.data()) + h[k].slot * 32 + h[k].byte_offset, 16);
      }
      EXPECT_EQ(Reference(spec), got);
    }
  }
}

struct ParityCase {
  LabelFormat format;
  uint32_t m;
  uint64_t first, count;
};

void PrintTo(const ParityCase& c, std::ostream* os) {
  *os << LabelFormatName(c.format) << " m=" << c.m << " first=" << c.first << " count=" << c.count;
}

}  // namespace

namespace testing {
void PrintTo(const DirectRunOptions& o, std::ostream* os) {
  *os << "G=" << o.team_threads << " C=" << o.chunks_per_team << " teams=" << o.teams
      << (o.order == EmulatedThreadOrder::kReverse ? " reverse" : "") << (o.in_place ? " in-place" : " scratch")
      << (o.program_layout == ProgramLayout::kSharedScratch ? " shared-scratch-layout" : "")
      << " piece=" << o.piece_labels << " cv0=" << o.cv0_nodes << (o.levelled ? "" : " unlevelled");
}
}  // namespace testing

namespace {

class EmulatedParity : public ::testing::TestWithParam<std::tuple<ParityCase, DirectRunOptions>> {};

TEST_P(EmulatedParity, BytesEqualTheCpuEngine) {
  const auto& [c, options] = GetParam();
  const RegionSpec spec = Spec(c.format, c.m, c.first, c.count);
  const std::vector<uint8_t> want = Reference(spec);
  ASSERT_FALSE(want.empty());
  const std::vector<uint8_t> got = DirectRun(spec, options);
  ASSERT_EQ(want.size(), got.size()) << "a write outside a piece or a work area, or a failed launch";
  for (uint64_t i = 0; i < spec.count; ++i) {
    ASSERT_EQ(0, std::memcmp(want.data() + i * 32, got.data() + i * 32, 32))
        << LabelFormatName(c.format) << " m=" << c.m << " first label that differs: " << spec.first + i;
  }
}

struct ShapeSpec {
  uint32_t g, c, teams;
  EmulatedThreadOrder order = EmulatedThreadOrder::kForward;
  uint64_t piece = 777;
  uint64_t cv0 = 0;
  bool levelled = true;
  bool in_place = true;
  ProgramLayout layout = ProgramLayout::kWork;
};

DirectRunOptions Shape(const ShapeSpec& s) {
  DirectRunOptions o;
  o.team_threads = s.g;
  o.chunks_per_team = s.c;
  o.teams = s.teams;
  o.order = s.order;
  o.piece_labels = s.piece;
  o.cv0_nodes = s.cv0;
  o.levelled = s.levelled;
  o.in_place = s.in_place;
  o.program_layout = s.layout;
  return o;
}

constexpr auto kReverse = EmulatedThreadOrder::kReverse;
constexpr auto kForward = EmulatedThreadOrder::kForward;

// Small m: many shapes, both thread orders, partial chunks at both ends, pieces that cut team
// blocks (one piece: the fast path; two: the split; more: every access through the slot table),
// C that is not a power of two, m that is not (extra work labels outside the region), scratch
// teams with either program layout.
INSTANTIATE_TEST_SUITE_P(
    SmallM, EmulatedParity,
    ::testing::Combine(
        ::testing::Values(ParityCase{LabelFormat::kC1, 1, 5, 9}, ParityCase{LabelFormat::k192, 1, 5, 9},
                          ParityCase{LabelFormat::kC1, 3, 1, 17}, ParityCase{LabelFormat::k192, 3, 1, 17},
                          ParityCase{LabelFormat::kC1, 1000, 999, 3002},
                          ParityCase{LabelFormat::k192, 1000, 1000, 2500}),
        ::testing::Values(Shape({1, 1, 1}), Shape({64, 4, 3}), Shape({32, 32, 2}), Shape({48, 5, 2, kReverse, 1}),
                          Shape({7, 3, 2, kReverse, 33}), Shape({256, 1, 2, kForward, 4096, 300}),
                          Shape({40, 4, 2, kReverse, 500, 0, false}), Shape({64, 6, 2, kReverse, 100, 0, true, false}),
                          Shape({64, 4, 2, kForward, 777, 50, true, false, ProgramLayout::kSharedScratch}))));

// The sizes the issue names; one shape each (the emulation runs every node on one core). m = 2^17:
// a range inside one chunk per format (its graph truncated after the last rank held: c1 from the
// middle of a chunk, 192 from a chunk's start, as its partial-chunk rule has it); whole 2^17 chunks
// of both formats run in `wipeproof-gpu-check --runtime=emulated parity`.
INSTANTIATE_TEST_SUITE_P(
    LargerM, EmulatedParity,
    ::testing::Combine(::testing::Values(ParityCase{LabelFormat::kC1, 4096, 4096 * 3 - 5, 4096 * 2 + 10},
                                         ParityCase{LabelFormat::k192, 4096, 4096, 4096 * 2 + 100},
                                         ParityCase{LabelFormat::kC1, 1u << 14, 1u << 14, 1u << 14},
                                         ParityCase{LabelFormat::k192, 1u << 14, 0, 1u << 14},
                                         ParityCase{LabelFormat::kC1, 1u << 17, (5ull << 17) + 7, 1000},
                                         ParityCase{LabelFormat::k192, 1u << 17, 5ull << 17, 1000}),
                       ::testing::Values(Shape({64, 2, 1, kReverse, 1000, 5000}))));

}  // namespace
}  // namespace gpu
}  // namespace wipeproof
