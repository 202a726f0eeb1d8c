// SPDX-License-Identifier: Apache-2.0
// Clocksource and /proc/cpuinfo clock facts: the parser on literal text, the readers on the
// smt8_isolated (Intel on tsc), missing_isolated (KVM guest on kvm-clock) and aarch64_vm fixtures.
#include "host/clock_info.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "host/topology.h"

#include "fixture_tree.h"

using jitterd::ClocksourceInfo;
using jitterd::CpuinfoClock;
using jitterd::has_flag;
using jitterd::HostReader;
using jitterd::hypervisor_flag;
using jitterd::parse_cpuinfo_clock;
using jitterd::read_clocksource;
using jitterd::read_cpuinfo_clock;

namespace {

using jitterd::testing::fixture_reader;
using jitterd::testing::fixtures;

using Mhz = std::vector<std::pair<int, double>>;

// A scratch clocksource0 directory with only a current_clocksource file, removed when the test
// ends.
class ScratchClocksource {
 public:
  explicit ScratchClocksource(const std::string& current_clocksource)
      : root_(std::filesystem::temp_directory_path() / ("jitterd_clock_info_test_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(dir());
    std::ofstream(dir() / "current_clocksource") << current_clocksource;
  }
  ~ScratchClocksource() { std::filesystem::remove_all(root_); }
  ScratchClocksource(const ScratchClocksource&) = delete;
  ScratchClocksource& operator=(const ScratchClocksource&) = delete;

  std::filesystem::path dir() const { return root_ / "devices/system/clocksource/clocksource0"; }
  HostReader reader() const { return HostReader(root_, root_ / "proc"); }

 private:
  std::filesystem::path root_;
};

}  // namespace

TEST_CASE("parse_cpuinfo_clock reads x86 flags, model and every cpu MHz", "[clock_info]") {
  const CpuinfoClock info = parse_cpuinfo_clock(
      "processor\t: 0\n"
      "model name\t: Example CPU @ 2.00GHz\n"
      "cpu MHz\t\t: 1999.5\n"
      "flags\t\t: fpu tsc constant_tsc nonstop_tsc\n"
      "vmx flags\t: ept vpid\n"
      "\n"
      "processor\t: 1\n"
      "model name\t: Example CPU @ 2.00GHz\n"
      "cpu MHz\t\t: 800.000\n"
      "flags\t\t: fpu tsc constant_tsc nonstop_tsc tsc_known_freq\n");
  CHECK(info.model_name == "Example CPU @ 2.00GHz");
  CHECK(info.mhz == Mhz{{0, 1999.5}, {1, 800.0}});
  // The first processor's flags only, and "vmx flags" is a different line.
  CHECK(info.flags == std::set<std::string>{"fpu", "tsc", "constant_tsc", "nonstop_tsc"});
  CHECK(has_flag(info, "constant_tsc"));
  CHECK_FALSE(has_flag(info, "tsc_known_freq"));
  CHECK_FALSE(has_flag(info, "ept"));
  CHECK_FALSE(has_flag(info, "constant"));
  CHECK(hypervisor_flag(info) == "no");
  CHECK(hypervisor_flag(parse_cpuinfo_clock("processor\t: 0\nflags\t\t: fpu tsc hypervisor lahf_lm\n")) == "yes");
}

TEST_CASE("parse_cpuinfo_clock stores aarch64 Features as flags", "[clock_info]") {
  const CpuinfoClock info = parse_cpuinfo_clock(
      "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm\n"
      "CPU architecture: 8\n\nprocessor\t: 1\nFeatures\t: fp asimd evtstrm\n");
  CHECK(info.flags == std::set<std::string>{"fp", "asimd", "evtstrm"});
  CHECK(hypervisor_flag(info).empty());  // aarch64 cannot say
  CHECK(info.mhz.empty());
  CHECK(info.model_name.empty());
}

TEST_CASE("parse_cpuinfo_clock tolerates missing and malformed fields", "[clock_info]") {
  CHECK(parse_cpuinfo_clock("").flags.empty());
  const CpuinfoClock info = parse_cpuinfo_clock(
      "cpu MHz\t: 100.0\n"  // before any processor line: no CPU to attribute it to
      "no colon here\n"
      "processor\t: 0\n"
      "cpu MHz\t: fast\n"
      "flags\t:\n"
      "processor\t: 1\n"
      "cpu MHz\t: 1200\n"
      "flags\t: tsc\n");
  CHECK(info.mhz == Mhz{{1, 1200.0}});
  CHECK(info.flags.empty());  // the first processor's flags line is empty, and it counts
  CHECK(info.model_name.empty());
}

TEST_CASE("an Intel machine on tsc with a known TSC frequency", "[clock_info]") {
  const HostReader host = fixture_reader("smt8_isolated");
  std::vector<std::string> problems;
  const std::optional<ClocksourceInfo> clocksource = read_clocksource(host, &problems);
  REQUIRE(clocksource);
  CHECK(clocksource->current == "tsc");
  CHECK(clocksource->available == std::vector<std::string>{"tsc", "hpet", "acpi_pm"});
  const std::optional<CpuinfoClock> cpuinfo = read_cpuinfo_clock(host, &problems);
  REQUIRE(cpuinfo);
  CHECK(problems.empty());
  CHECK(cpuinfo->model_name == "Intel(R) Xeon(R) CPU E3-1240 v5 @ 3.50GHz");
  for (const char* flag : {"tsc", "constant_tsc", "nonstop_tsc", "tsc_known_freq"}) {
    INFO(flag);
    CHECK(has_flag(*cpuinfo, flag));
  }
  CHECK_FALSE(has_flag(*cpuinfo, "hypervisor"));
  REQUIRE(cpuinfo->mhz.size() == 8);
  CHECK(cpuinfo->mhz[0] == std::pair(0, 3500.0));
  CHECK(cpuinfo->mhz[7] == std::pair(7, 800.0));
}

TEST_CASE("a KVM guest on kvm-clock without tsc_known_freq", "[clock_info]") {
  const HostReader host = fixture_reader("missing_isolated");
  const std::optional<ClocksourceInfo> clocksource = read_clocksource(host, nullptr);
  REQUIRE(clocksource);
  CHECK(clocksource->current == "kvm-clock");
  CHECK(clocksource->available == std::vector<std::string>{"kvm-clock", "tsc", "hpet", "acpi_pm"});
  const std::optional<CpuinfoClock> cpuinfo = read_cpuinfo_clock(host, nullptr);
  REQUIRE(cpuinfo);
  CHECK(has_flag(*cpuinfo, "hypervisor"));
  CHECK(has_flag(*cpuinfo, "constant_tsc"));
  CHECK_FALSE(has_flag(*cpuinfo, "tsc_known_freq"));
  CHECK(cpuinfo->mhz == Mhz{{0, 2992.968}, {1, 2992.968}});
}

TEST_CASE("an aarch64 guest on the architected counter", "[clock_info]") {
  const HostReader host = fixture_reader("aarch64_vm");
  std::vector<std::string> problems;
  const std::optional<ClocksourceInfo> clocksource = read_clocksource(host, &problems);
  REQUIRE(clocksource);
  CHECK(clocksource->current == "arch_sys_counter");
  CHECK(clocksource->available == std::vector<std::string>{"arch_sys_counter"});
  const std::optional<CpuinfoClock> cpuinfo = read_cpuinfo_clock(host, &problems);
  REQUIRE(cpuinfo);
  CHECK(has_flag(*cpuinfo, "evtstrm"));
  CHECK_FALSE(has_flag(*cpuinfo, "constant_tsc"));
  CHECK(cpuinfo->mhz.empty());
  CHECK(cpuinfo->model_name.empty());
  // The fixture is a whole machine, so other readers can use it too.
  const jitterd::Topology topology = jitterd::read_topology(host);
  CHECK(topology.online == std::vector<int>{0, 1, 2, 3});
  CHECK(topology.problems.empty());
  CHECK(problems.empty());
}

TEST_CASE("missing clock files are problems naming the path", "[clock_info]") {
  const HostReader host = fixture_reader("offline_cpu");  // has neither file
  std::vector<std::string> problems;
  CHECK_FALSE(read_clocksource(host, &problems));
  CHECK_FALSE(read_cpuinfo_clock(host, &problems));
  CHECK_FALSE(read_clocksource(host, nullptr));
  const std::string clocksource0 = (fixtures / "offline_cpu/sys/devices/system/clocksource/clocksource0").string();
  CHECK(problems == std::vector<std::string>{
                        clocksource0 + "/current_clocksource: missing; the current clocksource is unknown",
                        (fixtures / "offline_cpu/proc/cpuinfo").string() +
                            ": missing; the CPU flags and frequencies are unknown",
                    });
}

TEST_CASE("an empty current clocksource is a problem; a missing list is an empty one", "[clock_info]") {
  {
    const ScratchClocksource tree("\n");
    std::vector<std::string> problems;
    CHECK_FALSE(read_clocksource(tree.reader(), &problems));
    CHECK(problems == std::vector<std::string>{(tree.dir() / "current_clocksource").string() +
                                               ": empty; the current clocksource is unknown"});
  }
  {
    const ScratchClocksource tree("tsc\n");
    std::vector<std::string> problems;
    const std::optional<ClocksourceInfo> clocksource = read_clocksource(tree.reader(), &problems);
    REQUIRE(clocksource);
    CHECK(clocksource->current == "tsc");
    CHECK(clocksource->available.empty());
    CHECK(problems == std::vector<std::string>{(tree.dir() / "available_clocksource").string() +
                                               ": missing; listing no available clocksources"});
  }
}
