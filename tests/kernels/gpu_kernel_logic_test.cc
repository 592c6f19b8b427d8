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
      DeriveChunkWords(c1, chunk, words);
      EXPECT_EQ(0, std::memcmp(words, want_c1.key, 32)) << "c1 m=" << m << " chunk=" << chunk;
      const uint32_t m_partial = m > 2 ? m - 2 : m;  // 192's descriptor follows the chunk's own graph
      const SessionConstants s192 = BuildSessionConstants(LabelFormat::k192, seed, m, m_partial);
      const ChunkHashParams want_192 = DeriveChunkHashParams(LabelFormat::k192, seed, chunk, m, m_partial);
      DeriveChunkWords(s192, chunk, words);
      EXPECT_EQ(0, std::memcmp(words, want_192.block2, 64)) << "192 m=" << m << " chunk=" << chunk;
      EXPECT_EQ(0, std::memcmp(s192.int_key, want_192.key, 32));
      EXPECT_EQ(0, std::memcmp(s192.src_key, want_192.src_key, 32));
    }
  }
}

TEST(DeviceProgram, HoldsEveryOpOnceWithItsNodeNumbers) {
  for (uint32_t m : {1u, 2u, 3u, 5u, 17u, 1000u, 4096u, 5000u, 1u << 14}) {
    for (uint32_t ranks : {1u, m / 2 + 1, m}) {
      if (ranks > m) continue;
      const std::vector<GraphOp> ops = BuildGraphProgram(m, ranks);
      for (bool levelled : {false, true}) {
        const DeviceProgram p = BuildDeviceProgram(m, ranks, levelled);
        ASSERT_EQ(ops.size(), p.ops);
        ASSERT_EQ(p.words.size(), p.ops * kOpWords);
        // The same multiset of ops (the levelled program reorders them).
        auto key = [](uint32_t kind, uint32_t src, uint32_t dst, uint32_t width, uint32_t lb, uint64_t nb) {
          return std::make_tuple(kind, src, dst, width, lb, nb);
        };
        std::multiset<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint64_t>> want, got;
        uint64_t nodes = 0;
        for (const GraphOp& op : ops) {
          const bool out = op.kind == GraphOpKind::kOutput;
          want.insert(key(static_cast<uint32_t>(op.kind), op.src, out ? op.src : op.dst, op.width, out ? 0 : op.log_bit,
                          op.node_base));
          if (!out) nodes = std::max<uint64_t>(nodes, op.node_base + op.width);
        }
        uint32_t steps = 0;
        for (uint32_t k = 0; k < p.ops; ++k) {
          const DeviceOp op = DecodeOp(p.words.data(), k);
          const bool out = op.kind == kOpOutput;
          got.insert(key(op.kind, op.src, op.dst, op.width, out ? 0 : op.log_bit, out ? op.first_rank : op.node_base));
          steps += op.step_end;
          if (!levelled) ASSERT_TRUE(op.step_end);
        }
        ASSERT_TRUE(DecodeOp(p.words.data(), p.ops - 1).step_end);
        EXPECT_EQ(want, got) << "m=" << m;
        EXPECT_EQ(steps, p.steps);
        EXPECT_EQ(nodes, p.nodes);
        if (levelled && m >= 1000) EXPECT_LT(p.steps * 3, p.ops * 2) << "super-steps should merge ops";
      }
    }
  }
}

// Records, per op, which items read and wrote each label; any label written by one item and
// touched by another would make the result depend on thread timing on a GPU.
class HazardObserver {
 public:
  void Read(uint32_t item, const uint32_t* label) const { reads_[label].insert(item); }
  void Write(uint32_t item, const uint32_t* label) const { writes_[label].insert(item); }
  // Returns the number of conflicting labels, and clears.
  int Conflicts() const {
    int conflicts = 0;
    for (const auto& [label, writers] : writes_) {
      std::set<uint32_t> touched = writers;
      auto r = reads_.find(label);
      if (r != reads_.end()) touched.insert(r->second.begin(), r->second.end());
      if (touched.size() > 1) ++conflicts;
    }
    reads_.clear();
    writes_.clear();
    return conflicts;
  }

 private:
  mutable std::map<const uint32_t*, std::set<uint32_t>> reads_, writes_;
};

TEST(TeamExecutor, ItemsOfOneSuperStepNeverTouchAnotherItemsLabels) {
  for (uint32_t m : {2u, 3u, 17u, 1000u, 4096u}) {
    for (uint32_t chunks : {1u, 3u}) {
      RegionSpec spec = Spec(LabelFormat::kC1, m, 0, static_cast<uint64_t>(m) * chunks);
      const DeviceProgram program = BuildDeviceProgram(m, m);
      const GraphShape shape = ShapeForChunkLabels(m);
      std::vector<uint32_t> region(spec.count * 8), scratch(static_cast<size_t>(chunks) * shape.scratch_labels * 8);
      std::vector<uint32_t> shared(FillSharedBytes(chunks, shape.scratch_labels, false) / 4);
      uint64_t slot_begin[2] = {0, spec.count}, base[1] = {reinterpret_cast<uint64_t>(region.data())};
      uint64_t team_table[1] = {reinterpret_cast<uint64_t>(scratch.data())};
      FillWaveArgs a;
      a.session = BuildSessionConstants(spec.format, spec.seed, m, m);
      a.program = program.words.data();
      a.op_count = program.ops;
      a.scratch_labels = shape.scratch_labels;
      a.region_count = spec.count;
      a.chunk_end = chunks;
      a.chunks_per_team = chunks;
      a.team_scratch = team_table;
      a.slots = {slot_begin, base, 1};
      const Team team = MakeTeam(a, 0, shared.data());
      TeamPrologue(a, team, shared.data(), 0, 1);
      // One "thread" runs everything; items are numbered across the whole super-step.
      HazardObserver obs;
      uint32_t offset = 0;
      for (uint32_t k = 0; k < program.ops; ++k) {
        const DeviceOp op = DecodeOp(program.words.data(), k);
        struct Shifted {
          const HazardObserver* obs;
          uint32_t offset;
          void Read(uint32_t item, const uint32_t* label) const { obs->Read(offset + item, label); }
          void Write(uint32_t item, const uint32_t* label) const { obs->Write(offset + item, label); }
        } shifted{&obs, offset};
        TeamRunOp<kFormatC1>(a, team, op, 0, 0, 1, shifted);
        offset += OpItems(op, chunks);
        if (op.step_end) {
          ASSERT_EQ(0, obs.Conflicts()) << "m=" << m << " chunks=" << chunks << " step ending at op " << k;
          offset = 0;
        }
      }
      EXPECT_EQ(Reference(spec), std::vector<uint8_t>(reinterpret_cast<uint8_t*>(region.data()),
                                                      reinterpret_cast<uint8_t*>(region.data()) + spec.count * 32));
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
      << (o.order == EmulatedThreadOrder::kReverse ? " reverse" : "") << (o.shared ? " shared" : "")
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
  ASSERT_EQ(want.size(), got.size()) << "a write outside a piece, or a failed launch";
  for (uint64_t i = 0; i < spec.count; ++i) {
    ASSERT_EQ(0, std::memcmp(want.data() + i * 32, got.data() + i * 32, 32))
        << LabelFormatName(c.format) << " m=" << c.m << " first label that differs: " << spec.first + i;
  }
}

DirectRunOptions Shape(uint32_t g, uint32_t c, uint32_t teams,
                       EmulatedThreadOrder order = EmulatedThreadOrder::kForward, bool shared = false,
                       uint64_t piece = 777, uint64_t cv0 = 0, bool levelled = true) {
  DirectRunOptions o;
  o.levelled = levelled;
  o.team_threads = g;
  o.chunks_per_team = c;
  o.teams = teams;
  o.order = order;
  o.shared = shared;
  o.piece_labels = piece;
  o.cv0_nodes = cv0;
  return o;
}

// Small m: many shapes, both thread orders, partial chunks at both ends, pieces that cut chunks.
INSTANTIATE_TEST_SUITE_P(
    SmallM, EmulatedParity,
    ::testing::Combine(::testing::Values(ParityCase{LabelFormat::kC1, 1, 5, 9}, ParityCase{LabelFormat::k192, 1, 5, 9},
                                         ParityCase{LabelFormat::kC1, 3, 1, 17},
                                         ParityCase{LabelFormat::k192, 3, 1, 17},
                                         ParityCase{LabelFormat::kC1, 1000, 999, 3002},
                                         ParityCase{LabelFormat::k192, 1000, 1000, 2500}),
                       ::testing::Values(Shape(1, 1, 1), Shape(64, 4, 3), Shape(32, 32, 2),
                                         Shape(48, 5, 2, EmulatedThreadOrder::kReverse, false, 1),
                                         Shape(7, 3, 2, EmulatedThreadOrder::kReverse, true, 33),
                                         Shape(256, 1, 2, EmulatedThreadOrder::kForward, false, 4096, 300),
                                         Shape(40, 4, 2, EmulatedThreadOrder::kReverse, false, 500, 0, false))));

// The sizes the issue names; one shape each (the emulation runs every node on one core).
INSTANTIATE_TEST_SUITE_P(
    LargerM, EmulatedParity,
    ::testing::Combine(::testing::Values(ParityCase{LabelFormat::kC1, 4096, 4096 * 3 - 5, 4096 + 10},
                                         ParityCase{LabelFormat::k192, 4096, 4096, 4096 + 100},
                                         ParityCase{LabelFormat::kC1, 1u << 14, 1u << 14, 1u << 14},
                                         ParityCase{LabelFormat::k192, 1u << 14, 0, 1u << 14}),
                       ::testing::Values(Shape(64, 2, 1, EmulatedThreadOrder::kReverse, false, 1000, 5000))));

}  // namespace
}  // namespace gpu
}  // namespace wipeproof
