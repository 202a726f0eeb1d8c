# SPDX-License-Identifier: Apache-2.0
# The loop probe library, include/jitterd/loop_probe.h and the parts it includes (loop_probe_*.h):
# header-only (C11, C++17 and later), an INTERFACE target here (jitterd::loop_probe, as
# find_package(jitterd-loop-probe) gives it to applications), and its install rules: the headers
# under PREFIX/include/jitterd, the pkg-config
# file jitterd-loop-probe.pc and the CMake package configuration, both architecture-independent
# and so under PREFIX/share (share/pkgconfig and share/cmake/jitterd-loop-probe, where pkg-config
# and find_package look; both relocatable: their prefix is where they lie). Included by the top
# CMakeLists.txt.
add_library(jitterd_loop_probe INTERFACE)
add_library(jitterd::loop_probe ALIAS jitterd_loop_probe)
target_include_directories(jitterd_loop_probe INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                                                         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

if(NOT JITTERD_MEASURE_ONLY)
  include(CMakePackageConfigHelpers)
  set(jitterd_loop_probe_cmake_dir ${CMAKE_INSTALL_DATADIR}/cmake/jitterd-loop-probe)
  # From the package directory back up to the prefix ("../../.." for share/cmake/jitterd-loop-probe).
  file(RELATIVE_PATH JITTERD_LOOP_PROBE_UP /prefix/${jitterd_loop_probe_cmake_dir} /prefix)
  # From the pkg-config directory back up to the prefix ("../.." for share/pkgconfig), and the
  # include directory under it (as given when it is absolute).
  file(RELATIVE_PATH JITTERD_LOOP_PROBE_PC_UP /prefix/${CMAKE_INSTALL_DATADIR}/pkgconfig /prefix)
  string(REGEX REPLACE "/$" "" JITTERD_LOOP_PROBE_PC_UP "${JITTERD_LOOP_PROBE_PC_UP}")
  if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(JITTERD_LOOP_PROBE_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
  else()
    set(JITTERD_LOOP_PROBE_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  endif()
  set(jitterd_loop_probe_generated ${CMAKE_BINARY_DIR}/jitterd-loop-probe)
  configure_file(${CMAKE_SOURCE_DIR}/cmake/jitterd-loop-probe.pc.in ${jitterd_loop_probe_generated}/jitterd-loop-probe.pc
                 @ONLY)
  configure_file(${CMAKE_SOURCE_DIR}/cmake/jitterd-loop-probe-config.cmake.in
                 ${jitterd_loop_probe_generated}/jitterd-loop-probe-config.cmake @ONLY)
  write_basic_package_version_file(${jitterd_loop_probe_generated}/jitterd-loop-probe-config-version.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
  # The header applications include and its parts (jitterd/loop_probe.h includes them).
  install(FILES ${CMAKE_SOURCE_DIR}/include/jitterd/loop_probe.h ${CMAKE_SOURCE_DIR}/include/jitterd/loop_probe_layout.h
                ${CMAKE_SOURCE_DIR}/include/jitterd/loop_probe_checks.h ${CMAKE_SOURCE_DIR}/include/jitterd/loop_probe_open.h
                ${CMAKE_SOURCE_DIR}/include/jitterd/loop_probe_record.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/jitterd)
  install(FILES ${jitterd_loop_probe_generated}/jitterd-loop-probe.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig)
  install(FILES ${jitterd_loop_probe_generated}/jitterd-loop-probe-config.cmake
                ${jitterd_loop_probe_generated}/jitterd-loop-probe-config-version.cmake
          DESTINATION ${jitterd_loop_probe_cmake_dir})
endif()
