# Faults (issue #6): device errors, clock skew and a full ledger between a real agent and a real
# challenger in process (fault_agent_test.cc); kill -9 of either side, a frozen challenger,
# slow-loris and oversized frames with the real binaries (fault_process_test.sh).
# Paths are absolute so the fragment works from any including folder.
wp_add_test(fault_agent_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/fault_agent_test.cc ${CMAKE_CURRENT_LIST_DIR}/agent_test_util.cc
            LIBS wp_agent wp_challenger wp_ledger)
if(TARGET wipeproof-prover AND TARGET wipeproof-challenger)
  add_test(NAME fault_process_test
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/fault_process_test.sh $<TARGET_FILE:wipeproof-prover>
                   $<TARGET_FILE:wipeproof-challenger>)
  set_tests_properties(fault_process_test PROPERTIES TIMEOUT 180)
endif()
