# WIPEPROOF_FUZZ: libFuzzer targets for every message the agent and challenger parse (tests/fuzz/,
# docs/fuzzing.md). Needs clang: the whole tree is then compiled with AddressSanitizer and
# UndefinedBehaviorSanitizer plus libFuzzer's coverage instrumentation (fuzzer-no-link); only the
# fuzz executables link libFuzzer itself. System libraries (capnp, kj, sodium, glog, sqlite) stay
# uninstrumented and link as usual. scripts/fuzz.sh configures such a build (folder build-fuzz).
# OFF by default; a normal (gcc) build is unaffected.
option(WIPEPROOF_FUZZ "Build the libFuzzer targets in tests/fuzz (clang only; sanitizes the whole build)" OFF)

if(WIPEPROOF_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "WIPEPROOF_FUZZ needs clang (libFuzzer); configure with -DCMAKE_CXX_COMPILER=clang++-15 "
                        "-DCMAKE_C_COMPILER=clang-15, or use scripts/fuzz.sh")
  endif()
  if(WIPEPROOF_GPU_MINIMAL)
    message(FATAL_ERROR "WIPEPROOF_FUZZ needs the full build (WIPEPROOF_GPU_MINIMAL=OFF)")
  endif()
  # C++20 in this build only: clang 15 with libstdc++ 12 rejects std::optional<capnp Client> (in
  # StatusOr<ProverAgent::Client>) in C++17, because the Client's copy constructor takes a non-const
  # reference; C++20 (P0641R2) makes that copy deleted instead of ill-formed. The code is C++17.
  set(CMAKE_CXX_STANDARD 20)
  # UBSan findings abort (a fuzzer must see them as crashes), frames stay walkable for reports.
  set(WP_FUZZ_SANITIZERS "address,undefined")
  add_compile_options(-fsanitize=${WP_FUZZ_SANITIZERS},fuzzer-no-link -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${WP_FUZZ_SANITIZERS})
endif()

# wp_add_fuzzer(NAME SOURCES a.cc ... LIBS x y): one libFuzzer binary tests/fuzz/NAME, plus a CTest
# `fuzz_regression.NAME` that runs it once over its committed corpus tests/fuzz/corpus/NAME
# (-runs=0: every file once, no mutation), so an input that crashed once stays fixed.
function(wp_add_fuzzer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  set(corpus "${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/${name}")
  add_test(NAME fuzz_regression.${name} COMMAND ${name} -runs=0 -rss_limit_mb=2048 -timeout=20 ${corpus})
  set_tests_properties(fuzz_regression.${name} PROPERTIES TIMEOUT 300 LABELS fuzz)
endfunction()
