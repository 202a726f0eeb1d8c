// SPDX-License-Identifier: Apache-2.0
#include "daemon/logging.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace jitterd {

namespace {
// "<N>" with N the syslog priority of the level, as journald reads it from a stream.
class SyslogPriorityFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    static constexpr const char* kPrefix[] = {"<7>", "<7>", "<6>", "<4>", "<3>", "<2>", "<6>"};
    const std::string_view prefix = kPrefix[static_cast<int>(msg.level)];
    dest.append(prefix.data(), prefix.data() + prefix.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<SyslogPriorityFlag>(); }
};
}  // namespace

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  struct stat st {};
  if (fstat(2, &st) != 0) return false;
  const std::string expected = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  return expected == stream;
}

void setup_logging() {
  auto logger = spdlog::stderr_logger_mt("jitterd");
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (stderr_is_journal()) {
    formatter->add_flag<SyslogPriorityFlag>('*').set_pattern("%*%v");
  } else {
    formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  }
  logger->set_formatter(std::move(formatter));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
}

bool set_log_level(std::string_view level) {
  const auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") return false;
  spdlog::set_level(parsed);
  return true;
}

}  // namespace jitterd
