// SPDX-License-Identifier: Apache-2.0
// fleet's reading of Prometheus answers without a server: the fingerprints (cohorts, hosts that
// changed cohort inside the range, an unknown --by, no host), the instance matcher's escaping,
// and the per-CPU figures from the aggregated bucket and counter answers.
#include <catch2/catch.hpp>

#include <algorithm>

#include "fleet/fleet_history.h"
#include "fleet/fleet_report.h"
#include "report/baseline_file.h"
#include "report/render.h"

using namespace jitterd;

namespace {

Json vector_of(const std::vector<std::pair<Json, std::string>>& samples) {
  Json result = Json::array();
  for (const auto& [metric, value] : samples) result.push_back(Json{{"metric", metric}, {"value", {1e9, value}}});
  return Json{{"resultType", "vector"}, {"result", result}};
}

Json fingerprint(const std::string& instance, const std::string& kernel, const std::string& model) {
  return Json{{"instance", instance},
              {"job", "jitterd"},
              {"kernel", kernel},
              {"cpu_model", model},
              {"bios_version", "1.0"}};
}

FleetSelection selection(const std::string& by) {
  FleetSelection s;
  s.range = {1e9 - 3600, 1e9, "R"};
  s.by = by;
  return s;
}

}  // namespace

TEST_CASE("fleet_hosts: one host per instance; a host that changed cohort is left out and listed") {
  const Json answer = vector_of({{fingerprint("a:9", "6.1", "X"), "240"},
                                 {fingerprint("b:9", "6.1", "X"), "200"},
                                 {fingerprint("b:9", "6.6", "X"), "40"},
                                 {fingerprint("c:9", "6.6", "X"), "240"}});
  const FleetHistory h = fleet_hosts(answer, selection("kernel"), "test");
  REQUIRE(h.hosts.size() == 2);
  CHECK(h.hosts[0].instance == "a:9");
  CHECK(h.hosts[0].fingerprint.at("kernel") == "6.1");
  CHECK(h.hosts[0].fingerprint.count("instance") == 0);
  CHECK(h.hosts[1].instance == "c:9");
  REQUIRE(h.left_out.size() == 1);
  CHECK_THAT(h.left_out[0], Catch::Contains("b:9") && Catch::Contains("kernel"));
  CHECK(h.most_scrapes == 240);
  // By bios_version, b's kernel change is no cohort change: kept, with the label set scraped most.
  const FleetHistory by_bios = fleet_hosts(answer, selection("bios_version"), "test");
  CHECK(by_bios.hosts.size() == 3);
  CHECK(by_bios.hosts[1].fingerprint.at("kernel") == "6.1");
  CHECK(by_bios.notes.size() == 1);
}

TEST_CASE("fleet_hosts: an unknown --by or --class field, no host, a wrong shape") {
  const Json answer = vector_of({{fingerprint("a:9", "6.1", "X"), "10"}});
  try {
    fleet_hosts(answer, selection("kernal"), "test");
    FAIL("no error");
  } catch (const BaselineError& e) {
    CHECK(e.exit_code() == 64);
    CHECK_THAT(e.what(), Catch::Contains("\"kernal\"") && Catch::Contains("--by") && Catch::Contains("kernel"));
  }
  FleetSelection with_class = selection("kernel");
  with_class.class_fields = {"rack"};
  CHECK_THROWS_WITH(fleet_hosts(answer, with_class, "test"), Catch::Contains("--class"));
  try {
    fleet_hosts(vector_of({}), selection("kernel"), "test");
    FAIL("no error");
  } catch (const BaselineError& e) {
    CHECK(e.exit_code() == 65);
    CHECK_THAT(e.what(), Catch::Contains("no jitterd_fingerprint_info"));
  }
  CHECK_THROWS_WITH(
      fleet_hosts(Json{{"resultType", "matrix"}, {"result", Json::array()}}, selection("kernel"), "t"),
      Catch::Contains("no vector result"));
  CHECK_THROWS_WITH(fleet_hosts(vector_of({{fingerprint("a:9", "6.1", "X"), "1e999"}}), selection("kernel"), "t"),
                    Catch::Contains("not a finite number"));
}

TEST_CASE("instance_matcher: regular-expression and PromQL escaping") {
  CHECK(instance_matcher({"10.0.0.1:9", "a\"b"}) == R"(instance=~"10\\.0\\.0\\.1:9|a\"b")");
}

TEST_CASE("add_batch_figures: quantiles from the exported buckets, rates per sampled second") {
  FleetHistory h = fleet_hosts(vector_of({{fingerprint("a:9", "6.1", "X"), "10"}}), selection("kernel"), "t");
  const auto bucket = [](const std::string& le, const std::string& count) {
    return std::pair<Json, std::string>{Json{{"instance", "a:9"}, {"cpu", "3"}, {"le", le}}, count};
  };
  // 10,000 gaps: 9,000 at or under 1 us, 990 more under 10 us, 8 under 25 us, 2 beyond 1 ms.
  BatchAnswers answers;
  answers.buckets = vector_of({bucket("1e-06", "9000"), bucket("1e-05", "9990"), bucket("2.5e-05", "9998"),
                               bucket("0.001", "9998"), bucket("+Inf", "10000")});
  const Json cpu3{{"instance", "a:9"}, {"cpu", "3"}};
  answers.sampled = vector_of({{cpu3, "100"}});
  answers.interruptions = vector_of({{cpu3, "50"}});
  answers.stolen = vector_of({{cpu3, "2"}});
  add_batch_figures(h, answers, "t");
  REQUIRE(h.hosts[0].cpus.count(3) == 1);
  const std::vector<double>& v = h.hosts[0].cpus.at(3);
  REQUIRE(h.figure_names.size() == v.size());
  CHECK(h.figure_names[0] == "p50_ns");
  CHECK(v[0] == 1000);     // p50
  CHECK(v[1] == 10000);    // p99: rank 9,900
  CHECK(v[2] == 10000);    // p99.9: rank 9,990, the last of the 10 us bucket
  CHECK(v[3] == 1000000);  // p99.99: rank 9,999, in +Inf: the largest finite bound
  CHECK(v[4] == Approx(0.5));
  CHECK(v[5] == Approx(0.02));
  CHECK(h.figure_names[6] == "gaps_over_10us_per_s");
  CHECK(v[6] == Approx(10.0 / 100));
  CHECK(h.figure_names.back() == "gaps_over_1ms_per_s");
  CHECK(h.figure_names[7] == "gaps_over_25us_per_s");  // 20 us: the first exported bound above it
  CHECK(v.back() == Approx(2.0 / 100));
  // The host's figure rows: the worst and the median CPU of each figure.
  const std::vector<double> host = host_values(h.hosts[0], h.figure_names.size());
  CHECK(host.size() == 2 * v.size());
  CHECK(host[2] == 10000);  // p99 (worst CPU)
}

namespace {

// A fleet of `n` hosts per kernel, one CPU each, every figure `level` (times 1 + i/100).
FleetHistory small_fleet(int n, const std::vector<std::string>& kernels) {
  FleetHistory h;
  h.figure_names = {"p99_ns", "interruptions_per_s"};
  for (const std::string& kernel : kernels)
    for (int i = 0; i < n; ++i)
      h.hosts.push_back({"<b>" + kernel + "-" + std::to_string(i),
                         {{"kernel", kernel}, {"cpu_model", "X"}},
                         {{1, {10000.0 * (1 + i / 100.0), 50.0 * (1 + i / 100.0)}}}});
  return h;
}

}  // namespace

TEST_CASE("analyse_fleet: the reference, an unknown one, one cohort, and the page") {
  const FleetHistory two = small_fleet(6, {"a", "b"});
  FleetOptions options;
  const FleetReport r = analyse_fleet(two, selection("kernel"), options);
  CHECK(r.reference == "a");         // equal sizes: the first by value
  CHECK(r.comparisons.size() == 4);  // 2 figures x worst and median CPU, one cohort
  CHECK(r.tests == 4);
  CHECK(r.aa.splits == 100);
  options.reference = "c";
  try {
    analyse_fleet(two, selection("kernel"), options);
    FAIL("no error");
  } catch (const BaselineError& e) {
    CHECK(e.exit_code() == 64);
    CHECK_THAT(e.what(), Catch::Contains("\"a\", \"b\""));
  }
  const FleetReport one = analyse_fleet(small_fleet(6, {"a"}), selection("kernel"), {});
  CHECK(one.comparisons.empty());
  CHECK_THAT(one.notes.at(0), Catch::Contains("one cohort"));
  const std::string page = fleet_html(r);
  CHECK(page.find("<b>a-0") == std::string::npos);  // host names escaped
  CHECK(page.find("&lt;b&gt;a-0") != std::string::npos);
  std::size_t plots = 0;
  for (std::size_t at = page.find("<svg"); at != std::string::npos; at = page.find("<svg", at + 1)) ++plots;
  CHECK(plots == 4);
  CHECK_THAT(fleet_text(r), Catch::Contains("A/A: ") && Catch::Contains("reference kernel=\"a\""));
  CHECK(fleet_csv(r).rfind("kernel,hosts,reference\n", 0) == 0);
}

TEST_CASE("analyse_fleet with few hosts says what it could not judge and why, never a clean bill") {
  const FleetReport r = analyse_fleet(small_fleet(2, {"a", "b"}), selection("kernel"), {});
  CHECK(r.tests == 0);
  CHECK(r.aa.judged == 0);
  const std::string text = fleet_text(r);
  CHECK(text.find("0.0% on this fleet") == std::string::npos);
  CHECK(text.find("Drifted hosts (0)") == std::string::npos);
  CHECK_THAT(text, Catch::Contains("A/A: not measured"));
  CHECK_THAT(text, Catch::Contains("none could be tested, too few hosts"));
  CHECK_THAT(text, Catch::Contains("Drifted hosts: not judged: no class has the 5 hosts"));
  CHECK_THAT(text, Catch::Contains("kernel=\"b\": 4 of 4 figure rows not tested: 2 of its 2 hosts and 2 of the "
                                   "reference's share a CPU model"));
  CHECK_THAT(text, Catch::Contains("it takes at least 10 hosts of one CPU model"));
  CHECK_THAT(text, Catch::Contains("drift: class cpu_model=X,kernel=a: 2 hosts, fewer than the 5"));
  const Json json = Json::parse(fleet_json(r));
  CHECK(json["aa"]["judged"] == 0);
  CHECK(json["not_judged"].size() == 4 + 2);  // and no watched CPU, no loop (fleet_application_test)
  CHECK_THAT(fleet_html(r), Catch::Contains("<h2>Not judged</h2>"));
  // Enough hosts: the rate is measured and nothing is listed as not judged but the application's
  // side, which these hosts do not export.
  const FleetReport enough = analyse_fleet(small_fleet(12, {"a", "b"}), selection("kernel"), {});
  CHECK(enough.aa.judged == enough.aa.splits);
  REQUIRE(enough.not_judged.size() == 2);
  CHECK_THAT(enough.not_judged[0], Catch::Contains("no watched rows"));
  CHECK_THAT(enough.not_judged[1], Catch::Contains("no loop rows"));
  CHECK_THAT(fleet_text(enough), Catch::Contains("Drifted hosts (0) in the 2 of 2 classes judged"));
}

TEST_CASE("fleet's text, CSV and HTML: hostile host names and cohort values stay inert") {
  FleetHistory h = small_fleet(6, {"=cmd|' /C calc'!A0", "b\x1b[2J\xe2\x80\xae"});
  std::sort(h.hosts.begin(), h.hosts.end(),
            [](const FleetHost& a, const FleetHost& b) { return a.instance < b.instance; });
  const FleetReport r = analyse_fleet(h, selection("kernel"), {});
  const std::string text = fleet_text(r), csv = fleet_csv(r), page = fleet_html(r);
  for (const std::string* out : {&text, &csv, &page}) {
    CHECK(out->find('\x1b') == std::string::npos);
    CHECK(out->find("\xe2\x80\xae") == std::string::npos);
  }
  CHECK(csv.find("\n=cmd") == std::string::npos);
  CHECK_THAT(csv, Catch::Contains("\n'=cmd|' /C calc'!A0,"));
  CHECK_THAT(text, Catch::Contains("b\\x1b[2J\\u202e"));
}
