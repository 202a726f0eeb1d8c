# SPDX-License-Identifier: Apache-2.0
# Builds a BPF program with clang's bpf target and turns it into a libbpf skeleton header with
# bpftool, at build time: jitterd_bpf_skeleton(TARGET SOURCE NAME [PART...]) compiles SOURCE (a
# *.bpf.c) into generated/NAME.bpf.o and writes generated/NAME.skel.h, which TARGET's sources
# include. PARTs are the headers SOURCE includes beside NAME.h (a program in parts is still one
# compilation unit: one object, one skeleton); a change to any of them rebuilds it. The object
# carries BTF (-g) so libbpf relocates its field reads to the running kernel's layout (CO-RE). The
# program sees src/ as the C++ does, for the tables it shares with a layer below (host/x86_vectors.h, host/softirqs.h).
find_program(JITTERD_BPF_CLANG NAMES clang-14 clang REQUIRED)
find_program(JITTERD_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin REQUIRED)

function(jitterd_bpf_skeleton target source name)
  set(out ${CMAKE_BINARY_DIR}/generated)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(arch x86)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(arch arm64)
  else()
    set(arch ${CMAKE_SYSTEM_PROCESSOR})
  endif()
  # The kernel's UAPI headers (linux/bpf.h) include asm/ headers from the multiarch directory.
  set(multiarch ${CMAKE_LIBRARY_ARCHITECTURE})
  get_filename_component(source_dir ${source} DIRECTORY)
  add_custom_command(
    OUTPUT ${out}/${name}.bpf.o ${out}/${name}.skel.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out}
    COMMAND ${JITTERD_BPF_CLANG} -g -O2 -Wall -target bpf -D__TARGET_ARCH_${arch}
            -I${source_dir} -I${CMAKE_SOURCE_DIR}/src -I/usr/include/${multiarch} -c ${source} -o ${out}/${name}.bpf.o
    COMMAND ${JITTERD_BPFTOOL} gen skeleton ${out}/${name}.bpf.o name ${name} > ${out}/${name}.skel.h
    DEPENDS ${source} ${source_dir}/${name}.h ${ARGN}
    COMMENT "BPF program ${name}: clang -target bpf, bpftool gen skeleton"
    VERBATIM)
  add_custom_target(${name}_skeleton DEPENDS ${out}/${name}.skel.h)
  add_dependencies(${target} ${name}_skeleton)
  target_include_directories(${target} PRIVATE ${out} ${source_dir})
endfunction()
