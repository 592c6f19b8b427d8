# wp_add_test(NAME SOURCES a.cc b.cc LIBS x y): one GoogleTest binary, its tests registered with CTest.
# Tests run from the source tree's tests/testdata through WIPEPROOF_TESTDATA_DIR.
function(wp_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  # The test's own sources at -O1: half the compile time of -O2 (GoogleTest's templates dominate);
  # the code under test, in the libraries, keeps the build type's optimisation.
  target_compile_options(${name} PRIVATE "$<$<AND:$<CONFIG:RelWithDebInfo,Release>,$<COMPILE_LANGUAGE:CXX>>:-O1>")
  target_compile_definitions(${name} PRIVATE
    WIPEPROOF_TESTDATA_DIR="${PROJECT_SOURCE_DIR}/tests/testdata")
  gtest_discover_tests(${name} TEST_PREFIX "${name}." DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
endfunction()
