# Challenger: rule and bound known answers, configuration files, plans and challenges, and whole
# sessions in process against test agents (challenger_test_agent.h).
wp_add_test(challenger_rule_test SOURCES challenger_rule_test.cc LIBS wp_challenger)
wp_add_test(challenger_config_test SOURCES challenger_config_test.cc challenger_test_agent.cc LIBS wp_challenger)
wp_add_test(challenger_plan_test SOURCES challenger_plan_test.cc challenger_test_agent.cc LIBS wp_challenger)
wp_add_test(challenger_session_test SOURCES challenger_session_test.cc challenger_test_agent.cc LIBS wp_challenger wp_ledger)
wp_add_test(challenger_tcp_test SOURCES challenger_tcp_test.cc challenger_test_agent.cc LIBS wp_challenger)
# Runs the built binary against in-process TCP test agents.
wp_add_test(challenger_cli_test SOURCES challenger_cli_test.cc challenger_test_agent.cc LIBS wp_challenger)
target_compile_definitions(challenger_cli_test PRIVATE WIPEPROOF_CHALLENGER_BIN="$<TARGET_FILE:wipeproof-challenger>")
add_dependencies(challenger_cli_test wipeproof-challenger)
# A hostile agent (huge error texts from every RPC, a huge note) never crashes the challenger.
wp_add_test(challenger_hostile_agent_test SOURCES challenger_hostile_agent_test.cc challenger_test_agent.cc LIBS wp_challenger wp_ledger)
# Ranges of every profile and inventory field, duplicate JSON keys, plan-level limits.
wp_add_test(challenger_limits_test SOURCES challenger_limits_test.cc challenger_test_agent.cc LIBS wp_challenger)
