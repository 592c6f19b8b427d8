#include "challenger/cli/session_progress_lines.h"

namespace wipeproof {

void SessionProgressLines::Report(const std::string& node, const SessionProgress& p) {
  std::lock_guard<std::mutex> lock(mu_);
  Lines& lines = lines_[node];
  if (!p.filled) {
    if (!lines.fill) {
      lines.fill = std::make_unique<ProgressLine>(node + ": waiting for the fill", p.fill_deadline_us / 1'000'000,
                                                  true, ProgressStyle::kWait, "");
    }
    lines.fill->Update(p.waited_us / 1'000'000);
    return;
  }
  if (lines.fill) lines.fill->Finish();
  if (!lines.rounds) {
    lines.rounds = std::make_unique<ProgressLine>(node + ": proof rounds", p.proof_rounds_total, true,
                                                  ProgressStyle::kCount, "rounds");
  }
  lines.rounds->Update(p.proof_rounds_done);
  if (p.proof_rounds_done >= p.proof_rounds_total) {
    lines.rounds->Finish();
    lines_.erase(node);  // the next session of the node starts afresh
  }
}

}  // namespace wipeproof
