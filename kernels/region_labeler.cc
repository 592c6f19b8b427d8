#include "kernels/region_labeler.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "kernels/chunk_batch_labeler.h"
#include "kernels/chunk_labeler.h"
#include "kernels/cv0_cache.h"
#include "kernels/graph_schedule.h"

namespace wipeproof {

namespace {

// A work unit: chunks [first_chunk, first_chunk + chunks) that share one graph, labeled together
// by the lane-per-chunk batch labeler (or one by one when the unit is small).
struct Unit {
  uint64_t first_chunk;
  uint32_t chunks;
  uint32_t graph_labels;
};

// Below this many chunks a unit is labeled chunk by chunk: idle SIMD lanes cost more than the
// single-chunk path's scalar leaves.
constexpr uint32_t kMinBatchChunks = 4;

std::vector<Unit> PlanUnits(const RegionSpec& region, int threads) {
  const uint64_t m = region.chunk_labels, end = region.first + region.count;
  const uint64_t first_chunk = region.first / m, last_chunk = (end - 1) / m;
  const uint64_t chunks = last_chunk - first_chunk + 1;
  // Full batches, but small enough that every thread gets work on small regions.
  uint64_t per_unit = (chunks + threads - 1) / threads;
  per_unit = std::max<uint64_t>(1, std::min<uint64_t>(per_unit, ChunkBatchLabeler::kMaxChunks));
  std::vector<Unit> units;
  for (uint64_t c = first_chunk; c <= last_chunk;) {
    uint32_t graph = GraphLabelsForChunk(region.format, region.chunk_labels, c, end);
    uint64_t n = std::min<uint64_t>(per_unit, last_chunk - c + 1);
    // A 192 trailing partial chunk has its own graph: never batched with full chunks.
    while (n > 1 && GraphLabelsForChunk(region.format, region.chunk_labels, c + n - 1, end) != graph) --n;
    units.push_back(Unit{c, static_cast<uint32_t>(n), graph});
    c += n;
  }
  return units;
}

}  // namespace

Status LabelRegion(const RegionSpec& region, uint8_t* out, const RegionLabelOptions& options) {
  WP_RETURN_IF_ERROR(ValidateRegion(region));
  const uint64_t m = region.chunk_labels;
  const uint64_t end = region.first + region.count;
  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, threads);
  const std::vector<Unit> units = PlanUnits(region, threads);
  threads = static_cast<int>(std::min<size_t>(threads, units.size()));

  std::atomic<uint64_t> next{0}, done_labels{0};
  std::mutex progress_mu;
  auto last_report = std::chrono::steady_clock::now();
  auto worker = [&] {
    // Labelers per graph size (only a 192 trailing partial chunk differs from m).
    std::unique_ptr<ChunkBatchLabeler> batch;
    std::unique_ptr<ChunkLabeler> single;
    uint32_t labeler_graph = 0;
    for (;;) {
      if (options.cancel && options.cancel->load(std::memory_order_relaxed)) return;
      uint64_t u = next.fetch_add(1);
      if (u >= units.size()) return;
      const Unit& unit = units[u];
      if (unit.graph_labels != labeler_graph) {
        Cv0Table cv0 = region.format == LabelFormat::k192 ? Cv0TableFor(unit.graph_labels) : Cv0Table{};
        batch = std::make_unique<ChunkBatchLabeler>(options.simd, cv0);
        single = std::make_unique<ChunkLabeler>(options.simd, cv0);
        labeler_graph = unit.graph_labels;
      }
      ChunkBatchLabeler::Chunk chunks[ChunkBatchLabeler::kMaxChunks];
      uint64_t unit_labels = 0;
      for (uint32_t k = 0; k < unit.chunks; ++k) {
        const uint64_t c = unit.first_chunk + k;
        const uint64_t lo = std::max(region.first, c * m), hi = std::min(end, c * m + m);
        chunks[k].params = DeriveChunkHashParams(region.format, region.seed, c, region.chunk_labels, unit.graph_labels);
        chunks[k].rank_begin = static_cast<uint32_t>(lo - c * m);
        chunks[k].rank_end = static_cast<uint32_t>(hi - c * m);
        chunks[k].out = out + (lo - region.first) * kLabelBytes;
        unit_labels += hi - lo;
      }
      if (unit.chunks >= kMinBatchChunks) {
        batch->Label(unit.graph_labels, chunks, static_cast<int>(unit.chunks));
      } else {
        for (uint32_t k = 0; k < unit.chunks; ++k) {
          single->Label(chunks[k].params, unit.graph_labels, chunks[k].rank_begin, chunks[k].rank_end, chunks[k].out);
        }
      }
      uint64_t done = done_labels.fetch_add(unit_labels) + unit_labels;
      if (options.progress) {
        std::unique_lock<std::mutex> lock(progress_mu, std::try_to_lock);
        auto now = std::chrono::steady_clock::now();
        if (lock.owns_lock() && now - last_report >= std::chrono::milliseconds(100)) {
          last_report = now;
          options.progress(done, region.count);
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (done_labels.load() != region.count) return FailedPreconditionError("labeling cancelled");
  if (options.progress) options.progress(region.count, region.count);
  return Status::Ok();
}

}  // namespace wipeproof
