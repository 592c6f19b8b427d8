# Shared plumbing (common/): output files written without following or replacing links and devices,
# and the JSON nesting limit applied by every reader of untrusted JSON.
wp_add_test(common_file_write_test SOURCES common_file_write_test.cc LIBS wp_common)
wp_add_test(json_nesting_test SOURCES json_nesting_test.cc LIBS wp_selftest wp_ledger)
