# Install rules for the binary, its configuration and the systemd unit (generated from
# systemd/jitterd.service.in), laid out by GNUInstallDirs. Included by the top CMakeLists.txt.
#
#   prefix /usr/local (the default)   prefix /usr
#   /usr/local/bin/jitterd            /usr/bin/jitterd
#   /usr/local/etc/jitterd/jitterd.yaml  /etc/jitterd/jitterd.yaml
#   /usr/local/lib/systemd/system/    systemd's own unit directory (pkg-config systemd
#     jitterd.service                   systemdsystemunitdir: /lib/systemd/system on Debian 12)
#
# systemd reads units from both unit directories. The prefix may also be given when installing
# (cmake --install build --prefix /usr): the configuration and the unit then follow that prefix,
# worked out at install time by cmake/jitterd_install_files.cmake. The binary's built-in default
# --config stays the configured one (it warns when they differ).

set(JITTERD_SYSTEMD_UNIT_DIR "" CACHE STRING
  "Directory for jitterd.service, absolute or relative to the install prefix (empty: systemd's own with prefix /usr, else lib/systemd/system)")

set(jitterd_unit_dir "${JITTERD_SYSTEMD_UNIT_DIR}")
if(NOT jitterd_unit_dir)
  set(jitterd_unit_dir lib/systemd/system)
  if(CMAKE_INSTALL_PREFIX MATCHES "^/usr/?$")
    pkg_get_variable(JITTERD_SYSTEMD_PACKAGE_UNIT_DIR systemd systemdsystemunitdir)
    if(JITTERD_SYSTEMD_PACKAGE_UNIT_DIR)
      set(jitterd_unit_dir ${JITTERD_SYSTEMD_PACKAGE_UNIT_DIR})
    endif()
  endif()
endif()
if(IS_ABSOLUTE "${jitterd_unit_dir}")
  set(JITTERD_SYSTEMD_UNIT_DIR_FULL ${jitterd_unit_dir})
else()
  cmake_path(APPEND CMAKE_INSTALL_PREFIX ${jitterd_unit_dir} OUTPUT_VARIABLE JITTERD_SYSTEMD_UNIT_DIR_FULL)
endif()

# A unit where systemd does not look would install without error and never be found.
pkg_get_variable(JITTERD_SYSTEMD_UNIT_PATH systemd systemdsystemunitpath)
if(JITTERD_SYSTEMD_UNIT_PATH)
  string(REPLACE ":" ";" unit_path "${JITTERD_SYSTEMD_UNIT_PATH}")
  if(NOT JITTERD_SYSTEMD_UNIT_DIR_FULL IN_LIST unit_path)
    message(WARNING "systemd does not read units from ${JITTERD_SYSTEMD_UNIT_DIR_FULL} (it reads "
                    "${JITTERD_SYSTEMD_UNIT_PATH}); set JITTERD_SYSTEMD_UNIT_DIR to one of those")
  endif()
endif()

# The unit for this configuration, as tests/systemd/unit_test.sh checks it.
set(JITTERD_GENERATED_UNIT ${CMAKE_BINARY_DIR}/systemd/jitterd.service)
configure_file(systemd/jitterd.service.in ${JITTERD_GENERATED_UNIT} @ONLY)

install(TARGETS jitterd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(CODE "
  set(JITTERD_SOURCE_DIR \"${CMAKE_SOURCE_DIR}\")
  set(JITTERD_BINARY_DIR \"${CMAKE_BINARY_DIR}\")
  set(JITTERD_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  set(JITTERD_SYSCONFDIR \"${CMAKE_INSTALL_SYSCONFDIR}\")
  set(JITTERD_UNIT_DIR \"${jitterd_unit_dir}\")
  set(JITTERD_CONFIGURED_PREFIX \"${CMAKE_INSTALL_PREFIX}\")
  set(JITTERD_DEFAULT_CONFIG_PATH \"${JITTERD_DEFAULT_CONFIG_PATH}\")
  include(\"${CMAKE_SOURCE_DIR}/cmake/jitterd_install_files.cmake\")
")
