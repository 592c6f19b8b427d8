# Calibration: the deadline rule on synthetic inputs, signed node profiles, calibrate in process
# against a delaying test agent, and the plan/calibrate/bench --what=all binaries.
wp_add_test(calibration_rule_test SOURCES calibration_rule_test.cc LIBS wp_challenger)
wp_add_test(calibration_signing_test SOURCES calibration_signing_test.cc challenger_test_agent.cc LIBS wp_challenger)
wp_add_test(calibration_session_test SOURCES calibration_session_test.cc challenger_test_agent.cc LIBS wp_challenger)
# Runs the built binaries against in-process TCP test agents.
wp_add_test(calibration_cli_test SOURCES calibration_cli_test.cc challenger_test_agent.cc LIBS wp_challenger)
target_compile_definitions(calibration_cli_test PRIVATE
  WIPEPROOF_CHALLENGER_BIN="$<TARGET_FILE:wipeproof-challenger>"
  WIPEPROOF_PROVER_BIN="$<TARGET_FILE:wipeproof-prover>")
add_dependencies(calibration_cli_test wipeproof-challenger wipeproof-prover)
# Round latency of q = 256 in process against the real agent over a pipe (prints the percentiles
# docs/benchmarks.md quotes; asserts only that every answer is right). Links the agent only.
wp_add_test(calibration_latency_test SOURCES calibration_latency_test.cc agent_test_util.cc LIBS wp_agent)
# The challenger (calibrate, plan) runs on authority machines without GPUs: it must not link a GPU
# runtime in any build, including WIPEPROOF_CUDA/HIP=ON ones (where the prover does).
add_test(NAME calibration_challenger_links_no_gpu_runtime
  COMMAND sh -c "out=$(ldd \"$1\") || exit 1; if echo \"$out\" | grep -E 'lib(cuda|cudart|nvrtc|nvidia-ml|amdhip64|hsa-runtime64|hiprtc)'; then exit 1; fi"
          sh $<TARGET_FILE:wipeproof-challenger>)
