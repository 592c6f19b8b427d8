# Prover agent (prover/agent): the session state machine, its RPC server, and the serve/keygen CLI.
# Paths are absolute so the fragment works from any including folder.
set(WP_AGENT_TEST_UTIL ${CMAKE_CURRENT_LIST_DIR}/agent_test_util.cc)
wp_add_test(agent_core_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/agent_core_test.cc ${WP_AGENT_TEST_UTIL} LIBS wp_agent)
wp_add_test(agent_rpc_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/agent_rpc_test.cc ${WP_AGENT_TEST_UTIL} LIBS wp_agent)
# Runs the built binary (keygen, serve); depends on it so `ctest` after a test-only build finds it.
if(TARGET wipeproof-prover)
  wp_add_test(agent_cli_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/agent_cli_test.cc ${WP_AGENT_TEST_UTIL} LIBS wp_agent)
  target_compile_definitions(agent_cli_test PRIVATE WIPEPROOF_PROVER_BIN="$<TARGET_FILE:wipeproof-prover>")
  add_dependencies(agent_cli_test wipeproof-prover)
endif()
