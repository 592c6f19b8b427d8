// `wipeproof-prover labels`: labels of a global index range as hex lines or their SHA-256.
//
// The range is computed in pieces that end on chunk boundaries (except the last, which ends where
// the range ends). That keeps memory bounded and gives the same bytes as one LabelRegion call over
// the whole range in both formats: c1 labels depend only on the index, and a 192 chunk's graph
// depends on the region end only for the trailing partial chunk, which lies in the last piece.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <sodium.h>

#include "common/hex.h"
#include "kernels/graph_schedule.h"
#include "kernels/region_labeler.h"
#include "prover/cli/cli.h"
#include "prover/cli/cli_flags.h"
#include "common/progress_line.h"

namespace wipeproof {
namespace {

constexpr char kName[] = "labels";
constexpr uint64_t kPieceLabels = 1ull << 21;  // 64 MiB of labels per piece (more when m is large)
constexpr size_t kHexBatchLabels = 4096;       // labels per write to stdout

Status WriteHexLines(const uint8_t* labels, uint64_t count) {
  std::string text;
  text.reserve(kHexBatchLabels * (2 * kLabelBytes + 1));
  for (uint64_t i = 0; i < count; i += kHexBatchLabels) {
    const uint64_t n = std::min<uint64_t>(kHexBatchLabels, count - i);
    text.clear();
    for (uint64_t j = 0; j < n; ++j) {
      text += HexEncode(labels + (i + j) * kLabelBytes, kLabelBytes);
      text += '\n';
    }
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) {
      return UnavailableError("writing to stdout failed");
    }
  }
  return Status::Ok();
}

}  // namespace

int RunLabels() {
  RegionSpec region;
  auto format = FormatFromFlag();
  if (!format.ok()) return UsageError(kName, format.status().message());
  region.format = *format;
  Status seed = SeedFromFlag(region.seed);
  if (!seed.ok()) return UsageError(kName, seed.message());
  auto m = ChunkLabelsFromFlag(/*default_m=*/0);
  if (!m.ok()) return UsageError(kName, m.status().message());
  region.chunk_labels = *m;
  if (FLAGS_count == 0) return UsageError(kName, "--count must be at least 1");
  region.first = FLAGS_first;
  region.count = FLAGS_count;
  Status valid = ValidateRegion(region);
  if (!valid.ok()) return UsageError(kName, valid.message());
  auto threads = ThreadsFromFlag();
  if (!threads.ok()) return UsageError(kName, threads.status().message());
  auto simd = SimdFromFlag();
  if (!simd.ok()) return UsageError(kName, simd.status().message());
  auto progress_wanted = ProgressFromFlag();
  if (!progress_wanted.ok()) return UsageError(kName, progress_wanted.status().message());

  const uint64_t chunk = region.chunk_labels;
  const uint64_t end = region.first + region.count;
  // Enough whole chunks per piece to keep every worker busy.
  const uint64_t piece_chunks =
      std::max<uint64_t>({1, kPieceLabels / chunk, static_cast<uint64_t>(EffectiveThreads(*threads))});
  std::vector<uint8_t> buffer(std::min<uint64_t>(region.count, piece_chunks * chunk) * kLabelBytes);

  crypto_hash_sha256_state sha;
  crypto_hash_sha256_init(&sha);
  ProgressLine progress(kName, region.count, *progress_wanted);
  RegionLabelOptions options;
  options.threads = *threads;
  options.simd = *simd;
  for (uint64_t pos = region.first; pos < end;) {
    const uint64_t next = std::min(end, (pos / chunk + piece_chunks) * chunk);
    RegionSpec piece = region;
    piece.first = pos;
    piece.count = next - pos;
    const uint64_t base = pos - region.first;
    options.progress = [&progress, base](uint64_t done, uint64_t) { progress.Update(base + done); };
    Status labeled = LabelRegion(piece, buffer.data(), options);
    if (!labeled.ok()) return Failure(kName, labeled);
    if (FLAGS_sha256) {
      crypto_hash_sha256_update(&sha, buffer.data(), piece.count * kLabelBytes);
    } else {
      Status written = WriteHexLines(buffer.data(), piece.count);
      if (!written.ok()) return Failure(kName, written);
    }
    pos = next;
  }
  progress.Finish();
  if (FLAGS_sha256) {
    uint8_t digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_final(&sha, digest);
    std::printf("%s\n", HexEncode(digest, sizeof digest).c_str());
  }
  if (std::fflush(stdout) != 0) return Failure(kName, UnavailableError("writing to stdout failed"));
  return kExitOk;
}

const CliSubcommand& LabelsSubcommand() {
  static const CliSubcommand kSubcommand = {"labels",
   "print the labels of a global index range (one hex label per line, or their SHA-256)",
   "Computes labels g = first .. first+count-1 of one session (label-spec.md) on all cores and prints\n"
   "each as 64 lowercase hex digits on its own line, or with --sha256 only the SHA-256 of the\n"
   "labels concatenated (the known-answer format of labels-public.json). For posedb-blake3-192 the\n"
   "range is one region (its trailing partial chunk is the graph for m' = its size). Large ranges\n"
   "are computed in chunk-aligned pieces, so memory stays bounded (~64 MiB + one chunk per thread).",
   {"format", "seed", "chunk_labels", "first", "count", "sha256", "threads", "simd", "progress"},
   &RunLabels,
   {{"chunk_labels", "m, labels per chunk (graph outputs), in [1, 1048576] (required)"},
    {"seed", "session seed: 64 hex digits (32 bytes) (required)"},
    {"count", "number of labels, >= 1 (required)"}}};
  return kSubcommand;
}

}  // namespace wipeproof
