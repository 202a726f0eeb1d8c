// SPDX-License-Identifier: Apache-2.0
// The strict configuration reader: the shipped default file, every error kind against its golden
// message in tests/fixtures/config/expected/, durations as the file writes them, and the command
// line's overrides checked by the same rules.
#include "config/config.h"

#include <catch2/catch.hpp>

#include "config/config_source.h"
#include "config/value_checks.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace jitterd {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

const fs::path config_fixtures = fs::path(JITTERD_FIXTURES_DIR) / "config";

std::string read_text(const fs::path& path) {
  std::ifstream file(path);
  REQUIRE(file);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// The messages of a file that must not load, with the fixture directory cut from the paths so
// the golden text does not depend on where the checkout lives.
std::string errors_of(const fs::path& file) {
  try {
    load_config_file(file.string());
  } catch (const ConfigErrors& errors) {
    std::string text = errors.what();
    const std::string prefix = file.parent_path().string() + "/";
    for (std::size_t at; (at = text.find(prefix)) != std::string::npos;) text.erase(at, prefix.size());
    return text;
  }
  FAIL(file.filename().string() << " loaded without errors");
  return "";
}

std::vector<fs::path> error_fixtures() {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(config_fixtures))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

Config parse(const std::string& text) { return parse_config(text, "test.yaml"); }

std::string first_error(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigErrors& errors) {
    REQUIRE(!errors.errors().empty());
    return errors.errors().front().to_string();
  }
  FAIL("no error for: " << text);
  return "";
}

// Marks say where a value was written, which a default-constructed Config cannot know.
Config without_marks(Config config) {
  config.marks.clear();
  return config;
}

}  // namespace

TEST_CASE("the shipped config/jitterd.yaml holds exactly the defaults", "[config]") {
  const std::string path = JITTERD_SOURCE_DIR "/config/jitterd.yaml";
  Config expected;
  expected.path = path;
  CHECK(without_marks(load_config_file(path)) == expected);
}

TEST_CASE("an empty file, a comment or {} gives the defaults", "[config]") {
  Config expected;
  expected.path = "test.yaml";
  CHECK(parse("") == expected);
  CHECK(parse("# nothing set\n") == expected);
  CHECK(parse("{}") == expected);
  CHECK(without_marks(parse("sampler:\nweb:\nlog:\n")) == expected);
  CHECK(without_marks(parse("probes:\n  clock:\n  pacing:\n  kernel_cost:\n  pinning:\n")) == expected);
}

TEST_CASE("every error fixture gives its expected messages", "[config]") {
  const std::vector<fs::path> files = error_fixtures();
  REQUIRE(files.size() >= 20);
  for (const fs::path& file : files) {
    const fs::path golden = config_fixtures / "expected" / file.filename().replace_extension(".txt");
    INFO(file.filename().string());
    REQUIRE(fs::exists(golden));
    std::string expected = read_text(golden);
    while (!expected.empty() && expected.back() == '\n') expected.pop_back();
    CHECK(errors_of(file) == expected);
  }
}

TEST_CASE("every expected text has its fixture", "[config]") {
  for (const fs::directory_entry& entry : fs::directory_iterator(config_fixtures / "expected")) {
    INFO(entry.path().filename().string());
    CHECK(fs::exists(config_fixtures / entry.path().filename().replace_extension(".yaml")));
  }
}

TEST_CASE("the multi-error fixture lists one error per mistake", "[config]") {
  try {
    load_config_file((config_fixtures / "multiple_errors.yaml").string());
    FAIL("multiple_errors.yaml loaded");
  } catch (const ConfigErrors& errors) {
    CHECK(errors.errors().size() == 13);
    CHECK(std::string(errors.what()).find('\n') != std::string::npos);
  }
}

TEST_CASE("a missing file is one error naming the path and the reason", "[config]") {
  const std::string path = (config_fixtures / "no_such_file.yaml").string();
  try {
    load_config_file(path);
    FAIL("a missing file loaded");
  } catch (const ConfigErrors& errors) {
    REQUIRE(errors.errors().size() == 1);
    CHECK(errors.errors()[0].to_string() == path + ": cannot read: No such file or directory");
  }
}

TEST_CASE("every key is read", "[config]") {
  const Config config = parse(R"(
cpus: 2-3,5
sampler:
  tick_source: steady_clock
  interruption_threshold: 5us
  threshold_floor_multiple: 50
  duty_cycle: continuous
  burst_spin: 20ms
  burst_period: 200ms
  warmup: 500ms
  window: 5m
  lock_memory: false
  realtime_priority: 10
  interruption_ring: 1024
web:
  listen_address: 127.0.0.1:9100
  telemetry_path: /jitter
log:
  level: debug
)");
  CHECK(config.cpus == CpuSetting{false, {2, 3, 5}, "2-3,5"});
  CHECK(config.mark_of("cpus") == SourceMark{2, 7});
  CHECK(config.sampler.tick_source == TickMethod::steady_clock);
  CHECK(config.sampler.interruption_threshold == 5us);
  CHECK(config.sampler.threshold_floor_multiple == 50);
  CHECK(config.sampler.duty_cycle == DutyCycleMode::continuous);
  CHECK(config.sampler.burst_spin == 20ms);
  CHECK(config.sampler.burst_period == 200ms);
  CHECK(config.sampler.warmup == 500ms);
  CHECK(config.sampler.window == 5min);
  CHECK(config.sampler.lock_memory == false);
  CHECK(config.sampler.realtime_priority == 10);
  CHECK(config.sampler.interruption_ring == 1024);
  CHECK(config.web == WebConfig{"127.0.0.1:9100", "/jitter", "", {}});
  CHECK(config.log.level == "debug");
}

TEST_CASE("every probes key is read", "[config]") {
  const Config config = parse(R"(
probes:
  clock:
    enabled: false
    interval: 1h
    calibration_window: 1s
    sleep_requests: [50us, 2ms]
    sleep_samples: 200
  pacing:
    enabled: false
    interval: 30m
    cpu: 1
    rates: [100, 2500.5, 10000000]
    duration: 2s
    action: noop
  kernel_cost:
    enabled: false
    interval: 10s
    cpu: 3
    samples: 1000000
  pinning:
    enabled: false
    interval: 24h
    window: 10ms
  c2c:
    enabled: false
    interval: 1m
    method: two_lines
    samples: 10000
    round_trips: 1000
    pairs: [[3, 2], [0, 8191]]
    budget: 100000
    allow_unsampled: true
)");
  const ProbesSettings& probes = config.probes;
  CHECK(probes.clock == ClockSettings{false, 1h, 1s, {50us, 2ms}, 200});
  CHECK(probes.pacing == PacingSettings{false, 30min, 1, {100, 2500.5, 10000000}, 2s, PacingSend::noop});
  CHECK(config.mark_of("probes.pacing.cpu") == SourceMark{12, 10});
  CHECK(probes.kernel_cost == KernelCostSettings{false, 10s, 3, 1000000});
  CHECK(config.mark_of("probes.kernel_cost.cpu") == SourceMark{19, 10});
  CHECK(probes.pinning == PinningSettings{false, 24h, 10ms});
  CHECK(probes.c2c == C2cSettings{false, 1min, PingPongMethod::two_lines, 10000, 1000,
                                  PairRequest{PairSelection::list, {{3, 2}, {0, 8191}}}, 100000, true,
                                  std::nullopt});
  CHECK(config.mark_of("probes.c2c.pairs") == SourceMark{31, 12});
}

TEST_CASE("expect: every key, cpu sets that may be empty, names and latencies checked", "[config]") {
  const Config config = parse(R"(
expect:
  isolated: "2-7,10-15"
  nohz_full: []
  governor: performance
  clocksource: tsc
  no_device_irqs: true
  max_exit_latency: 10us
  smt_siblings_idle: true
)");
  CHECK(config.probes.posture.expect ==
        PostureExpectations{std::vector<int>{2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15},
                            std::vector<int>{},
                            "performance",
                            "tsc",
                            true,
                            10us,
                            true,
                            false,
                            {},
                            false,
                            {}});
  CHECK(parse("expect: {isolated: \"\"}").probes.posture.expect.isolated == std::vector<int>{});
  CHECK(parse("expect: {nohz_full: [3, 1]}").probes.posture.expect.nohz_full == std::vector<int>{1, 3});
  CHECK(PostureExpectations{} == parse("expect: {}").probes.posture.expect);
  CHECK(
      first_error("expect: {isolated: \"3-1\"}").rfind("test.yaml:1:20: expect.isolated: must be a CPU list", 0) ==
      0);
  CHECK(first_error("expect: {governor: \"perf ormance\"}") ==
        "test.yaml:1:20: expect.governor: must be a cpufreq governor name (letters, digits, _ - .), got \"perf "
        "ormance\"");
  CHECK(first_error("expect: {max_exit_latency: 1s}") ==
        "test.yaml:1:28: expect.max_exit_latency: must be 0s..10ms, got 1s");
}

TEST_CASE("expect: no_device_irqs true, false or fired, and irq_exempt patterns", "[config]") {
  const PostureExpectations fired =
      parse("expect: {no_device_irqs: fired, irq_exempt: [\"nvme*\", ahci]}").probes.posture.expect;
  CHECK(fired.no_device_irqs);
  CHECK(fired.device_irqs_fired_only);
  CHECK(fired.irq_exempt == std::vector<std::string>{"nvme*", "ahci"});
  const PostureExpectations tasks =
      parse("expect: {no_stray_tasks: true, application_tasks: [\"trader*\"]}").probes.posture.expect;
  CHECK(tasks.no_stray_tasks);
  CHECK(tasks.application_tasks == std::vector<std::string>{"trader*"});
  CHECK(first_error("expect: {application_tasks: []}") ==
        "test.yaml:1:29: expect.application_tasks: must be a sequence of 1..64 task name patterns (fnmatch, e.g. "
        "\"trader*\"), got an empty sequence");
  const PostureExpectations affinity = parse("expect: {no_device_irqs: true}").probes.posture.expect;
  CHECK((affinity.no_device_irqs && !affinity.device_irqs_fired_only));
  CHECK_FALSE(parse("expect: {no_device_irqs: false}").probes.posture.expect.no_device_irqs);
  CHECK(first_error("expect: {no_device_irqs: sometimes}") ==
        "test.yaml:1:26: expect.no_device_irqs: must be true, false or fired, got sometimes");
  CHECK(first_error("expect: {no_device_irqs: \"fired\"}") ==
        "test.yaml:1:26: expect.no_device_irqs: must be true, false or fired, got \"fired\"");
  CHECK(first_error("expect: {irq_exempt: nvme*}") ==
        "test.yaml:1:22: expect.irq_exempt: must be a sequence of 1..64 IRQ name patterns (fnmatch, e.g. "
        "\"nvme*\"), got nvme*");
  CHECK(first_error("expect: {irq_exempt: [\"\"]}") ==
        "test.yaml:1:23: expect.irq_exempt[0]: must be an IRQ name pattern of 1..128 printable characters, got "
        "\"\"");
}

TEST_CASE("cpus_per_core: one (the default) or all", "[config]") {
  CHECK_FALSE(parse("").cpus.all_threads_per_core);
  CHECK(parse("cpus_per_core: all").cpus.all_threads_per_core);
  CHECK_FALSE(parse("cpus_per_core: one").cpus.all_threads_per_core);
  CHECK(first_error("cpus_per_core: 2") == "test.yaml:1:16: cpus_per_core: must be one of one, all, got 2");
}

TEST_CASE("posture and attribution probes: interval, enabled, tracepoints", "[config]") {
  const Config config =
      parse("probes: {posture: {interval: 30s}, attribution: {enabled: false, tracepoints: false}}");
  CHECK(config.probes.posture == PostureSettings{true, 30s, {}});
  CHECK(config.probes.attribution == AttributionSettings{false, 10s, false});
  CHECK(ProbesSettings{}.posture == PostureSettings{true, 1min, {}});
  CHECK(ProbesSettings{}.attribution == AttributionSettings{true, 10s, false});
}

TEST_CASE("c2c pairs: representative, all or a list of [cpu, cpu]", "[config]") {
  CHECK(parse("probes: {c2c: {pairs: all}}").probes.c2c.pairs.selection == PairSelection::all);
  CHECK(parse("probes: {c2c: {pairs: representative}}").probes.c2c.pairs.selection ==
        PairSelection::representative);
  CHECK(first_error("probes: {c2c: {pairs: some}}") ==
        "test.yaml:1:23: probes.c2c.pairs: must be one of representative, all, got some");
  CHECK(first_error("probes: {c2c: {pairs: [[1, 2], [3]]}}") ==
        "test.yaml:1:32: probes.c2c.pairs[1]: must be a pair [cpu, cpu] of CPU numbers 0..8191, got a sequence");
  CHECK(first_error("probes: {c2c: {pairs: [[1, -2]]}}") ==
        "test.yaml:1:28: probes.c2c.pairs[0][1]: must be 0..8191, got -2");
  CHECK(first_error("probes: {c2c: {pairs: []}}") ==
        "test.yaml:1:23: probes.c2c.pairs: must be representative, all, or a sequence of 1..4096 [cpu, cpu] "
        "pairs, got "
        "an empty sequence");
  CHECK(first_error("probes: {c2c: {samples: 100000, round_trips: 1000}}") ==
        "test.yaml:1:46: probes.c2c.round_trips: samples × round_trips must be at most 10000000 round trips per "
        "pair, "
        "got 100000 × 1000 = 100000000");
}

TEST_CASE("the probes defaults are the documented ones", "[config]") {
  const ProbesSettings probes;
  CHECK(probes.clock == ClockSettings{true, 5min, 200ms, {1us, 10us, 100us, 1ms}, 50});
  CHECK(probes.pacing == PacingSettings{true, 15min, std::nullopt, {1000, 10000, 100000}, 500ms, PacingSend::udp});
  CHECK(probes.kernel_cost == KernelCostSettings{true, 15min, std::nullopt, 1000});
  CHECK(probes.pinning == PinningSettings{true, 15min, 500ms});
  CHECK(probes.c2c ==
        C2cSettings{true, 5min, PingPongMethod::cas, 100, 1000, PairRequest{}, 64, false, std::nullopt});
}

TEST_CASE("a probe cpu is auto or a CPU number, and keeps its mark", "[config]") {
  const Config zero = parse("probes: {pacing: {cpu: 0}}");
  CHECK(zero.probes.pacing.cpu == 0);
  CHECK(zero.mark_of("probes.pacing.cpu") == SourceMark{1, 24});
  CHECK(parse("probes: {pacing: {cpu: 8191}}").probes.pacing.cpu == 8191);
  const Config automatic = parse("probes: {kernel_cost: {cpu: auto}}");
  CHECK(automatic.probes.kernel_cost.cpu == std::nullopt);
  CHECK(automatic.mark_of("probes.kernel_cost.cpu") == SourceMark{1, 29});
  CHECK(parse("probes: {kernel_cost: {cpu: \"auto\"}}").probes.kernel_cost.cpu == std::nullopt);
  CHECK(first_error("probes: {pacing: {cpu: -1}}") ==
        "test.yaml:1:24: probes.pacing.cpu: must be auto or 0..8191, got -1");
  CHECK(first_error("probes: {pacing: {cpu: \"2\"}}") ==
        "test.yaml:1:24: probes.pacing.cpu: must be auto or an integer 0..8191, got \"2\"");
  CHECK(first_error("probes: {pacing: {cpu: [2]}}") ==
        "test.yaml:1:24: probes.pacing.cpu: must be auto or an integer 0..8191, got a sequence");
}

TEST_CASE("probes lists hold 1..16 distinct items in the order written", "[config]") {
  std::string sixteen;
  for (int rate = 1; rate <= 16; ++rate) sixteen += (rate == 1 ? "" : ", ") + std::to_string(rate);
  CHECK(parse("probes: {pacing: {rates: [" + sixteen + "]}}").probes.pacing.rates.size() == 16);
  CHECK(parse("probes: {pacing: {rates: [300, 1.25]}}").probes.pacing.rates == std::vector<double>{300, 1.25});
  CHECK(parse("probes: {clock: {sleep_requests: [1s, 1us]}}").probes.clock.sleep_requests ==
        std::vector<Duration>{1s, 1us});
  // Plain decimal notation only, as the rate is written.
  for (const char* bad :
       {"-5", "+5", "0100", "1.", ".5", "5.0.0", "1_000", "1e3", "inf", ".inf", "nan", "0x10", "\"5\""}) {
    INFO(bad);
    CHECK_THROWS_AS(parse(std::string("probes: {pacing: {rates: [") + bad + "]}}"), ConfigErrors);
  }
  CHECK(first_error("probes: {pacing: {rates: [1, 99999999999999999999999999999999999]}}") ==
        "test.yaml:1:30: probes.pacing.rates[1]: must be 1..10000000 per second, got "
        "99999999999999999999999999999999999");
  CHECK(first_error("probes: {clock: {sleep_requests: {a: 1ms}}}") ==
        "test.yaml:1:34: probes.clock.sleep_requests: must be a sequence of 1..16 durations, "
        "each 1us..1s, got a mapping");
}

TEST_CASE("a probes section that is not a mapping names its keys", "[config]") {
  CHECK(first_error("probes: true") ==
        "test.yaml:1:9: probes: must be a mapping with keys clock, pacing, kernel_cost, "
        "pinning, c2c, posture, attribution, got true");
}

TEST_CASE("cpus can be a number, a sequence or auto, and keeps its mark", "[config]") {
  CHECK(parse("cpus: 3").cpus == CpuSetting{false, {3}, "3"});
  CHECK(parse("cpus: [2, 3]").cpus == CpuSetting{false, {2, 3}, "2,3"});
  CHECK(parse("cpus: \"auto\"").cpus == CpuSetting{true, {}, "auto"});
  CHECK(parse("cpus: [2, 3]").mark_of("cpus") == SourceMark{1, 7});
  CHECK(parse("cpus: 3").mark_of("sampler") == SourceMark{});
  CHECK(parse("cpus: []").cpus == CpuSetting{false, {}, "[]"});  // samples nothing: a daemon that only watches
  CHECK(first_error("cpus: {}") ==
        "test.yaml:1:7: cpus: must be auto, a CPU list such as \"2-5,8\", a CPU number or a "
        "sequence of CPU numbers ([] for none), got an empty mapping");
}

TEST_CASE("burst_spin may equal burst_period, not exceed it", "[config]") {
  CHECK(parse("sampler: {burst_spin: 1s, burst_period: 1s}").sampler.burst_spin == 1s);
  CHECK(first_error("sampler: {burst_period: 10ms, burst_spin: 11ms}") ==
        "test.yaml:1:43: sampler.burst_spin: must be 1ms..10ms (at most sampler.burst_period), "
        "got 11ms");
  // With burst_period itself invalid, burst_spin is held to its own limits only.
  const std::string both = [] {
    try {
      parse("sampler: {burst_period: 2m, burst_spin: 90s}");
    } catch (const ConfigErrors& errors) {
      return std::string(errors.what());
    }
    return std::string();
  }();
  CHECK(both ==
        "test.yaml:1:25: sampler.burst_period: must be 10ms..1m, got 2m\n"
        "test.yaml:1:41: sampler.burst_spin: must be 1ms..1m, got 90s");
}

TEST_CASE("booleans and integers must be plain YAML 1.2 values", "[config]") {
  CHECK(parse("sampler: {lock_memory: False}").sampler.lock_memory == false);
  CHECK(first_error("sampler: {lock_memory: \"true\"}") ==
        "test.yaml:1:24: sampler.lock_memory: must be true or false, got \"true\"");
  CHECK(first_error("sampler: {realtime_priority: 1e1}") ==
        "test.yaml:1:30: sampler.realtime_priority: must be an integer 0..99 (0 = off, 1..99 = "
        "SCHED_FIFO), got 1e1");
  CHECK(first_error("sampler: {interruption_ring: 99999999999999999999}") ==
        "test.yaml:1:30: sampler.interruption_ring: must be 16..1048576 entries, "
        "got 99999999999999999999");
}

TEST_CASE("listen_address takes dotted-quad IPv4, bracketed IPv6 or none, and a port", "[config]") {
  CHECK(parse("web: {listen_address: 10.1.2.3:0}").web.listen_address == "10.1.2.3:0");
  CHECK(parse("web: {listen_address: \":9978\"}").web.listen_address == ":9978");
  CHECK(parse("web: {listen_address: \"[::]:80\"}").web.listen_address == "[::]:80");
  CHECK(parse("web: {listen_address: 255.255.255.255:65535}").web.listen_address == "255.255.255.255:65535");
  for (const char* bad :
       {"9978", ":", "1.2.3:80", "1.2.3.4.5:80", "01.2.3.4:80", "256.0.0.1:80", "1.2.3.4:", "1.2.3.4:-1",
        "1.2.3.4:80x", "1.2.3.4:65536", "1.2..4:80", "[::]80", "::1:80", "localhost:80"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse(std::string("web: {listen_address: \"") + bad + "\"}"), ConfigErrors);
  }
}

TEST_CASE("error text omits what is unknown", "[config]") {
  const ConfigError full{"f.yaml", 12, 5, "sampler.burst_spin", "must be 1ms..10s, got 0s"};
  CHECK(full.to_string() == "f.yaml:12:5: sampler.burst_spin: must be 1ms..10s, got 0s");
  CHECK(ConfigError{"f.yaml", 0, 0, "cpus", "CPU 9 does not exist"}.to_string() ==
        "f.yaml: cpus: CPU 9 does not exist");
  CHECK(ConfigError{"f.yaml", 3, 1, "", "YAML syntax error: x"}.to_string() == "f.yaml:3:1: YAML syntax error: x");
  const ConfigErrors both({{"a.yaml", 1, 1, "log", "x"}, {"a.yaml", 2, 1, "web", "y"}});
  CHECK(std::string(both.what()) == "a.yaml:1:1: log: x\na.yaml:2:1: web: y");
  CHECK(both.errors().size() == 2);
}

TEST_CASE("a message stays on one line whatever the file holds", "[config]") {
  CHECK(first_error("? |\n  two\n  lines\n: 1\n") ==
        "test.yaml:1:3: two\\nlines\\n: unknown key (allowed: cpus, cpus_per_core, sampler, web, log, "
        "probes, expect, application, watch, loops)");
  CHECK(first_error("log: {level: \"in\\tfo\"}") ==
        "test.yaml:1:14: log.level: must be one of trace, debug, info, warn, error, critical, off, "
        "got \"in\\x09fo\"");
}

TEST_CASE("parse_duration reads every unit exactly", "[config][duration]") {
  CHECK(parse_duration("250ns") == 250ns);
  CHECK(parse_duration("10us") == 10us);
  CHECK(parse_duration("10\u00b5s") == 10us);
  CHECK(parse_duration("10\u03bcs") == 10us);
  CHECK(parse_duration("1.5ms") == 1500us);
  CHECK(parse_duration("2s") == 2s);
  CHECK(parse_duration("5m") == 5min);
  CHECK(parse_duration("1h") == 1h);
  CHECK(parse_duration("0s") == 0s);
  CHECK(parse_duration("0.000000001s") == 1ns);
  CHECK(parse_duration("1.50ms") == 1500us);
  CHECK(parse_duration("9223372036854775807ns") == Duration::max());
}

TEST_CASE("parse_duration refuses what is not one exact duration", "[config][duration]") {
  for (const char* bad : {"",
                          "5",
                          "ms",
                          "-1s",
                          "+1s",
                          "1.5",
                          ".5s",
                          "1.s",
                          "1 s",
                          " 1s",
                          "1s ",
                          "1sec",
                          "1d",
                          "1S",
                          "1.5ns",
                          "0.0000000001s",
                          "1e3ns",
                          "1h30m",
                          "9223372036854775808ns",
                          "2562048h"}) {
    INFO(bad);
    CHECK_FALSE(parse_duration(bad).has_value());
  }
}

TEST_CASE("format_duration gives the shortest exact spelling", "[config][duration]") {
  CHECK(format_duration(100ms) == "100ms");
  CHECK(format_duration(1s) == "1s");
  CHECK(format_duration(250us) == "250us");
  CHECK(format_duration(1500us) == "1.5ms");
  CHECK(format_duration(60s) == "1m");
  CHECK(format_duration(90s) == "90s");
  CHECK(format_duration(90min) == "90m");
  CHECK(format_duration(1001ms) == "1.001s");
  CHECK(format_duration(1ns) == "1ns");
  CHECK(format_duration(0ns) == "0s");
  CHECK(format_duration(-2s) == "-2s");
}

TEST_CASE("format_duration output parses back to the same value", "[config][duration]") {
  std::vector<Duration> values{1ns, 999ns, 1us, 1001ns, 1500us, 59s, 61s, 1h + 1ns, 3h, Duration::max()};
  for (std::int64_t ns = 1; ns < Duration::max().count() / 7; ns = ns * 7 + 3) values.push_back(Duration{ns});
  for (Duration value : values) {
    INFO(value.count() << "ns as " << format_duration(value));
    CHECK(parse_duration(format_duration(value)) == value);
  }
}

TEST_CASE("every registered probe has a probes: section that disables it", "[config]") {
  // Except watch and loops: each runs where its top-level section (watch:, loops:) asks for it,
  // and only there.
  REQUIRE(make_enabled_probes(ProbesSettings{}).size() == probe_names().size() - 2);
  CHECK(make_enabled_probes(parse("watch: {cpus: 1}\nloops: {}").probes).size() == probe_names().size());
  for (const std::string_view name : probe_names()) {
    if (name == "watch" || name == "loops") continue;
    const Config config = parse("probes: {" + std::string(name) + ": {enabled: false}}");
    const auto enabled = make_enabled_probes(config.probes);
    CHECK(enabled.size() == probe_names().size() - 3);
    for (const auto& probe : enabled) CHECK(probe->name() != name);
  }
}

namespace {
// The flags that override settings go through the rules the file's values do, never through YAML.
std::string override_error(const ConfigOverrides& overrides) {
  Config config;
  try {
    apply_overrides(overrides, config);
  } catch (const ConfigErrors& errors) {
    CHECK(config == Config{});  // nothing applied
    REQUIRE(errors.errors().size() == 1);
    return errors.errors().front().to_string();
  }
  FAIL("the overrides applied without errors");
  return "";
}
}  // namespace

TEST_CASE("a flag cannot inject YAML: the listen address is checked as written", "[config]") {
  // Pasted into a double-quoted YAML scalar, \x35 was '5': this listened on port 19995.
  ConfigOverrides o;
  o.listen_address = "127.0.0.1:1999\\x35";
  CHECK(override_error(o) ==
        "command line: --web.listen-address: must be a.b.c.d:port, [IPv6]:port or :port, such as 0.0.0.0:9978, "
        "[::]:9978 or :9978, got \"127.0.0.1:1999\\x35\" (the port must be 0..65535)");
}

TEST_CASE("a flag cannot inject YAML: a quote in the telemetry path adds no key", "[config]") {
  ConfigOverrides o;
  o.telemetry_path = "/metrics\", listen_address: \"0.0.0.0:1";
  CHECK(override_error(o) ==
        "command line: --web.telemetry-path: must hold only A-Z a-z 0-9 . _ ~ - between slashes, "
        "got \"/metrics\", listen_address: \"0.0.0.0:1\"");
  ConfigOverrides level;
  level.log_level = "info\"}\nweb: {listen_address: \"0.0.0.0:1";
  CHECK(override_error(level) ==
        "command line: --log.level: must be one of trace, debug, info, warn, error, critical, off, got "
        "\"info\"}\\nweb: {listen_address: \"0.0.0.0:1\"");
}

TEST_CASE("the file and the flags share one rule per setting", "[config]") {
  CHECK(first_error("web: {telemetry_path: \"/a b\"}") ==
        "test.yaml:1:23: web.telemetry_path: must hold only A-Z a-z 0-9 . _ ~ - between slashes, got \"/a b\"");
  CHECK(check_telemetry_path("/jitter/metrics", "x").value == "/jitter/metrics");
  CHECK(check_listen_address("10.0.0.1:80", "x").value == "10.0.0.1:80");
  CHECK(check_log_level("verbose", "verbose").error ==
        "must be one of trace, debug, info, warn, error, critical, off, got verbose");
}

TEST_CASE("valid flags override the file; every bad flag is listed after the file's errors", "[config]") {
  const fs::path dir = fs::temp_directory_path() / "jitterd_config_source_test";
  fs::create_directories(dir);
  const fs::path file = dir / "jitterd.yaml";
  std::ofstream(file)
      << "web:\n  listen_address: 127.0.0.1:9100\n  telemetry_path: /jitter\nlog:\n  level: debug\n";
  ConfigSource source{file.string(), false, {}};
  source.overrides.listen_address = "127.0.0.1:19995";
  source.overrides.log_level = "warn";
  const Config config = load_config(source);
  CHECK(config.web.listen_address == "127.0.0.1:19995");
  CHECK(config.web.telemetry_path == "/jitter");  // not overridden: the file's
  CHECK(config.log.level == "warn");
  CHECK(config.path == file.string());

  std::ofstream(file) << "log:\n  level: loud\n";
  source.overrides.telemetry_path = "metrics";
  try {
    load_config(source);
    FAIL("loaded");
  } catch (const ConfigErrors& errors) {
    REQUIRE(errors.errors().size() == 2);
    CHECK(errors.errors()[0].file == file.string());
    CHECK(errors.errors()[1].to_string() ==
          "command line: --web.telemetry-path: must start with \"/\", got \"metrics\"");
  }
  fs::remove_all(dir);

  ConfigSource absent{(dir / "none.yaml").string(), true, {}};
  absent.overrides.telemetry_path = "/m";
  CHECK(load_config(absent).web.telemetry_path == "/m");  // report without a file: the defaults
  absent.defaults_when_absent = false;
  CHECK_THROWS_WITH(load_config(absent), Catch::Contains("none.yaml: cannot read"));
}

TEST_CASE("posture irq_detail: 0 by default, at most 64 IRQs per cpu", "[config]") {
  CHECK(ProbesSettings{}.posture.irq_detail == 0);
  CHECK(parse("probes: {posture: {irq_detail: 64}}").probes.posture.irq_detail == 64);
  CHECK(first_error("probes: {posture: {irq_detail: 65}}") ==
        "test.yaml:1:32: probes.posture.irq_detail: must be 0..64 IRQs per cpu, got 65");
}

TEST_CASE("attribution source_detail: 0 by default, at most 64 sources per cpu", "[config]") {
  CHECK(ProbesSettings{}.attribution.source_detail == 0);
  CHECK(parse("probes: {attribution: {source_detail: 8}}").probes.attribution.source_detail == 8);
  CHECK(first_error("probes: {attribution: {source_detail: -1}}") ==
        "test.yaml:1:39: probes.attribution.source_detail: must be 0..64 sources per cpu, got -1");
}

TEST_CASE("the web configuration file flag overrides web.config_file and is read with the rest", "[config]") {
  const fs::path dir = fs::temp_directory_path() / "jitterd_web_config_flag_test";
  fs::create_directories(dir);
  const fs::path file = dir / "jitterd.yaml";
  const fs::path web = dir / "web.yml";
  std::ofstream(file) << "web:\n  config_file: " << (dir / "absent.yml").string() << "\n";
  std::ofstream(web)
      << "basic_auth_users:\n  alice: $2y$04$QpcekFas4TsDdhhhvalQ.uFCTxq338o3gdaZbumCw4Fc8DNQjbLVW\n";
  ConfigSource source{file.string(), false, {}};
  // The file's web.config_file names a file that is not there: an error naming that file.
  CHECK_THROWS_WITH(load_config(source), Catch::Contains("absent.yml: cannot read"));
  // The flag wins, and its file is read into web.security.
  source.overrides.web_config_file = web.string();
  const Config config = load_config(source);
  CHECK(config.web.config_file == web.string());
  CHECK(config.web.security.basic_auth_users.count("alice") == 1);
  // An empty flag is refused as a flag, not taken as "no file".
  source.overrides.web_config_file = "";
  CHECK_THROWS_WITH(load_config(source),
                    Catch::Contains("command line: --web.config.file: must be a file name, got \"\""));
  fs::remove_all(dir);
}

TEST_CASE("the --cpus flag overrides cpus: by the file's rules and is named in errors", "[config]") {
  ConfigOverrides bad;
  bad.cpus = "2-";
  CHECK(override_error(bad).rfind("command line: --cpus: must be auto, none or a CPU list", 0) == 0);
  ConfigOverrides empty;
  empty.cpus = "";
  CHECK(override_error(empty).find("(no CPUs)") != std::string::npos);
  ConfigOverrides repeated;  // refused as the file's cpus: refuses it
  repeated.cpus = "1,0-2";
  CHECK(override_error(repeated) ==
        "command line: --cpus: must list each CPU once, got \"1,0-2\" (cpu 1 more than once)");

  Config config = parse("cpus: 1\ncpus_per_core: all\n");
  ConfigOverrides listed;
  listed.cpus = "2-3,5";
  apply_overrides(listed, config);
  CHECK_FALSE(config.cpus.automatic);
  CHECK(config.cpus.list == std::vector<int>{2, 3, 5});
  CHECK(config.cpus.all_threads_per_core);  // the file's
  CHECK(config.flags.at("cpus") == "--cpus");
  CHECK(config.mark_of("cpus").line == 0);
  ConfigOverrides none;
  none.cpus = "none";
  apply_overrides(none, config);
  CHECK_FALSE(config.cpus.automatic);
  CHECK(config.cpus.list.empty());
  ConfigOverrides automatic;
  automatic.cpus = "auto";
  apply_overrides(automatic, config);
  CHECK(config.cpus.automatic);
}

}  // namespace jitterd
