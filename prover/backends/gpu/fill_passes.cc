#include "prover/backends/gpu/fill_passes.h"

#include <algorithm>

namespace wipeproof {
namespace gpu {

std::vector<uint64_t> RegionChunks::PartialChunks() const {
  std::vector<uint64_t> out;
  for (uint64_t c = chunk_begin; c < whole_begin && c < chunk_end; ++c) out.push_back(c);  // at most one
  for (uint64_t c = std::max(whole_end, whole_begin); c < chunk_end; ++c) {
    if (out.empty() || out.back() != c) out.push_back(c);
  }
  return out;
}

RegionChunks DescribeRegion(bool format_192, uint32_t m, uint64_t first, uint64_t count) {
  RegionChunks r;
  r.first = first;
  r.count = count;
  r.m = m;
  const uint64_t end = first + count;
  r.chunk_begin = first / m;
  r.chunk_end = (end - 1) / m + 1;
  r.whole_begin = (first + m - 1) / m;
  r.whole_end = std::max(end / m, r.whole_begin);
  r.format_192 = format_192;
  return r;
}

RegionChunks::Graph RegionChunks::GraphOf(uint64_t chunk) const {
  const uint64_t held = first + count - chunk * m;  // ranks [0, held) end in the region
  Graph g;
  g.graph_labels = format_192 && held < m ? static_cast<uint32_t>(held) : m;
  g.ranks_needed = held < m ? static_cast<uint32_t>(held) : m;
  return g;
}

uint64_t PlannedWave::Chunks() const {
  uint64_t n = 0;
  for (const PlannedTeam& t : teams) n += t.chunks;
  return n;
}

uint32_t PlannedWave::MaxTeamChunks() const {
  uint32_t c = 0;
  for (const PlannedTeam& t : teams) c = std::max(c, t.chunks);
  return c;
}

void PlanEvenWaves(uint64_t begin, uint64_t end, const std::string& phase, bool scratch, const WaveLimits& limits,
                   std::vector<PlannedWave>* waves, std::vector<LayoutRun>* runs, uint32_t first_wave_extra) {
  if (end <= begin) return;
  const uint64_t n_total = end - begin;
  const uint32_t G = limits.team_threads;
  const uint64_t resident = std::max<uint64_t>(1, limits.resident_teams(G));
  const uint64_t first_teams = resident > first_wave_extra ? resident - first_wave_extra : 1;
  const uint64_t c_max = limits.fixed_chunks_per_team ? limits.fixed_chunks_per_team : limits.max_chunks_per_team;
  auto capacity = [&](uint64_t teams) {
    return std::max<uint64_t>(1, std::min(teams * c_max, limits.max_wave_chunks));
  };
  // The fewest waves that hold everything, then N spread over them in proportion to capacity.
  std::vector<uint64_t> cap;
  uint64_t sum = 0;
  while (sum < n_total) {
    cap.push_back(capacity(cap.empty() ? first_teams : resident));
    sum += cap.back();
  }
  std::vector<uint64_t> share(cap.size());
  uint64_t given = 0;
  for (size_t w = 0; w < cap.size(); ++w) {
    share[w] = static_cast<uint64_t>(static_cast<long double>(n_total) * cap[w] / sum);
    given += share[w];
  }
  for (size_t w = 0; given < n_total; w = (w + 1) % cap.size()) {
    if (share[w] < cap[w]) ++share[w], ++given;
  }
  uint64_t next = begin;
  for (size_t w = 0; w < cap.size(); ++w) {
    const uint64_t n = share[w];
    if (n == 0) continue;
    PlannedWave wave;
    wave.phase = phase;
    wave.team_threads = G;
    std::vector<uint32_t> sizes;
    const uint64_t teams_here = w == 0 ? first_teams : resident;
    if (limits.fixed_chunks_per_team > 0) {
      for (uint64_t left = n; left > 0;) {
        const uint32_t c = static_cast<uint32_t>(std::min<uint64_t>(left, limits.fixed_chunks_per_team));
        sizes.push_back(c);
        left -= c;
      }
    } else if (n >= teams_here) {
      const uint64_t base = n / teams_here, extra = n % teams_here;
      for (uint64_t t = 0; t < teams_here; ++t) sizes.push_back(static_cast<uint32_t>(base + (t < extra ? 1 : 0)));
    } else {
      // Fewer chunks than resident teams: one chunk per team, and more threads per team while the
      // device still holds them all.
      uint32_t g = G;
      while (g * 2 <= limits.max_team_threads && n * g * 2 <= resident * G && limits.resident_teams(g * 2) >= n) {
        g *= 2;
      }
      wave.team_threads = g;
      sizes.assign(n, 1);
    }
    for (uint32_t c : sizes) {
      PlannedTeam t;
      t.first_chunk = next;
      t.chunks = c;
      t.scratch = scratch;
      wave.teams.push_back(t);
      if (!scratch) {
        if (!runs->empty() && runs->back().chunk_end == next && runs->back().chunks_per_team == c) {
          runs->back().chunk_end += c;
        } else {
          runs->push_back({next, next + c, c});
        }
      }
      next += c;
    }
    waves->push_back(std::move(wave));
  }
}

uint64_t CompressionsPerChunk(bool format_192, uint64_t program_nodes) {
  return program_nodes * (format_192 ? 3 : 1);
}

uint64_t WaveChunksForSeconds(double seconds, double compressions_per_s, uint64_t compressions_per_chunk) {
  if (!(seconds > 0) || !(compressions_per_s > 0) || compressions_per_chunk == 0) return 1;
  const double chunks = seconds * compressions_per_s / static_cast<double>(compressions_per_chunk);
  return chunks >= 1e15 ? uint64_t{1000000000000000} : std::max<uint64_t>(1, static_cast<uint64_t>(chunks));
}

std::vector<uint64_t> PlaceFromTop(const SlotMap& map, uint64_t limit_slot, uint64_t top_slot, uint64_t block_bytes,
                                   uint64_t want, uint64_t* lowest_slot) {
  std::vector<uint64_t> placed;
  *lowest_slot = top_slot;
  const auto& begin = map.slot_begin();
  for (int64_t i = static_cast<int64_t>(map.pieces()) - 1; i >= 0 && placed.size() < want; --i) {
    const uint64_t b = begin[i], e = std::min(begin[i + 1], top_slot);
    if (e <= limit_slot || e <= b) continue;
    const uint64_t base = map.bases()[i];
    const uint64_t lo = base + (std::max(b, limit_slot) - b) * 32;
    uint64_t hi = base + (e - b) * 32;
    while (placed.size() < want && hi >= lo + block_bytes) {
      const uint64_t addr = (hi - block_bytes) & ~uint64_t{255};
      if (addr < lo) break;
      placed.push_back(addr);
      *lowest_slot = b + (addr - base) / 32;
      hi = addr;
    }
  }
  return placed;
}

}  // namespace gpu
}  // namespace wipeproof
