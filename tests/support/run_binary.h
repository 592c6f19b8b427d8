// Runs one of the project's executables to completion for CLI tests, capturing exit code, stdout
// and stderr. Output files are unique per process and call, because ctest runs the tests of one
// binary as parallel processes.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace wipeproof::testing {

struct BinaryRun {
  int exit_code = -1;  // -1 when the process did not exit normally
  std::string out, err;
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `binary args` through the shell (args are plain words; quote them yourself if needed),
// in `cwd` when it is not empty.
inline BinaryRun RunBinary(const std::string& binary, const std::string& args, const std::string& cwd = "") {
  static std::atomic<int> calls{0};
  const std::string base = ::testing::TempDir() + "/wp_run." + std::to_string(getpid()) + "." + std::to_string(calls++);
  const std::string out = base + ".out", err = base + ".err";
  std::string command = binary + " " + args + " >" + out + " 2>" + err;
  if (!cwd.empty()) command = "cd '" + cwd + "' && " + command;
  const int status = std::system(command.c_str());
  BinaryRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadWholeFile(out);
  run.err = ReadWholeFile(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return run;
}

}  // namespace wipeproof::testing
