// SPDX-License-Identifier: Apache-2.0
#include "watch/bpf_load_log.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

namespace jitterd {
namespace {

thread_local std::string libbpf_log;

int keep_libbpf_log(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char line[512];
  const int n = std::vsnprintf(line, sizeof(line), format, args);
  if (n > 0 && libbpf_log.size() < 4096) libbpf_log += line;
  return 0;
}

std::string last_log_line() {
  std::string log = libbpf_log;
  while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
  const auto newline = log.rfind('\n');
  return newline == std::string::npos ? log : log.substr(newline + 1);
}

}  // namespace

void capture_libbpf_log() {
  libbpf_set_print(keep_libbpf_log);
  libbpf_log.clear();
}

std::string load_failure(int error) {
  if (error == EPERM || error == EACCES)
    return "loading the BPF program needs CAP_BPF and CAP_PERFMON (or root): " + std::string(std::strerror(error));
  std::string why = "the BPF program did not load: " + std::string(std::strerror(error));
  const std::string log = last_log_line();
  if (!log.empty()) why += " (libbpf: " + log + ")";
  return why;
}

}  // namespace jitterd
