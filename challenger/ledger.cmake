# The challenger's ledger (SQLite, signed and hash-chained entries) and its `ledger` subcommand.
# Included from challenger/CMakeLists.txt; the challenger binary links wp_ledger and dispatches
# `wipeproof-challenger ledger ...` to RunLedgerCommand (cli_ledger.h) before parsing gflags.
add_library(wp_ledger STATIC
  ${CMAKE_CURRENT_LIST_DIR}/cli_ledger.cc
  ${CMAKE_CURRENT_LIST_DIR}/ledger.cc
  ${CMAKE_CURRENT_LIST_DIR}/ledger_export.cc
  ${CMAKE_CURRENT_LIST_DIR}/ledger_records.cc
  ${CMAKE_CURRENT_LIST_DIR}/ledger_sqlite.cc
  ${CMAKE_CURRENT_LIST_DIR}/ledger_verify.cc
)
target_include_directories(wp_ledger PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(wp_ledger PUBLIC wp_proto wp_common PkgConfig::SQLITE3 nlohmann_json::nlohmann_json)
