// Helpers for tests that read tests/testdata (see tests/testdata/SOURCES.md for the sources).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace wipeproof::testing {

inline std::string TestDataPath(const std::string& name) { return std::string(WIPEPROOF_TESTDATA_DIR) + "/" + name; }

inline nlohmann::json LoadTestJson(const std::string& name) {
  std::ifstream in(TestDataPath(name));
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

}  // namespace wipeproof::testing
