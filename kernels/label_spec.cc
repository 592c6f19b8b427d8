// Spec §2 regions, §4 and §5 per-chunk key material.
#include "kernels/label_spec.h"

#include <cstring>

#include "kernels/blake3_small.h"
#include "kernels/graph_schedule.h"

namespace wipeproof {
namespace {

void PutBe64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}

template <size_t N>
void DeriveKey(const char (&context)[N], const uint8_t* material, size_t len, uint8_t out[32]) {
  Blake3DeriveKey(context, N - 1, material, len, out, 32);
}

}  // namespace

const char* LabelFormatName(LabelFormat format) {
  return format == LabelFormat::kC1 ? "posedb-blake3-c1" : "posedb-blake3-192";
}

bool ParseLabelFormat(const std::string& name, LabelFormat* out) {
  if (name == "posedb-blake3-c1") {
    *out = LabelFormat::kC1;
    return true;
  }
  if (name == "posedb-blake3-192") {
    *out = LabelFormat::k192;
    return true;
  }
  return false;
}

ChunkHashParams DeriveChunkHashParams(LabelFormat format, const uint8_t seed[kSeedBytes], uint64_t chunk,
                                      uint32_t chunk_labels, uint32_t graph_labels) {
  ChunkHashParams p{};
  p.format = format;
  uint8_t key[32];
  if (format == LabelFormat::kC1) {
    uint8_t material[kSeedBytes + 16];
    std::memcpy(material, seed, kSeedBytes);
    PutBe64(material + kSeedBytes, chunk);
    PutBe64(material + kSeedBytes + 8, chunk_labels);
    DeriveKey(kC1ChunkKeyContext, material, sizeof material, key);
    Blake3KeyWords(key, p.key);
    return p;
  }
  Blake3ContextKey(k192InternalContext, sizeof k192InternalContext - 1, p.key);
  Blake3ContextKey(k192SourceContext, sizeof k192SourceContext - 1, p.src_key);
  uint8_t block2[64];
  uint8_t seed_material[kSeedBytes + 8];
  std::memcpy(seed_material, seed, kSeedBytes);
  PutBe64(seed_material + kSeedBytes, chunk);
  DeriveKey(k192ChunkSeedContext, seed_material, sizeof seed_material, block2);
  uint8_t descriptor_material[24];
  PutBe64(descriptor_material, graph_labels);
  PutBe64(descriptor_material + 8, static_cast<uint64_t>(ShapeForChunkLabels(graph_labels).n));
  PutBe64(descriptor_material + 16, k192LabelBits);
  DeriveKey(k192DescriptorContext, descriptor_material, sizeof descriptor_material, block2 + 32);
  for (int i = 0; i < 16; ++i) p.block2[i] = LoadLe32(block2 + 4 * i);
  return p;
}

Status ValidateRegion(const RegionSpec& region) {
  if (!ChunkLabelsInRange(region.chunk_labels)) {
    return InvalidArgumentError("chunk_labels (m) must be in [1, 1048576], got " + std::to_string(region.chunk_labels));
  }
  if (region.count == 0) return InvalidArgumentError("label count must be at least 1");
  if (region.first + region.count < region.first || region.first + region.count > kLabelIndexLimit) {
    return InvalidArgumentError("label range [first, first + count) exceeds the index space (2^62)");
  }
  return Status::Ok();
}

uint32_t GraphLabelsForChunk(LabelFormat format, uint32_t chunk_labels, uint64_t chunk, uint64_t region_end) {
  if (format == LabelFormat::kC1) return chunk_labels;
  uint64_t chunk_start = chunk * chunk_labels;
  uint64_t left = region_end - chunk_start;
  return left < chunk_labels ? static_cast<uint32_t>(left) : chunk_labels;
}

}  // namespace wipeproof
