#include "kernels/cv0_cache.h"

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "kernels/blake3_small.h"
#include "kernels/graph_schedule.h"
#include "kernels/node_hash.h"

namespace wipeproof {

Cv0Table Cv0TableFor(uint32_t graph_labels, uint64_t max_bytes) {
  if (max_bytes == 0) return {};
  static std::mutex mu;
  static std::map<std::pair<uint32_t, uint64_t>, std::unique_ptr<std::vector<uint32_t>>> tables;
  std::lock_guard<std::mutex> lock(mu);
  auto& table = tables[{graph_labels, max_bytes}];
  if (!table) {
    GraphShape shape = ShapeForChunkLabels(graph_labels);
    uint64_t nodes = shape.total_nodes;
    if (nodes * 32 > max_bytes) nodes = max_bytes / 32;
    table = std::make_unique<std::vector<uint32_t>>(nodes * 8);
    uint32_t int_key[8], src_key[8];
    static const char kInt[] = "pose-db/label/int";
    static const char kSrc[] = "pose-db/label/src";
    Blake3ContextKey(kInt, sizeof kInt - 1, int_key);
    Blake3ContextKey(kSrc, sizeof kSrc - 1, src_key);
    uint32_t* words = table->data();
    EmitGraphSchedule(graph_labels, graph_labels, [&](const GraphOp& op) {
      if (op.kind == GraphOpKind::kOutput) return;
      const uint32_t* key = op.kind == GraphOpKind::kSource ? src_key : int_key;
      for (uint64_t node = op.node_base; node < op.node_base + op.width && node < nodes; ++node) {
        Block0ChainingValue192(key, node, words + node * 8);
      }
    });
  }
  return Cv0Table{table->data(), table->size() / 8};
}

}  // namespace wipeproof
