# SPDX-License-Identifier: Apache-2.0
# Writes OUTPUT, a header defining JITTERD_REVISION as `git describe --always --dirty` of
# SOURCE_DIR. Run at every build (the jitterd_revision target), it rewrites OUTPUT only when the
# text changes, so an unchanged revision recompiles and relinks nothing. Outside a git checkout
# (a release tarball, even one unpacked inside another repository) the revision is "unknown".
#   cmake -DSOURCE_DIR=DIR -DOUTPUT=FILE -P jitterd_revision.cmake

cmake_minimum_required(VERSION 3.25)

set(revision unknown)
execute_process(COMMAND git rev-parse --show-toplevel
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE toplevel OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE toplevel_rc ERROR_QUIET)
file(REAL_PATH "${SOURCE_DIR}" source_dir)
if(toplevel_rc EQUAL 0 AND toplevel)
  file(REAL_PATH "${toplevel}" toplevel)
endif()
if(toplevel_rc EQUAL 0 AND toplevel STREQUAL source_dir)
  # --no-optional-locks: --dirty refreshes the index; never hold its lock against the user's git.
  execute_process(COMMAND git --no-optional-locks describe --always --dirty
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE describe_rc ERROR_QUIET)
  if(describe_rc EQUAL 0 AND described MATCHES "^[A-Za-z0-9._/+-]+$")
    set(revision "${described}")
  endif()
endif()

set(text "// Written at build time by cmake/jitterd_revision.cmake; not to be edited.\n#pragma once\n#define JITTERD_REVISION \"${revision}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old_text)
endif()
if(NOT old_text STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
  message(STATUS "jitterd revision: ${revision}")
endif()
