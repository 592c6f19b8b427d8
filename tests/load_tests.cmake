# Load: one challenger `serve` (the real wave scheduler) against 20 prover agents on loopback, all in
# one scheduled wave; the ledger must hold exactly one complete, passing session per agent
# (scripts/load-test.sh; the 200-agent run and its figures are in docs/benchmarks.md "Load test").
add_test(NAME load_20_agents
         COMMAND ${PROJECT_SOURCE_DIR}/scripts/load-test.sh --agents=20 --period-s=1 --timeout-s=240
                 --prover=$<TARGET_FILE:wipeproof-prover> --challenger=$<TARGET_FILE:wipeproof-challenger>)
set_tests_properties(load_20_agents PROPERTIES TIMEOUT 300 LABELS load)

# `serve` and open files: the need per wave, raising the soft limit, refusing a wave that cannot fit.
wp_add_test(load_open_files_test SOURCES load_open_files_test.cc LIBS wp_challenger)
target_compile_definitions(load_open_files_test PRIVATE WIPEPROOF_CHALLENGER_BIN="$<TARGET_FILE:wipeproof-challenger>")
add_dependencies(load_open_files_test wipeproof-challenger)

# The load test's ledger checks fail on a lost entry and on a duplicated session.
add_test(NAME load_ledger_checks
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/load_ledger_check_test.sh ${PROJECT_SOURCE_DIR}/scripts/load-test.sh
                 $<TARGET_FILE:wipeproof-prover> $<TARGET_FILE:wipeproof-challenger>)
set_tests_properties(load_ledger_checks PROPERTIES TIMEOUT 180 LABELS load)
