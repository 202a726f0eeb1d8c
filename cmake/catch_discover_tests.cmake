# SPDX-License-Identifier: Apache-2.0
# Lists the test cases of a Catch2 v2 test binary and writes a ctest file that registers each one
# as its own test, labelled unit, and concurrency too when it is tagged [concurrency]. Run after
# each link of the binary (jitterd_discover_catch_tests in tests/CMakeLists.txt):
#   cmake -DTEST_EXECUTABLE=BIN -DTEST_LAUNCHER=CMD -DTEST_WORKING_DIR=DIR -DTEST_TIMEOUT=S
#         -DCTEST_FILE=FILE -P catch_discover_tests.cmake
# TEST_LAUNCHER (optional, a list) runs the binary, here and in every test: qemu-aarch64 in a
# cross build. A binary that cannot be listed or lists no test case fails the build.
#
# Not Catch2's catch_discover_tests: the Catch.cmake of Debian's Catch2 2.13 splits test names at
# ';' (making two failing tests of one) and flattens a label list given in its PROPERTIES.

cmake_minimum_required(VERSION 3.25)

string(ASCII 31 separator)  # stands in for ';', which CMake lists cannot hold

# Prints the test case names that SPEC selects, one list element each, ';' replaced by separator.
function(list_test_cases out_var spec)
  execute_process(
    COMMAND ${TEST_LAUNCHER} "${TEST_EXECUTABLE}" ${spec} --list-test-names-only
    WORKING_DIRECTORY "${TEST_WORKING_DIR}"
    OUTPUT_VARIABLE output ERROR_VARIABLE errors RESULT_VARIABLE result)
  string(REPLACE ";" "${separator}" output "${output}")
  string(REPLACE "\n" ";" lines "${output}")
  set(names "")
  foreach(line IN LISTS lines)
    if(line STREQUAL "")
      continue()
    endif()
    if(line MATCHES "^\"(#.*)\"$")  # Catch quotes a name that starts with #
      set(line "${CMAKE_MATCH_1}")
    endif()
    list(APPEND names "${line}")
  endforeach()
  # The listing exits with the number of test cases listed, at most 255.
  list(LENGTH names count)
  if(count GREATER 255)
    set(count 255)
  endif()
  if(NOT result MATCHES "^[0-9]+$" OR NOT result EQUAL count)
    message(FATAL_ERROR "${TEST_EXECUTABLE} ${spec} --list-test-names-only: exit ${result}, "
                        "${count} names listed\n${errors}")
  endif()
  set(${out_var} "${names}" PARENT_SCOPE)
endfunction()

# Quotes VALUE as one CMake argument, whatever characters it holds.
function(bracket out_var value)
  string(REPLACE "${separator}" ";" value "${value}")
  if(value MATCHES "]==]")
    message(FATAL_ERROR "${TEST_EXECUTABLE}: cannot quote '${value}'")
  endif()
  set(${out_var} "[==[${value}]==]" PARENT_SCOPE)
endfunction()

list_test_cases(all "")
list_test_cases(concurrent "[concurrency]")
if(NOT all)
  message(FATAL_ERROR "${TEST_EXECUTABLE}: no test cases; a test binary with none is a mistake")
endif()

set(launcher "")
foreach(word IN LISTS TEST_LAUNCHER)
  bracket(word "${word}")
  string(APPEND launcher " ${word}")
endforeach()
bracket(executable "${TEST_EXECUTABLE}")
bracket(working_dir "${TEST_WORKING_DIR}")

set(script "# Written by cmake/catch_discover_tests.cmake from ${TEST_EXECUTABLE}.\n")
foreach(name IN LISTS all)
  # The name as a Catch test spec: a backslash escapes the characters the spec parser reads.
  string(REGEX REPLACE "([][\\,\"~])" "\\\\\\1" spec "${name}")
  bracket(quoted_name "${name}")
  bracket(quoted_spec "${spec}")
  set(labels unit)
  if(name IN_LIST concurrent)
    set(labels "unit;concurrency")
  endif()
  # --warn NoTests: a name that matches no test case fails instead of passing with nothing run.
  string(APPEND script
    "add_test(${quoted_name}${launcher} ${executable} ${quoted_spec} --warn NoTests)\n"
    "set_tests_properties(${quoted_name} PROPERTIES LABELS [==[${labels}]==] TIMEOUT ${TEST_TIMEOUT}"
    " WORKING_DIRECTORY ${working_dir})\n")
endforeach()
foreach(name IN LISTS concurrent)
  if(NOT name IN_LIST all)
    message(FATAL_ERROR "${TEST_EXECUTABLE}: '${name}' is listed for [concurrency] but not in the full list")
  endif()
endforeach()

file(WRITE "${CTEST_FILE}" "${script}")
