// The GPU fill kernel's logic, run on the CPU (label-spec.md §3-§6): the unrolled compression, the
// device-side chunk key derivation, the packed schedule, and whole teams of emulated threads, all
// compared byte for byte with the CPU engine (the oracle), for both formats and many team shapes.
// The same functions run inside the CUDA/HIP kernels; gpu_device_test.cc repeats the parity
// checks on a real device when one is present.
#include <gtest/gtest.h>

#include <functional>
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
using testing::HazardCounts;
using testing::HazardObserver;
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

// The two lookup shapes (kernel_args.h LookupArgs): eight threads a label, one word each, write
// the bytes one thread a label writes: label k = the 16 bytes at addresses[2k], then those at
// addresses[2k + 1]. Items run in reverse, as threads of a launch may.
TEST(Lookup, EightThreadsALabelWriteTheSameBytesAsOne) {
  std::mt19937_64 rng(11);
  std::vector<uint32_t> table(4096);
  for (auto& w : table) w = static_cast<uint32_t>(rng());
  for (uint32_t n : {1u, 3u, 32u, 257u}) {
    std::vector<uint64_t> addresses(2 * n);
    for (auto& a : addresses) a = reinterpret_cast<uint64_t>(table.data() + (rng() % (table.size() / 4)) * 4);
    std::vector<uint32_t> one(n * 8, 0), eight(n * 8, 0);
    LookupArgs a;
    a.addresses = addresses.data();
    a.n = n;
    a.out = one.data();
    for (uint32_t k = 0; k < n; ++k) LookupOne(a, k);
    a.out = eight.data();
    a.threads_per_label = 8;
    for (uint64_t t = n * 8ull; t-- > 0;) LookupWord(a, t);
    EXPECT_EQ(eight, one) << "n=" << n;
    for (uint32_t k = 0; k < n; ++k) {  // and both are the halves, in order
      const auto* h0 = reinterpret_cast<const uint32_t*>(addresses[2 * k]);
      const auto* h1 = reinterpret_cast<const uint32_t*>(addresses[2 * k + 1]);
      for (int w = 0; w < 4; ++w) {
        ASSERT_EQ(one[k * 8 + w], h0[w]);
        ASSERT_EQ(one[k * 8 + 4 + w], h1[w]);
      }
    }
  }
}

// The kernel places indices itself (LookupArgs::indices) and checks them again: an index outside
// the region is answered with zeros, in both shapes, and never followed through the tables (here
// the tables are empty arrays: following them would read out of bounds, which ASan/UBSan builds
// of this test would report).
TEST(Lookup, AnIndexOutsideTheRegionIsAnsweredWithZeros) {
  const uint64_t slot_begin[2] = {0, 4};
  std::vector<uint32_t> piece(4 * 8);
  for (uint32_t i = 0; i < piece.size(); ++i) piece[i] = 1000 + i;
  const uint64_t bases[1] = {reinterpret_cast<uint64_t>(piece.data())};
  const uint32_t buckets[1] = {0};
  LookupArgs a;
  a.places.first = 10;
  a.places.count = 4;  // global indices 10..13, natural layout (no runs), one piece
  a.places.m = 4;
  a.places.m_shift = 2;
  a.places.slot_begin = slot_begin;
  a.places.bases = bases;
  a.places.bucket_piece = buckets;
  a.places.bucket_shift = 2;
  const uint64_t indices[5] = {9, 10, 13, 14, ~uint64_t{0}};
  a.indices = indices;
  a.n = 5;
  for (const uint32_t threads : {1u, 8u}) {
    std::vector<uint32_t> out(5 * 8, 7);
    a.out = out.data();
    a.threads_per_label = threads;
    if (threads == 1) {
      for (uint32_t k = 0; k < a.n; ++k) LookupOne(a, k);
    } else {
      for (uint64_t t = 0; t < a.n * 8ull; ++t) LookupWord(a, t);
    }
    for (int w = 0; w < 8; ++w) {
      EXPECT_EQ(out[0 * 8 + w], 0u) << threads;                // 9: before the region
      EXPECT_EQ(out[1 * 8 + w], piece[0 * 8 + w]) << threads;  // 10: slot 0
      EXPECT_EQ(out[2 * 8 + w], piece[3 * 8 + w]) << threads;  // 13: slot 3
      EXPECT_EQ(out[3 * 8 + w], 0u) << threads;                // 14: past it
      EXPECT_EQ(out[4 * 8 + w], 0u) << threads;
    }
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

// The race check (tests/support/gpu_test_util.h HazardObserver): within a super-step no label is
// written by one item and touched by another, no two teams of a launch share a label with a write
// involved, and no access leaves the pieces and work areas. On every graph size the kernel runs:
// small m with the labels hashed and compared with the CPU engine; m = 2^14 (two chunks, as two
// teams and as one team of two) and one chunk of 2^17 by addresses only (they do not depend on the
// labels); both formats, in place and in scratch teams (whose output ops copy ranks to the region:
// the remap), and scratch teams on the shared-scratch layout.
struct RaceCase {
  LabelFormat format;
  uint32_t m;
  uint32_t chunks;
  uint32_t chunks_per_team;
  bool in_place;
  ProgramLayout layout;
  bool hashed;  // false: addresses only
};

void PrintTo(const RaceCase& c, std::ostream* os) {
  *os << LabelFormatName(c.format) << " m=" << c.m << " chunks=" << c.chunks << " C=" << c.chunks_per_team
      << (c.in_place ? " in place" : " scratch teams")
      << (c.layout == ProgramLayout::kSharedScratch ? " shared-scratch layout" : "")
      << (c.hashed ? " hashed" : " addresses only");
}

class RaceCheck : public ::testing::TestWithParam<RaceCase> {};

TEST_P(RaceCheck, NoItemTouchesAnotherItemsLabelWithinAStep) {
  const RaceCase c = GetParam();
  const RegionSpec spec = Spec(c.format, c.m, 0, static_cast<uint64_t>(c.m) * c.chunks);
  HazardObserver hazards(!c.hashed);
  DirectRunOptions o;
  o.team_threads = 1;
  o.chunks_per_team = c.chunks_per_team;
  o.teams = c.chunks;  // every team of the region in one launch
  o.piece_labels = c.m + c.m / 3;  // pieces that cut team blocks
  o.in_place = c.in_place;
  o.program_layout = c.layout;
  o.hazards = &hazards;
  const std::vector<uint8_t> got = DirectRun(spec, o);
  if (c.hashed) EXPECT_EQ(got, Reference(spec));
  const DeviceProgram program = BuildDeviceProgram(c.m, c.m, true, c.layout);
  const HazardCounts& n = hazards.counts();
  EXPECT_EQ(n.steps, static_cast<uint64_t>(program.steps) * ((c.chunks + c.chunks_per_team - 1) / c.chunks_per_team));
  EXPECT_GE(n.accesses, program.nodes * c.chunks);  // at least every node's write
  EXPECT_EQ(n.strays, 0u);
  EXPECT_EQ(n.step_conflicts, 0u);
  EXPECT_EQ(n.team_conflicts, 0u);
}

constexpr ProgramLayout kWorkLayout = ProgramLayout::kWork;
constexpr ProgramLayout kShared = ProgramLayout::kSharedScratch;

INSTANTIATE_TEST_SUITE_P(
    SmallM, RaceCheck,
    ::testing::Values(RaceCase{LabelFormat::kC1, 2, 3, 3, true, kWorkLayout, true},
                      RaceCase{LabelFormat::kC1, 17, 3, 3, true, kWorkLayout, true},
                      RaceCase{LabelFormat::k192, 17, 3, 1, true, kWorkLayout, true},
                      RaceCase{LabelFormat::kC1, 1000, 3, 3, true, kWorkLayout, true},
                      RaceCase{LabelFormat::k192, 1000, 3, 2, false, kWorkLayout, true},
                      RaceCase{LabelFormat::kC1, 4096, 3, 3, false, kShared, true},
                      RaceCase{LabelFormat::k192, 4096, 2, 2, true, kWorkLayout, true}));

INSTANTIATE_TEST_SUITE_P(
    LargeM, RaceCheck,
    ::testing::Values(RaceCase{LabelFormat::kC1, 1u << 14, 2, 1, true, kWorkLayout, false},
                      RaceCase{LabelFormat::kC1, 1u << 14, 2, 2, false, kWorkLayout, false},
                      RaceCase{LabelFormat::k192, 1u << 14, 2, 2, true, kWorkLayout, false},
                      RaceCase{LabelFormat::k192, 1u << 14, 2, 1, false, kWorkLayout, false},
                      RaceCase{LabelFormat::kC1, 1u << 14, 2, 1, false, kShared, false},
                      RaceCase{LabelFormat::kC1, 1u << 17, 1, 1, true, kWorkLayout, false},
                      RaceCase{LabelFormat::kC1, 1u << 17, 1, 1, false, kWorkLayout, false},
                      RaceCase{LabelFormat::k192, 1u << 17, 1, 1, true, kWorkLayout, false},
                      RaceCase{LabelFormat::k192, 1u << 17, 1, 1, false, kWorkLayout, false}));

// The check can fail: two super-steps run as one (every op of a step depends on one of the step
// before, so the merged step holds a read of a label another item writes) are reported.
TEST(RaceCheckControl, TwoStepsRunAsOneAreReported) {
  const RegionSpec spec = Spec(LabelFormat::kC1, 1000, 0, 2000);
  HazardObserver hazards(true);
  DirectRunOptions o;
  o.team_threads = 1;
  o.chunks_per_team = 2;
  o.teams = 1;
  o.hazards = &hazards;
  o.edit_program = [](DeviceProgram* p) {
    // Steps 3 and 4 as one: drop the bound between them and continue step 3's running units.
    uint32_t units = DecodeOp(p->words.data(), p->step_begin[4] - 1).unit_end;
    for (uint32_t k = p->step_begin[4]; k < p->step_begin[5]; ++k) {
      units += OpUnits(DecodeOp(p->words.data(), k));
      p->words[k * kOpWords + 3] = units;
    }
    p->step_begin.erase(p->step_begin.begin() + 4);
    --p->steps;
    ASSERT_TRUE(CheckDeviceProgram(*p).ok());  // well formed: only the levelling is broken
  };
  DirectRun(spec, o);
  EXPECT_GT(hazards.counts().step_conflicts, 0u);
  EXPECT_EQ(hazards.counts().strays, 0u);
}

// Every program the fill builds passes the host's check; each kind of corruption is named.
TEST(DeviceProgram, CheckAcceptsEveryBuiltProgramAndNamesEachCorruption) {
  for (uint32_t m : {1u, 2u, 3u, 17u, 1000u, 4096u, 1u << 14}) {
    for (uint32_t ranks : {1u, m / 2 + 1, m}) {
      if (ranks > m) continue;
      for (ProgramLayout layout : {ProgramLayout::kWork, ProgramLayout::kSharedScratch}) {
        for (bool levelled : {false, true}) {
          const Status st = CheckDeviceProgram(BuildDeviceProgram(m, ranks, levelled, layout));
          EXPECT_TRUE(st.ok()) << "m=" << m << " ranks=" << ranks << ": " << st.ToString();
        }
      }
    }
  }
  const DeviceProgram good = BuildDeviceProgram(1000, 1000);
  auto expect = [&](const std::string& what, const std::function<void(DeviceProgram*)>& edit) {
    DeviceProgram p = good;
    edit(&p);
    const Status st = CheckDeviceProgram(p);
    EXPECT_EQ(st.code(), StatusCode::kInternal) << what;
    EXPECT_NE(st.message().find(what), std::string::npos) << st.ToString();
  };
  expect("words for", [](DeviceProgram* p) { p->words.pop_back(); });
  expect("step bounds do not run", [](DeviceProgram* p) { p->step_begin.back() = p->ops - 1; });
  expect("step 2 has no ops", [](DeviceProgram* p) { p->step_begin[3] = p->step_begin[2]; });
  expect("unit count", [](DeviceProgram* p) { p->words[3] += 1; });
  expect("unknown kind", [](DeviceProgram* p) { p->words[0] |= 7u << 21; });
  expect("slots up to", [](DeviceProgram* p) { p->work_labels = 4; });
  expect("node numbers past", [](DeviceProgram* p) { p->nodes = 1; });
}

// A launch whose team or program does not fit its bounds ends with a fault bit instead of
// searching past its step forever (or addressing another chunk's labels): a chunk divider made for
// a smaller C (units past the step's last op), and a step whose op range is empty.
// threat-model: T-DEVICE-LOST
TEST(TeamExecutor, AnInconsistentLaunchRaisesAFaultAndEnds) {
  const RegionSpec spec = Spec(LabelFormat::kC1, 1000, 0, 3000);
  for (int corruption = 0; corruption < 2; ++corruption) {
    uint32_t fault = 0;
    DirectRunOptions o;
    o.team_threads = 8;
    o.chunks_per_team = 3;
    o.teams = 1;
    o.fault = &fault;
    if (corruption == 0) {
      o.edit_teams = [](std::vector<TeamDesc>* teams) {
        const ChunkDivider wrong = MakeChunkDivider(2);  // the team has 3 chunks
        (*teams)[0].chunk_magic = wrong.magic;
        (*teams)[0].chunk_shift = wrong.shift;
      };
    } else {
      o.edit_program = [](DeviceProgram* p) { p->step_begin[2] = p->step_begin[1]; };
    }
    const std::vector<uint8_t> got = DirectRun(spec, o);
    EXPECT_EQ(fault, corruption == 0 ? kFaultDivider : kFaultEmptyStep) << "corruption " << corruption;
    EXPECT_NE(got, Reference(spec));
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
