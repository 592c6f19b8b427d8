// What the inventory declares about a node's reach beyond its planned devices (challenger/fleet/
// inventory.h reads it; assumptions.h turns it into the verdict's assumptions): network egress and
// ingress during a wipe, and memory on the node that no plan covers (a DPU's memory, CXL-attached
// memory).
//
// Units: bytes, bytes per second. Thread-safety: values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wipeproof {

// Memory of the node outside every device the plan can cover, as declared.
struct DeclaredMemory {
  std::string kind;    // "dpu", "cxl" or "other"
  std::string name;    // e.g. "BlueField-3 (mlx5_0)"
  uint64_t bytes = 0;  // > 0
};

struct NodeReach {
  // The node is cut off from the network during wipes (other than the challenger's link): nothing
  // can leave it during the session.
  bool network_isolated = false;
  // Declared egress bandwidth, bytes per second; 0 = not declared (unknown).
  uint64_t egress_bytes_per_s = 0;
  // Declared ingress bandwidth, bytes per second; 0 = not declared (unknown): labels computed
  // elsewhere could come in at this rate (the compute statement, compute_statement.h).
  uint64_t ingress_bytes_per_s = 0;
  std::vector<DeclaredMemory> other_memory;  // DPU, CXL and other memory no plan covers
};

}  // namespace wipeproof
