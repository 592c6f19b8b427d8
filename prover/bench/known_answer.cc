#include "prover/bench/known_answer.h"

#include <sodium.h>

#include <vector>

#include "common/hex.h"
#include "kernels/chunk_verifier.h"
#include "kernels/graph_schedule.h"

namespace wipeproof {
namespace {

constexpr char kSeed[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

// labels-public.json: the posedb-blake3-c1 case with chunk_labels 16384, and the posedb-blake3-192
// case with chunk_labels 16384 (from the prototype's own code).
constexpr KnownAnswer kC1 = {LabelFormat::kC1, kSeed, 16384, 49152, 16384,
                             "2eb4f938924ce2e4df8060f476a0dbe6c424d4b624e4cd388351fbfa34df81de"};
constexpr KnownAnswer k192 = {LabelFormat::k192, kSeed, 16384, 32768, 16384,
                              "d9ecf3d2efe474db702d196bc31a2c26ced1f99957cf0590389aa867843c996c"};

Status CompareDigest(const KnownAnswer& ka, const uint8_t* labels, uint64_t count, const char* path) {
  uint8_t digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, labels, count * kLabelBytes);
  std::string got = HexEncode(digest, sizeof digest);
  if (got != ka.sha256_hex) {
    return DataLossError(std::string("known answer mismatch (") + path + ", " + KnownAnswerName(ka) +
                         "): expected sha256 " + ka.sha256_hex + ", got " + got);
  }
  return Status::Ok();
}

}  // namespace

const KnownAnswer& BenchKnownAnswer(LabelFormat format) { return format == LabelFormat::kC1 ? kC1 : k192; }

std::string KnownAnswerName(const KnownAnswer& ka) {
  return std::string(LabelFormatName(ka.format)) + " m=" + std::to_string(ka.chunk_labels) +
         " first=" + std::to_string(ka.first) + " count=" + std::to_string(ka.count);
}

Status CheckKnownAnswerOnDevice(DeviceMemory& memory, const KnownAnswer& ka, const FillOptions& options) {
  RegionSpec plan;
  plan.format = ka.format;
  WP_RETURN_IF_ERROR(HexDecodeExact(ka.seed_hex, kSeedBytes, plan.seed, "known-answer seed"));
  plan.chunk_labels = ka.chunk_labels;
  plan.first = ka.first;
  plan.count = ka.count;
  FillOptions quiet = options;
  quiet.progress = nullptr;
  WP_RETURN_IF_ERROR(memory.Fill(plan, quiet));
  std::vector<uint64_t> indices(ka.count);
  for (uint64_t i = 0; i < ka.count; ++i) indices[i] = ka.first + i;
  std::vector<uint8_t> labels(ka.count * kLabelBytes);
  WP_RETURN_IF_ERROR(memory.Lookup(indices.data(), indices.size(), labels.data()));
  return CompareDigest(ka, labels.data(), ka.count, memory.device().id.c_str());
}

Status CheckKnownAnswerByRecompute(const KnownAnswer& ka, SimdLevel simd) {
  uint8_t seed[kSeedBytes];
  WP_RETURN_IF_ERROR(HexDecodeExact(ka.seed_hex, kSeedBytes, seed, "known-answer seed"));
  WP_ASSIGN_OR_RETURN(ChunkOutputs chunk, RecomputeChunk(ka.format, seed, ka.chunk_labels, ka.first / ka.chunk_labels,
                                                         ka.first + ka.count, simd));
  return CompareDigest(ka, chunk.labels.data(), ka.count, "RecomputeChunk");
}

}  // namespace wipeproof
