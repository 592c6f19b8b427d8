// Progress lines for the expected-label precompute of sessions (TcpSessionOptions::prepare_progress):
// one ProgressLine (common/progress_line.h) per node while its labels are computed, silent for the
// first second, e.g.
//   expected labels gpu-01: 41.2% 2836/6880 labels, 1417.9 labels/s, eta 3 s
// Whether lines are drawn at all is `--progress` (auto: only when stderr is a terminal).
// Thread-safety: Report() may be called from several preparing threads at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/progress_line.h"

namespace wipeproof {

class PrecomputeProgress {
 public:
  explicit PrecomputeProgress(bool enabled) : enabled_(enabled) {}
  // `done` of `total` expected labels of `node`'s session; the line ends when done == total.
  void Report(const std::string& node, uint64_t done, uint64_t total);

 private:
  const bool enabled_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<ProgressLine>> lines_;
};

}  // namespace wipeproof
