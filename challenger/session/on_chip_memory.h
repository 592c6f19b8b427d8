// Memory on a planned device that no plan can cover: on-chip SRAM (L2 cache, register files, L1 /
// shared memory) that the agent cannot fill with labels and the challenger cannot challenge. The
// verdict lists it among the assumptions (assumptions.h "uncovered-memory") with the size where the
// model is in this table; a pass says nothing about what it held.
//
// What is counted, per GPU: the L2 cache, and per streaming multiprocessor its register file and
// its combined L1 / shared-memory array. Not counted: smaller caches (constant, instruction, TLBs)
// and the copy engines' buffers. Sources: NVIDIA H100 Tensor Core GPU Architecture whitepaper
// (2022): 50 MB L2 (decimal MB), 256 KiB register file and 256 KiB L1/shared memory per SM, 132 SMs
// on H100 SXM5 and H100 NVL, 114 on H100 PCIe. H200 is the same GH100 configuration as H100 SXM5
// (132 SMs, 50 MB L2) with more HBM. So an H200 or H100 SXM5 has 50,000,000 + 132 x 512 KiB =
// 119,206,016 bytes (~113.7 MiB, "about 113 MB per H200") of on-chip memory outside every plan.
// Models not in the table (AMD GPUs, host DRAM, whose CPU caches depend on the CPU) are reported
// as unknown.
//
// Thread-safety: pure functions over a constant table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace wipeproof {

struct OnChipMemory {
  std::string model_prefix;  // inventory model names starting with this match
  uint32_t streaming_multiprocessors = 0;
  uint64_t l2_bytes = 0;
  uint64_t register_file_bytes_per_sm = 0;
  uint64_t l1_shared_bytes_per_sm = 0;
  std::string source;

  uint64_t total_bytes() const {
    return l2_bytes + uint64_t{streaming_multiprocessors} * (register_file_bytes_per_sm + l1_shared_bytes_per_sm);
  }
};

// The table entry for an inventory model ("NVIDIA H200", "NVIDIA H100 80GB HBM3", ...), the
// longest matching prefix; nullopt when the model is not in the table.
std::optional<OnChipMemory> OnChipMemoryOf(const std::string& model);

}  // namespace wipeproof
