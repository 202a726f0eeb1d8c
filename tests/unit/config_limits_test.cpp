// SPDX-License-Identifier: Apache-2.0
// The limits that keep a hostile or careless configuration file from costing memory, output or a
// blocked reader (issue 10): regular files only, a size cap, a cap on values (aliases counted at
// each use) and on nesting, a cap on listed errors, and messages that stay printable.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"
#include "config/value_checks.h"
#include "host/cpu_list.h"
#include "host/host_reader.h"
#include "measure/tick.h"
#include "sampling/sampling_plan.h"

namespace jitterd {
namespace {

namespace fs = std::filesystem;

std::vector<ConfigError> errors_of(const std::string& text) {
  try {
    parse_config(text, "test.yaml");
  } catch (const ConfigErrors& errors) {
    return errors.errors();
  }
  return {};
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("jitterd_config_limits_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

std::string load_error(const fs::path& file) {
  try {
    load_config_file(file.string());
  } catch (const ConfigErrors& errors) {
    REQUIRE(errors.errors().size() == 1);
    return errors.errors().front().to_string();
  }
  FAIL("loaded " << file);
  return "";
}

}  // namespace

TEST_CASE("only a regular file of at most 256 KiB is read, refused before reading", "[config_limits]") {
  TempDir dir;
  // A FIFO with no writer: opening it for reading would wait for one; it must be refused at once.
  const fs::path fifo = dir.path / "fifo.yaml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto started = std::chrono::steady_clock::now();
  CHECK(load_error(fifo) == fifo.string() + ": cannot read: is a FIFO, not a regular file");
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  CHECK(load_error("/dev/zero") == "/dev/zero: cannot read: is a character device, not a regular file");
  CHECK(load_error(dir.path) == dir.path.string() + ": cannot read: is a directory, not a regular file");

  const fs::path big = dir.path / "big.yaml";
  std::ofstream(big) << "# " << std::string(kMaxConfigFileBytes, 'x') << "\n";
  CHECK(load_error(big) == big.string() + ": cannot read: is " + std::to_string(kMaxConfigFileBytes + 3) +
                               " bytes, more than the limit of 262144");
  const fs::path fits = dir.path / "fits.yaml";
  std::ofstream(fits) << "# " << std::string(kMaxConfigFileBytes - 3, 'x') << "\n";
  CHECK_NOTHROW(load_config_file(fits.string()));

  std::string reason;
  CHECK_FALSE(read_regular_file(dir.path / "absent", 10, &reason));
  CHECK(reason == "No such file or directory");
}

TEST_CASE("aliases cannot amplify: values are counted at each use", "[config_limits]") {
  // A 100 kB string aliased 10,000 times: once 1 GB of messages and 3 GB of memory.
  std::string text = "anchor: &big \"" + std::string(100000, 'a') + "\"\ncpus: [";
  for (int i = 0; i < 10000; ++i) text += (i ? ", *big" : "*big");
  text += "]\n";
  const std::vector<ConfigError> errors = errors_of(text);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message ==
        "the file holds more than 10000 values (an alias counts at each use); a configuration is far smaller");

  // Below the limit, each message quotes a long value cut short, with its length.
  const std::vector<ConfigError> few = errors_of("anchor: &big \"" + std::string(100000, 'a') +
                                                 "\"\nlog: {level: *big}\nsampler: {tick_source: *big}\n");
  REQUIRE(few.size() == 3);  // the unknown key "anchor", and the two aliases
  for (const ConfigError& error : few) CHECK(error.to_string().size() < 400);
  CHECK(few[1].message.find("... (100000 bytes)") != std::string::npos);
}

TEST_CASE("a long key is cut in messages as a long value is, however often it is aliased", "[config_limits]") {
  // Issue 24: a 250 kB key aliased 40 times printed 5 MB of errors.
  std::string text = "sampler:\n  ? &k " + std::string(250'000, 'k') + "\n  : 1\n";
  for (int i = 0; i < 40; ++i) text += "  ? *k\n  : 1\n";
  const std::vector<ConfigError> errors = errors_of(text);
  REQUIRE_FALSE(errors.empty());
  std::size_t printed = 0;
  for (const ConfigError& e : errors) printed += e.to_string().size() + 1;
  CHECK(printed < 8'000);
  CHECK_THAT(errors.front().to_string(),
             Catch::StartsWith("test.yaml:2:") &&
                 Catch::Contains("sampler." + std::string(60, 'k') + "... (250000 bytes)") &&
                 Catch::Contains("unknown key"));
  CHECK_THAT(errors.back().to_string(), Catch::Contains("duplicate key"));
}

TEST_CASE("a huge sequence is one error, not minutes and gigabytes", "[config_limits]") {
  std::string text = "cpus: [";
  for (int i = 0; i < 20000; ++i) text += (i ? ",0" : "0");
  text += "]\n";
  const std::vector<ConfigError> errors = errors_of(text);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message.starts_with("the file holds more than 10000 values"));
}

TEST_CASE("deep nesting is named as such, with its place", "[config_limits]") {
  const std::string nested = "cpus: " + std::string(40, '[') + std::string(40, ']') + "\n";
  std::vector<ConfigError> errors = errors_of(nested);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "nested more than 32 levels deep");
  CHECK(errors[0].line == 1);

  // Deep enough that the YAML parser itself stops.
  errors = errors_of("cpus: " + std::string(5000, '[') + std::string(5000, ']') + "\n");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message.starts_with("nested more than 32 levels deep (YAML parser gave up at "));
  CHECK(errors[0].line == 1);
}

TEST_CASE("at most 20 errors are listed; the rest are counted", "[config_limits]") {
  std::string text;
  for (int i = 0; i < 30; ++i) text += "unknown_" + std::to_string(i) + ": 1\n";
  try {
    parse_config(text, "test.yaml");
    FAIL("parsed");
  } catch (const ConfigErrors& errors) {
    CHECK(errors.errors().size() == 30);
    const std::vector<std::string> lines = errors.listed();
    REQUIRE(lines.size() == 21);
    CHECK(lines[0].starts_with("test.yaml:1:1: unknown_0: unknown key"));
    CHECK(lines[20] == "... and 10 more errors");
    CHECK(std::string(errors.what()).find("unknown_20") == std::string::npos);
  }
}

TEST_CASE("integers with leading zeros are refused: YAML 1.1 reads them as octal", "[config_limits]") {
  const std::vector<ConfigError> errors = errors_of("sampler:\n  realtime_priority: 050\n");
  REQUIRE(errors.size() == 1);
  CHECK(
      errors[0].to_string() ==
      "test.yaml:2:22: sampler.realtime_priority: must be an integer 0..99 (0 = off, 1..99 = SCHED_FIFO) without "
      "leading zeros, got 050");
  CHECK(errors_of("sampler:\n  realtime_priority: 0\n").empty());
  CHECK(errors_of("sampler:\n  realtime_priority: 50\n").empty());
}

TEST_CASE("a CPU listed twice is refused, in any spelling", "[config_limits]") {
  CHECK(repeated_cpu("2,2") == 2);
  CHECK(repeated_cpu("1-3,2") == 2);
  CHECK(repeated_cpu("5,1-2,1") == 1);
  CHECK_FALSE(repeated_cpu("1-3,5"));
  CHECK_FALSE(repeated_cpu("x"));
  for (const char* text : {"cpus: [1, 1]\n", "cpus: \"1-3,2\"\n", "expect: {isolated: \"2,2\"}\n"}) {
    INFO(text);
    const std::vector<ConfigError> errors = errors_of(text);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].message.starts_with("must list each CPU once, got "));
    CHECK(errors[0].message.find("more than once)") != std::string::npos);
  }
  CHECK(errors_of("cpus: [1, 1]\n")[0].message == "must list each CPU once, got [1,1] (cpu 1 more than once)");
}

TEST_CASE("messages escape control bytes and malformed UTF-8, and keep good UTF-8", "[config_limits]") {
  CHECK(printable("a\nb") == "a\\nb");
  CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(printable("\xff\xfe") == "\\xff\\xfe");
  CHECK(printable("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");  // café €
  CHECK(printable("\xc3") == "\\xc3");                                         // cut short
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");                                // overlong '/'
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");                       // a surrogate
  CHECK(printable("\xc2\x85") == "\\xc2\\x85");                                // C1 control NEL
  const std::vector<ConfigError> errors = errors_of("log:\n  level: \xff\xfe\n");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "must be one of trace, debug, info, warn, error, critical, off, got \\xff\\xfe");
}

TEST_CASE("a tick source this architecture lacks is reported at its line and column", "[config_limits]") {
  const std::vector<TickMethod> supported = supported_tick_methods();
  for (const TickMethod method :
       {TickMethod::lfence_rdtsc, TickMethod::rdtsc, TickMethod::rdtscp, TickMethod::cntvct}) {
    if (std::find(supported.begin(), supported.end(), method) != supported.end()) continue;
    INFO(to_string(method));
    const Config config =
        parse_config("sampler:\n  tick_source: " + std::string(to_string(method)) + "\n", "t.yaml");
    try {
      make_sampling_plan(config, HostReader(), {0});
      FAIL("planned");
    } catch (const ConfigErrors& errors) {
      REQUIRE(errors.errors().size() == 1);
      CHECK(errors.errors()[0].to_string().starts_with("t.yaml:2:16: sampler.tick_source: "));
    }
  }
}

}  // namespace jitterd
