// The PoSE-DB graph for m outputs as a compact schedule of layer operations (label-spec.md §3).
//
// The spec defines the graph by a recursive emission procedure (standalone / connector /
// connected / merged_center_ingress). Every step of it is a *layer*: up to 2^d nodes that read only
// the previous layer, numbered consecutively. This file replays that recursion and hands each layer
// to a visitor as one GraphOp, so no per-node table is ever built: the schedule depends only on m,
// is O(m) ops long, and the CPU labeler, the GPU kernels and the depth metrics all consume it.
//
// Scratch layout. All ops work on one scratch array of 2^level labels ("slots"); every layer is
// computed in place or into a disjoint slot range, so the live set of a chunk is exactly 2^level =
// 2*half labels (the spec's emission-order live set is about 6.5*half per standalone copy):
//   standalone(L, at o):  standalone(L-1, o); center = node(left[i]) into o+h ...; connector
//                         butterflies in place; connected(L-1, o+h) in place.
//   connected(L, at o):   in place: connected(L-1, o); merged(L-1, primary o, ingress o+h);
//                         connected(L-1, o+h).
// In a butterfly layer the nodes at j and j^bit read the same two labels, so each pair can be
// updated in place after both are read.
//
// Predecessor order: pred0 is the lower node number (spec §3). In a butterfly the lower position
// holds the lower number; in a merge the primary (emitted earlier) is pred0.
//
// Thread-safety: pure functions of m.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/host_device.h"
#include "kernels/label_spec.h"  // kMaxChunkLabels, kLabelBytes

namespace wipeproof {

enum class GraphOpKind : uint8_t {
  kSource = 0,     // slot[dst] = node()                              (width 1)
  kSingle = 1,     // slot[dst+i] = node(slot[src+i])                 (src == dst or disjoint)
  kButterfly = 2,  // in place on slot[dst..dst+w): node(slot[min(i,i^b)], slot[max(i,i^b)])
  kMerge = 3,      // slot[dst+i] = node(slot[src+i], slot[dst+i])    (src: primary, emitted earlier)
  kOutput = 4,     // output ranks [node_base, node_base+width) = slot[src .. src+width)
};

// One layer. Node i of the layer (0 <= i < width) has node number node_base + i.
// For kOutput, node_base is the first output rank instead and no node is emitted.
struct GraphOp {
  GraphOpKind kind;
  uint8_t log_width;   // width = 2^log_width (kOutput: see width field)
  uint8_t log_bit;     // kButterfly: bit = 2^log_bit
  uint8_t reserved = 0;
  uint32_t src;        // slot offset (labels) of the input, or of the primary for kMerge
  uint32_t dst;        // slot offset (labels) of the output
  uint32_t width;      // number of nodes (or outputs); == 2^log_width except for kOutput
  uint64_t node_base;  // node number of element 0, or first output rank for kOutput
};

// The shape of the graph for m outputs (spec §3).
struct GraphShape {
  uint32_t m = 0;        // outputs
  int n = 0;             // 0 if m <= 1, else bit_length(m-1) - 1
  int level = 0;         // n + 1
  uint32_t half = 0;     // 2^n
  uint32_t scratch_labels = 0;  // 2^level: slots the schedule uses (the chunk's live set)
  uint64_t total_nodes = 0;     // 2 * S(level): all nodes of the spec's graph
};

// REQUIRES: 1 <= m <= kMaxChunkLabels.
GraphShape ShapeForChunkLabels(uint32_t m);

// Spec §3 node-count recurrences: B(d) = (d+1)*2^d, C(0)=1, C(k)=2C(k-1)+2B(k-1),
// S(0)=1, S(k)=S(k-1)+B(k-1)+C(k-1).
uint64_t StandaloneNodeCount(int level);

// Replays the graph for m outputs and calls `visit(const GraphOp&)` for every layer, in emission
// order, then kOutput ops for the ranks [0, ranks_needed). Emission stops as soon as output rank
// ranks_needed-1 exists; the labels emitted are the same as in the full graph because every
// truncated call is the last thing the procedure emits.
// REQUIRES: 1 <= m <= kMaxChunkLabels, 1 <= ranks_needed <= m.
template <typename Visitor>
void EmitGraphSchedule(uint32_t m, uint32_t ranks_needed, Visitor&& visit);

// The schedule materialised as a list (what the GPU kernels upload). Size: O(m) ops of 24 bytes.
std::vector<GraphOp> BuildGraphProgram(uint32_t m, uint32_t ranks_needed);

// ----------------------------------------------------------------------------------------------
// Implementation of the recursion.

namespace graph_internal {

template <typename Visitor>
class Emitter {
 public:
  explicit Emitter(Visitor& visit) : visit_(visit) {}

  uint64_t next_node() const { return next_node_; }

  // standalone(L): writes 2^L base labels to slots [o, o + 2^L); of the right half (the
  // connected part) only the first `need_right` are emitted.
  void Standalone(int L, uint32_t o, uint32_t need_right) {
    if (L == 0) {
      Layer(GraphOpKind::kSource, 0, 0, o, o);
      return;
    }
    int d = L - 1;
    uint32_t h = 1u << d;
    Standalone(d, o, h);
    // connector(d, left): a single-predecessor layer into o+h, then d butterfly layers.
    Layer(GraphOpKind::kSingle, d, 0, o, o + h);
    Butterflies(d, o + h);
    Connected(d, o + h, need_right);
  }

  // connected(L, width = 2^L) in place on slots [o, o + 2^L); only the first `need` outputs.
  void Connected(int L, uint32_t o, uint32_t need) {
    if (L == 0) {
      Layer(GraphOpKind::kSingle, 0, 0, o, o);
      return;
    }
    int d = L - 1;
    uint32_t h = 1u << d;
    Connected(d, o, need < h ? need : h);
    if (need <= h) return;
    // merged_center_ingress(d, primary = slots[o..o+h), ingress = slots[o+h..o+2h)).
    Layer(GraphOpKind::kSingle, d, 0, o + h, o + h);
    Butterflies(d, o + h);
    Layer(GraphOpKind::kMerge, d, 0, o, o + h);
    Butterflies(d, o + h);
    Connected(d, o + h, need - h);
  }

  void Output(uint32_t src, uint32_t first_rank, uint32_t count) {
    GraphOp op{GraphOpKind::kOutput, 0, 0, 0, src, src, count, first_rank};
    visit_(static_cast<const GraphOp&>(op));
  }

 private:
  // d butterfly layers on 2^d slots at o, bits 2^(d-1) down to 1 (connector layers 0..d-1 and
  // merged layers 1..d use the same sequence).
  void Butterflies(int d, uint32_t o) {
    for (int layer = 0; layer < d; ++layer) {
      Layer(GraphOpKind::kButterfly, d, d - 1 - layer, o, o);
    }
  }

  void Layer(GraphOpKind kind, int log_width, int log_bit, uint32_t src, uint32_t dst) {
    GraphOp op{kind, static_cast<uint8_t>(log_width), static_cast<uint8_t>(log_bit), 0, src, dst,
               1u << log_width, next_node_};
    next_node_ += op.width;
    visit_(static_cast<const GraphOp&>(op));
  }

  Visitor& visit_;
  uint64_t next_node_ = 0;
};

}  // namespace graph_internal

template <typename Visitor>
void EmitGraphSchedule(uint32_t m, uint32_t ranks_needed, Visitor&& visit) {
  const GraphShape shape = ShapeForChunkLabels(m);
  const uint32_t half = shape.half;
  graph_internal::Emitter<Visitor> emitter(visit);
  // Copy A = standalone(level): output ranks 0..half-1 are its base labels [half, 2*half).
  const uint32_t from_a = ranks_needed < half ? ranks_needed : half;
  emitter.Standalone(shape.level, 0, from_a);
  emitter.Output(half, 0, from_a);
  if (ranks_needed <= half) return;
  // Copy B, numbering continued: ranks half..m-1 are its base labels [half, half + (m - half)).
  const uint32_t from_b = ranks_needed - half;
  emitter.Standalone(shape.level, 0, from_b);
  emitter.Output(half, half, from_b);
}

}  // namespace wipeproof
