#include "challenger/cli/precompute_progress.h"

namespace wipeproof {

void PrecomputeProgress::Report(const std::string& node, uint64_t done, uint64_t total) {
  if (!enabled_) return;
  std::unique_ptr<ProgressLine> finished;  // ended outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<ProgressLine>& line = lines_[node];
    // Counted, not sized: each expected label costs a chunk's recomputation, its 32 bytes nothing.
    if (!line) {
      line = std::make_unique<ProgressLine>("expected labels " + node, total, true, ProgressStyle::kCount, "labels");
    }
    line->Update(done);
    if (done >= total) {
      finished = std::move(line);
      lines_.erase(node);
    }
  }
  if (finished) finished->Finish();
}

}  // namespace wipeproof
