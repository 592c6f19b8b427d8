// Progress lines for running sessions (TcpSessionOptions::session_progress), per node: while the
// node fills, the time waited against the order's fill deadline; then its proof rounds, e.g.
//   gpu-01: waiting for the fill: 45 s of at most 300 s
//   gpu-01: proof rounds: 40.0% 800/2000 rounds, 812.3 rounds/s, eta 1 s
// Each line is silent for its first second (common/progress_line.h); whether lines are drawn at
// all is `--progress` (auto: only when stderr is a terminal). Used by wipe, serve and calibrate.
// Thread-safety: Report() may be called from several sessions' threads at once.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "challenger/session/session_runner.h"
#include "common/progress_line.h"

namespace wipeproof {

class SessionProgressLines {
 public:
  void Report(const std::string& node, const SessionProgress& progress);

 private:
  struct Lines {
    std::unique_ptr<ProgressLine> fill, rounds;
  };
  std::mutex mu_;
  std::map<std::string, Lines> lines_;
};

}  // namespace wipeproof
