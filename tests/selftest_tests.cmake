# The adversary selftest (challenger/selftest, issue #6): Clopper-Pearson statistics, every scenario
# with a small run count, and the CLI.
wp_add_test(selftest_stats_test SOURCES selftest_stats_test.cc LIBS wp_selftest)
wp_add_test(selftest_adversaries_test SOURCES selftest_adversaries_test.cc LIBS wp_selftest)
wp_add_test(selftest_cli_test SOURCES selftest_cli_test.cc LIBS wp_selftest nlohmann_json::nlohmann_json)
target_compile_definitions(selftest_cli_test PRIVATE WIPEPROOF_CHALLENGER_BIN="$<TARGET_FILE:wipeproof-challenger>")
add_dependencies(selftest_cli_test wipeproof-challenger)
# The whole selftest as CI runs it: every scenario, 60 runs each (enough that a challenger checking
# a quarter of its labels would fail); exit 0 only when all match. The
# statistical acceptance uses a one-sided 1 - 1e-6 bound here (docs: 99%), so the suite fails by
# chance with probability < 1e-6 instead of ~1e-2.
add_test(NAME selftest_cli_all_adversaries
         COMMAND wipeproof-challenger selftest --adversaries --runs=60 --confidence=0.999999 --scaffold_m=256 --quiet)
set_tests_properties(selftest_cli_all_adversaries PROPERTIES TIMEOUT 300)
