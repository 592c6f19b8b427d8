#include "kernels/chunk_verifier.h"

#include <string>

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
  ChunkLabeler labeler(simd, cv0);
  labeler.Label(params, result.graph_labels, 0, result.graph_labels, result.labels.data());
  return result;
}

}  // namespace wipeproof
