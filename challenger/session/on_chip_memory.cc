#include "challenger/session/on_chip_memory.h"

#include <vector>

namespace wipeproof {

namespace {

constexpr uint64_t kKiB = 1024;
constexpr char kH100Whitepaper[] = "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022)";

const std::vector<OnChipMemory>& Table() {
  static const std::vector<OnChipMemory> kTable = {
      {"NVIDIA H200", 132, 50'000'000, 256 * kKiB, 256 * kKiB,
       std::string(kH100Whitepaper) + "; H200 is GH100 as in H100 SXM5"},
      {"NVIDIA H100", 132, 50'000'000, 256 * kKiB, 256 * kKiB, std::string(kH100Whitepaper) + ", H100 SXM5"},
      {"NVIDIA H100 PCIe", 114, 50'000'000, 256 * kKiB, 256 * kKiB, std::string(kH100Whitepaper) + ", H100 PCIe"},
  };
  return kTable;
}

}  // namespace

std::optional<OnChipMemory> OnChipMemoryOf(const std::string& model) {
  const OnChipMemory* best = nullptr;
  for (const OnChipMemory& m : Table()) {
    if (model.rfind(m.model_prefix, 0) != 0) continue;
    if (best == nullptr || m.model_prefix.size() > best->model_prefix.size()) best = &m;
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

}  // namespace wipeproof
