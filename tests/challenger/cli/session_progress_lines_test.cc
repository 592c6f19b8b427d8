// The progress lines of running sessions (challenger/cli/session_progress_lines.h): the fill wait
// against the order's fill deadline, then the proof rounds with count, rate and ETA. Each line is
// silent for its first second, so the test waits that second out (what is printed is asserted,
// not how fast anything runs).
#include "challenger/cli/session_progress_lines.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace wipeproof {
namespace {

TEST(SessionProgressLinesTest, TheFillWaitThenTheProofRounds) {
  SessionProgressLines lines;
  SessionProgress p;
  p.fill_deadline_us = 300'000'000;
  p.proof_rounds_total = 2000;
  p.waited_us = 45'000'000;
  ::testing::internal::CaptureStderr();
  lines.Report("gpu-01", p);  // starts the fill line: silent for its first second
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  lines.Report("gpu-01", p);
  p.filled = true;
  p.proof_rounds_done = 800;
  lines.Report("gpu-01", p);  // ends the fill line, starts the rounds line
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  lines.Report("gpu-01", p);
  p.proof_rounds_done = 2000;
  lines.Report("gpu-01", p);  // done: the line ends
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("gpu-01: waiting for the fill: 45 s of at most 300 s"), std::string::npos) << err;
  EXPECT_NE(err.find("gpu-01: proof rounds: 40.0% 800/2000 rounds, "), std::string::npos) << err;
  EXPECT_NE(err.find(" rounds/s, eta "), std::string::npos) << err;
}

TEST(SessionProgressLinesTest, NothingInTheFirstSecond) {
  SessionProgressLines lines;
  SessionProgress p;
  p.fill_deadline_us = 60'000'000;
  p.proof_rounds_total = 8;
  ::testing::internal::CaptureStderr();
  lines.Report("node-a", p);
  p.filled = true;
  p.proof_rounds_done = 8;
  lines.Report("node-a", p);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace wipeproof
