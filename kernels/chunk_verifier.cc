#include "kernels/chunk_verifier.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "kernels/chunk_batch_labeler.h"
#include "kernels/chunk_labeler.h"
#include "kernels/cv0_cache.h"
#include "kernels/graph_schedule.h"
#include "kernels/region_labeler.h"

namespace wipeproof {

StatusOr<ChunkOutputs> RecomputeChunk(LabelFormat format, const uint8_t seed[kSeedBytes], uint32_t chunk_labels,
                                      uint64_t chunk, uint64_t region_end, SimdLevel simd) {
  if (chunk_labels < 1 || chunk_labels > kMaxChunkLabels) {
    return InvalidArgumentError("chunk_labels (m) must be in [1, 1048576], got " + std::to_string(chunk_labels));
  }
  if (chunk >= (1ull << 62) / chunk_labels || chunk * chunk_labels >= region_end) {
    return InvalidArgumentError("chunk " + std::to_string(chunk) + " is outside the region");
  }
  ChunkOutputs result;
  result.chunk = chunk;
  result.first_label = chunk * chunk_labels;
  result.graph_labels = GraphLabelsForChunk(format, chunk_labels, chunk, region_end);
  result.labels.resize(static_cast<size_t>(result.graph_labels) * kLabelBytes);
  ChunkHashParams params = DeriveChunkHashParams(format, seed, chunk, chunk_labels, result.graph_labels);
  Cv0Table cv0 = format == LabelFormat::k192 ? Cv0TableFor(result.graph_labels) : Cv0Table{};
  // One labeler per thread, kept between calls: its scratch and its copy of the schedule are
  // reused, which matters to a verifier recomputing chunk after chunk.
  thread_local std::unique_ptr<ChunkLabeler> labeler;
  if (!labeler || labeler->simd() != simd || labeler->cv0().words != cv0.words) {
    labeler = std::make_unique<ChunkLabeler>(simd, cv0);
  }
  labeler->Label(params, result.graph_labels, 0, result.graph_labels, result.labels.data());
  return result;
}

}  // namespace wipeproof

namespace wipeproof {

Status RecomputeLabels(const RegionSpec& region, const uint64_t* indices, size_t n, uint8_t* out, int threads,
                       SimdLevel simd) {
  WP_RETURN_IF_ERROR(ValidateRegion(region));
  const uint64_t m = region.chunk_labels, end = region.first + region.count;
  // Requests sorted by (chunk, rank): (index, position in the request).
  std::vector<std::pair<uint64_t, size_t>> order(n);
  for (size_t i = 0; i < n; ++i) {
    if (indices[i] < region.first || indices[i] >= end) {
      return InvalidArgumentError("label index " + std::to_string(indices[i]) + " is outside the region [" +
                                  std::to_string(region.first) + ", " + std::to_string(end) + ")");
    }
    order[i] = {indices[i], i};
  }
  std::sort(order.begin(), order.end());
  // One entry per distinct chunk: the slice of `order` it serves.
  struct Job {
    uint64_t chunk;
    size_t begin, end;
    uint32_t graph_labels;
  };
  std::vector<Job> jobs;
  for (size_t i = 0; i < n;) {
    uint64_t c = order[i].first / m;
    size_t j = i;
    while (j < n && order[j].first / m == c) ++j;
    jobs.push_back(Job{c, i, j, GraphLabelsForChunk(region.format, region.chunk_labels, c, end)});
    i = j;
  }
  // Batches of up to 16 chunks with one graph size, spread over the threads.
  std::vector<std::pair<size_t, size_t>> batches;
  for (size_t i = 0; i < jobs.size();) {
    size_t j = i + 1;
    while (j < jobs.size() && j - i < ChunkBatchLabeler::kMaxChunks && jobs[j].graph_labels == jobs[i].graph_labels) ++j;
    batches.push_back({i, j});
    i = j;
  }
  int workers = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  workers = std::max(1, std::min<int>(workers, static_cast<int>(batches.size())));
  std::atomic<size_t> next{0};
  auto work = [&] {
    std::vector<uint8_t> scratch;
    for (size_t b; (b = next.fetch_add(1)) < batches.size();) {
      auto [bi, bj] = batches[b];
      const uint32_t graph = jobs[bi].graph_labels;
      Cv0Table cv0 = region.format == LabelFormat::k192 ? Cv0TableFor(graph) : Cv0Table{};
      ChunkBatchLabeler::Chunk chunks[ChunkBatchLabeler::kMaxChunks];
      size_t total = 0;
      for (size_t k = bi; k < bj; ++k) {
        const Job& job = jobs[k];
        chunks[k - bi].rank_begin = static_cast<uint32_t>(order[job.begin].first - job.chunk * m);
        chunks[k - bi].rank_end = static_cast<uint32_t>(order[job.end - 1].first - job.chunk * m) + 1;
        total += chunks[k - bi].rank_end - chunks[k - bi].rank_begin;
      }
      scratch.resize(total * kLabelBytes);
      size_t offset = 0;
      for (size_t k = bi; k < bj; ++k) {
        chunks[k - bi].params = DeriveChunkHashParams(region.format, region.seed, jobs[k].chunk, region.chunk_labels, graph);
        chunks[k - bi].out = scratch.data() + offset;
        offset += static_cast<size_t>(chunks[k - bi].rank_end - chunks[k - bi].rank_begin) * kLabelBytes;
      }
      ChunkBatchLabeler labeler(simd, cv0);
      labeler.Label(graph, chunks, static_cast<int>(bj - bi));
      for (size_t k = bi; k < bj; ++k) {
        const Job& job = jobs[k];
        for (size_t r = job.begin; r < job.end; ++r) {
          uint64_t rank = order[r].first - job.chunk * m;
          const uint8_t* src = chunks[k - bi].out + (rank - chunks[k - bi].rank_begin) * kLabelBytes;
          std::memcpy(out + order[r].second * kLabelBytes, src, kLabelBytes);
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return Status::Ok();
}

}  // namespace wipeproof
