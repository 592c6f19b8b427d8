# Prover: the host-memory backend and the wipeproof-prover CLI.
wp_add_test(prover_host_memory_test SOURCES prover_host_memory_test.cc LIBS wp_backends)
wp_add_test(prover_cpu_backend_test SOURCES prover_cpu_backend_test.cc LIBS wp_backends)
# Runs the built binary; it depends on it so `ctest` after a test-only build still finds it.
wp_add_test(prover_cli_test SOURCES prover_cli_test.cc LIBS wp_kernels nlohmann_json::nlohmann_json PkgConfig::SODIUM)
target_compile_definitions(prover_cli_test PRIVATE WIPEPROOF_PROVER_BIN="$<TARGET_FILE:wipeproof-prover>")
target_include_directories(prover_cli_test PRIVATE ${PROJECT_SOURCE_DIR})
add_dependencies(prover_cli_test wipeproof-prover)
