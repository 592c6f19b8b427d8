#include "kernels/region_labeler.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "kernels/chunk_labeler.h"
#include "kernels/cv0_cache.h"
#include "kernels/graph_schedule.h"

namespace wipeproof {

uint32_t GraphLabelsForChunk(LabelFormat format, uint32_t chunk_labels, uint64_t chunk, uint64_t region_end) {
  if (format == LabelFormat::kC1) return chunk_labels;
  uint64_t chunk_start = chunk * chunk_labels;
  uint64_t left = region_end - chunk_start;
  return left < chunk_labels ? static_cast<uint32_t>(left) : chunk_labels;
}

Status ValidateRegion(const RegionSpec& region) {
  if (region.chunk_labels < 1 || region.chunk_labels > kMaxChunkLabels) {
    return InvalidArgumentError("chunk_labels (m) must be in [1, 1048576], got " +
                                std::to_string(region.chunk_labels));
  }
  if (region.count == 0) return InvalidArgumentError("label count must be at least 1");
  if (region.first + region.count < region.first || region.first + region.count > (1ull << 62)) {
    return InvalidArgumentError("label range [first, first + count) exceeds the index space (2^62)");
  }
  return Status::Ok();
}

Status LabelRegion(const RegionSpec& region, uint8_t* out, const RegionLabelOptions& options) {
  WP_RETURN_IF_ERROR(ValidateRegion(region));
  const uint64_t m = region.chunk_labels;
  const uint64_t end = region.first + region.count;
  const uint64_t first_chunk = region.first / m;
  const uint64_t chunks = (end - 1) / m - first_chunk + 1;
  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = static_cast<int>(std::max<uint64_t>(1, std::min<uint64_t>(threads, chunks)));

  Cv0Table cv0;
  if (region.format == LabelFormat::k192) cv0 = Cv0TableFor(region.chunk_labels);

  std::atomic<uint64_t> next{0}, done_labels{0};
  std::mutex progress_mu;
  auto last_report = std::chrono::steady_clock::now();
  auto worker = [&] {
    ChunkLabeler labeler(options.simd, cv0);
    for (;;) {
      if (options.cancel && options.cancel->load(std::memory_order_relaxed)) return;
      uint64_t i = next.fetch_add(1);
      if (i >= chunks) return;
      uint64_t c = first_chunk + i;
      uint64_t lo = std::max(region.first, c * m), hi = std::min(end, c * m + m);
      uint32_t graph_labels = GraphLabelsForChunk(region.format, region.chunk_labels, c, end);
      ChunkHashParams params = DeriveChunkHashParams(region.format, region.seed, c, region.chunk_labels, graph_labels);
      if (graph_labels != region.chunk_labels && cv0.nodes) {
        // A 192 trailing partial chunk has its own graph and its own table.
        ChunkLabeler partial(options.simd, Cv0TableFor(graph_labels));
        partial.Label(params, graph_labels, lo - c * m, hi - c * m, out + (lo - region.first) * kLabelBytes);
      } else {
        labeler.Label(params, graph_labels, static_cast<uint32_t>(lo - c * m), static_cast<uint32_t>(hi - c * m),
                      out + (lo - region.first) * kLabelBytes);
      }
      uint64_t done = done_labels.fetch_add(hi - lo) + (hi - lo);
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
