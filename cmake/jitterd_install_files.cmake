# SPDX-License-Identifier: Apache-2.0
# Runs at install time (install(CODE) in cmake/jitterd_install.cmake), when CMAKE_INSTALL_PREFIX is
# the prefix of this install, which `cmake --install --prefix` may have changed since configuring.
# Installs the configuration and the systemd unit generated for that prefix, so that the unit
# names the binary and the configuration where this install puts them.
# Set by the caller: JITTERD_SOURCE_DIR, JITTERD_BINARY_DIR, JITTERD_BINDIR, JITTERD_SYSCONFDIR and
# JITTERD_DATADIR (GNUInstallDirs' values as configured), JITTERD_UNIT_DIR (absolute, or relative to the prefix),
# JITTERD_CONFIGURED_PREFIX and JITTERD_DEFAULT_CONFIG_PATH (the binary's built-in --config).

function(jitterd_install_files)
  # GNUInstallDirs' own rules for this prefix: /usr puts the configuration in /etc, /opt/x in
  # /etc/opt/x, any other prefix in PREFIX/etc.
  set(CMAKE_INSTALL_BINDIR "${JITTERD_BINDIR}")
  set(CMAKE_INSTALL_SYSCONFDIR "${JITTERD_SYSCONFDIR}")
  set(CMAKE_INSTALL_DATADIR "${JITTERD_DATADIR}")
  set(CMAKE_INSTALL_LIBDIR lib)  # unused here; set so that GNUInstallDirs needs no compiler
  include(GNUInstallDirs)
  set(JITTERD_SYSTEMD_UNIT_DIR_FULL "${JITTERD_UNIT_DIR}")
  if(NOT IS_ABSOLUTE "${JITTERD_UNIT_DIR}")
    cmake_path(APPEND CMAKE_INSTALL_PREFIX "${JITTERD_UNIT_DIR}" OUTPUT_VARIABLE JITTERD_SYSTEMD_UNIT_DIR_FULL)
  endif()

  set(unit "${JITTERD_BINARY_DIR}/systemd/install/jitterd.service")
  configure_file("${JITTERD_SOURCE_DIR}/systemd/jitterd.service.in" "${unit}" @ONLY)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_FULL_SYSCONFDIR}/jitterd" TYPE FILE
       FILES "${JITTERD_SOURCE_DIR}/config/jitterd.yaml")
  file(INSTALL DESTINATION "${JITTERD_SYSTEMD_UNIT_DIR_FULL}" TYPE FILE FILES "${unit}")
  # Not in jitterd.service.d/: tracepoints are off by default, and the drop-in names the steps that
  # turn them on (it names this very path and the configuration's).
  set(JITTERD_TRACEPOINTS_DROPIN_FULL "${CMAKE_INSTALL_FULL_DATADIR}/jitterd/systemd/jitterd-tracepoints.conf")
  set(dropin "${JITTERD_BINARY_DIR}/systemd/install/jitterd-tracepoints.conf")
  configure_file("${JITTERD_SOURCE_DIR}/systemd/jitterd-tracepoints.conf" "${dropin}" @ONLY)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_FULL_DATADIR}/jitterd/systemd" TYPE FILE FILES "${dropin}")
  # The same for the watch's bpf method, used only with a `watch:` section.
  set(JITTERD_BPF_DROPIN_FULL "${CMAKE_INSTALL_FULL_DATADIR}/jitterd/systemd/jitterd-bpf.conf")
  set(bpf_dropin "${JITTERD_BINARY_DIR}/systemd/install/jitterd-bpf.conf")
  configure_file("${JITTERD_SOURCE_DIR}/systemd/jitterd-bpf.conf" "${bpf_dropin}" @ONLY)
  file(INSTALL DESTINATION "${CMAKE_INSTALL_FULL_DATADIR}/jitterd/systemd" TYPE FILE FILES "${bpf_dropin}")

  set(config "${CMAKE_INSTALL_FULL_SYSCONFDIR}/jitterd/jitterd.yaml")
  if(NOT config STREQUAL JITTERD_DEFAULT_CONFIG_PATH)
    message(WARNING
      "jitterd was configured for prefix ${JITTERD_CONFIGURED_PREFIX}: without --config it reads "
      "${JITTERD_DEFAULT_CONFIG_PATH}, but this install (prefix ${CMAKE_INSTALL_PREFIX}) puts the "
      "configuration at ${config}. The unit passes --config ${config}; to make the default agree, "
      "configure with -DCMAKE_INSTALL_PREFIX=${CMAKE_INSTALL_PREFIX}.")
  endif()
  # file(INSTALL) lists what it installed in this scope; hand the list on to install_manifest.txt.
  set(CMAKE_INSTALL_MANIFEST_FILES "${CMAKE_INSTALL_MANIFEST_FILES}" PARENT_SCOPE)
endfunction()

jitterd_install_files()
