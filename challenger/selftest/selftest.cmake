# The adversary selftest behind `wipeproof-challenger selftest` (issue #6): in-process agents that
# speak the real protocol (honest + one deviation each), the runner over the real SessionRunner,
# Clopper-Pearson statistics, JSON and Markdown. Host memory only: links no GPU runtime.
add_library(wp_selftest STATIC
  ${CMAKE_CURRENT_LIST_DIR}/cli_selftest.cc
  ${CMAKE_CURRENT_LIST_DIR}/clopper_pearson.cc
  ${CMAKE_CURRENT_LIST_DIR}/selftest_agent.cc
  ${CMAKE_CURRENT_LIST_DIR}/selftest_report.cc
  ${CMAKE_CURRENT_LIST_DIR}/selftest_runner.cc
  ${CMAKE_CURRENT_LIST_DIR}/selftest_scenarios.cc
)
target_include_directories(wp_selftest PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(wp_selftest PUBLIC wp_challenger wp_scaffold CapnProto::capnp-rpc glog::glog nlohmann_json::nlohmann_json
                      PkgConfig::SODIUM)
