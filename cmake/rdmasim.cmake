# rdmasim_library(NAME SOURCES ... DEPENDS ... TESTS ...)
#
# Declares a static library and, next to it, the tests that cover it: the test
# sources are compiled into one test binary per library, linked with the
# shared Catch2 main (compiled once), and registered with ctest by tag:
#   [quick]      label "quick"     (seconds; run before every commit)
#   [extensive]  label "extensive" (long; on demand, never in CI)
#   anything else: no label        (runs in CI)
#   [no_sanitizer] also label "no_sanitizer": too slow under the sanitizers,
#                  run in the Release suite only (docs/reliability.md)
function(rdmasim_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;SYSTEM_INCLUDES;TESTS;TEST_DEPENDS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  if(ARG_SYSTEM_INCLUDES)
    target_include_directories(${name} SYSTEM PUBLIC ${ARG_SYSTEM_INCLUDES})
  endif()
  target_link_libraries(${name} PUBLIC ${ARG_DEPENDS} PRIVATE rdmasim_warnings)
  if(RDMASIM_FUZZ)
    # libFuzzer's coverage (and comparison) feedback from the code it fuzzes.
    # Libraries only: the test binaries link them as they are (the sanitizer
    # runtime defines the hooks), so the tests need not be compiled again.
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
  if(RDMASIM_BUILD_TESTS AND ARG_TESTS)
    rdmasim_tests(${name}_tests SOURCES ${ARG_TESTS} DEPENDS ${name} ${ARG_TEST_DEPENDS})
  endif()
endfunction()

function(rdmasim_tests target)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  list(TRANSFORM ARG_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/)
  add_executable(${target} ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE rdmasim_catch_main ${ARG_DEPENDS} rdmasim_warnings)
  if(RDMASIM_TEST_OPT)
    # Not in Debug builds, which keep their -O0 everywhere.
    separate_arguments(test_opt UNIX_COMMAND "${RDMASIM_TEST_OPT}")
    target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:${test_opt}>)
  endif()
  if(RDMASIM_PCH)
    # Catch2's header, the engine's and the standard library's parsed once
    # per test binary, not once per test file: 30 % of the test files' compile
    # time under ASan (CI budget).
    target_precompile_headers(${target} PRIVATE <catch2/catch.hpp> <algorithm> <cstdint>
      <functional> <map> <memory> <string> <vector> "${PROJECT_SOURCE_DIR}/sim/simulation.h")
  endif()
  target_compile_definitions(${target} PRIVATE
    RDMASIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    RDMASIM_BINARY_DIR="${PROJECT_BINARY_DIR}")
  set(props WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
  # Timeouts: a hang (a deadlock between partitions, say) fails in minutes,
  # not at CI's limit.
  catch_discover_tests(${target} TEST_SPEC "[quick]~[no_sanitizer]" ${props}
    PROPERTIES LABELS quick TIMEOUT 300)
  # One label only: a list ("quick;no_sanitizer") reaches set_tests_properties
  # as two arguments, which loses the second label.
  catch_discover_tests(${target} TEST_SPEC "[quick][no_sanitizer]" ${props}
    PROPERTIES LABELS no_sanitizer TIMEOUT 300)
  catch_discover_tests(${target} TEST_SPEC "~[quick]~[extensive]~[no_sanitizer]" ${props}
    PROPERTIES TIMEOUT 900)
  catch_discover_tests(${target} TEST_SPEC "[no_sanitizer]~[quick]~[extensive]" ${props}
    PROPERTIES LABELS no_sanitizer TIMEOUT 900)
  catch_discover_tests(${target} TEST_SPEC "[extensive]" ${props} PROPERTIES LABELS extensive)
endfunction()
