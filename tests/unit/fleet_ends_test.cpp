// SPDX-License-Identifier: Apache-2.0
// fleet's read at the range's two ends without a server (fleet/fleet_ends.h): the increases of the
// hosts whose ends can be trusted, exactly; and each reason to read a host in full instead (a
// restart, a counter that fell, a series gone, no start time, a clock ahead of Prometheus's,
// scrapes that stop or begin inside the range), with a host started inside the range counted from
// zero.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "fleet/fleet_ends.h"
#include "report/render.h"

using namespace jitterd;

namespace {

constexpr double kEndsStart = 1'800'000'000, kEndsEnd = kEndsStart + 3600;
const TimeRange kEndsRange{kEndsStart, kEndsEnd, "R"};

std::string ends_number(double v) { return fmt::format("{:.17g}", v); }

Json ends_vector(const std::vector<std::pair<Json, std::string>>& samples) {
  Json result = Json::array();
  for (const auto& [metric, value] : samples)
    result.push_back(Json{{"metric", metric}, {"value", {kEndsEnd, value}}});
  return Json{{"resultType", "vector"}, {"result", result}};
}

// One host's counters on cpu 1 at one end: `gaps` gaps (half at or under 1 us), `seconds` sampled,
// a tenth of that interruptions and stolen seconds.
void ends_add_host(BatchAnswers& a, const std::string& instance, double gaps, double seconds) {
  const auto bucket = [&](const std::string& le, double count) {
    a.buckets["result"].push_back(Json{{"metric", {{"instance", instance}, {"cpu", "1"}, {"le", le}}},
                                       {"value", {kEndsEnd, ends_number(count)}}});
  };
  bucket("1e-06", gaps / 2);
  bucket("+Inf", gaps);
  for (Json* j : {&a.sampled, &a.interruptions, &a.stolen})
    (*j)["result"].push_back(Json{{"metric", {{"instance", instance}, {"cpu", "1"}}},
                                  {"value", {kEndsEnd, ends_number(j == &a.sampled ? seconds : seconds / 10)}}});
}

BatchAnswers ends_empty_batch() { return {ends_vector({}), ends_vector({}), ends_vector({}), ends_vector({})}; }

Json ends_started(const std::vector<std::pair<std::string, double>>& hosts) {
  std::vector<std::pair<Json, std::string>> samples;
  for (const auto& [instance, t] : hosts) samples.push_back({Json{{"instance", instance}}, ends_number(t)});
  return ends_vector(samples);
}

}  // namespace

TEST_CASE("ends_doubt: each reason to read a host in full, and the hosts whose ends hold") {
  HostEnds h;
  h.at_start = h.at_end = true;
  h.started_start = h.started_end = {kEndsStart - 86400};
  CHECK(ends_doubt(h, kEndsRange, 45) == "");
  HostEnds restarted = h;
  restarted.started_end = {kEndsStart + 600};
  CHECK_THAT(ends_doubt(restarted, kEndsRange, 45), Catch::Contains("restarted inside the range"));
  HostEnds no_end = h;
  no_end.at_end = false;
  CHECK_THAT(ends_doubt(no_end, kEndsRange, 45), Catch::Contains("within 45 s before END"));
  HostEnds no_start_time = h;
  no_start_time.started_end.clear();
  CHECK_THAT(ends_doubt(no_start_time, kEndsRange, 45),
             Catch::Contains("no jitterd_sampler_start_time_seconds at END"));
  HostEnds no_start_time_at_start = h;
  no_start_time_at_start.started_start.clear();
  CHECK_THAT(ends_doubt(no_start_time_at_start, kEndsRange, 45), Catch::Contains("at START"));
  HostEnds ahead = h;
  ahead.started_start = ahead.started_end = {kEndsEnd + 120};
  CHECK_THAT(ends_doubt(ahead, kEndsRange, 45),
             Catch::Contains("clock is ahead") && Catch::Contains("120 s later"));
  HostEnds ahead_at_start = h;  // it says it started after START, though Prometheus holds a scrape there
  ahead_at_start.started_start = ahead_at_start.started_end = {kEndsStart + 300};
  CHECK_THAT(ends_doubt(ahead_at_start, kEndsRange, 45),
             Catch::Contains("clock is ahead") && Catch::Contains("START"));
  HostEnds two = h;
  two.started_end = {kEndsStart - 86400, kEndsStart - 3600};
  CHECK_THAT(ends_doubt(two, kEndsRange, 45), Catch::Contains("disagree"));
  HostEnds late = h;  // started inside the range: no sample at START, counted from zero
  late.at_start = false;
  late.started_start.clear();
  late.started_end = {kEndsStart + 60};
  CHECK(ends_doubt(late, kEndsRange, 45) == "");
  HostEnds began = late;  // scrapes began inside the range, the samplers long before: not from zero
  began.started_end = {kEndsStart - 60};
  CHECK_THAT(ends_doubt(began, kEndsRange, 45), Catch::Contains("scrapes began inside the range"));
}

TEST_CASE("ends_increases: exact increases between the ends; restarts, falls and gone series read in full") {
  EndsAnswers a{ends_empty_batch(), ends_empty_batch(), ends_started({}), ends_started({})};
  const double old = kEndsStart - 86400;
  ends_add_host(a.start, "steady:9", 1000, 100);
  ends_add_host(a.end, "steady:9", 7000, 700);
  ends_add_host(a.start, "restarted:9", 1000, 100);
  ends_add_host(a.end, "restarted:9", 5000, 500);  // grew past START after a reset: only the start time tells
  ends_add_host(a.start, "fell:9", 1000, 100);
  ends_add_host(a.end, "fell:9", 900, 700);
  ends_add_host(a.end, "late:9", 3000, 300);
  ends_add_host(a.start, "gone:9", 1000, 100);
  a.started_at_start = ends_started({{"steady:9", old}, {"restarted:9", old}, {"fell:9", old}, {"gone:9", old}});
  a.started_at_end = ends_started({{"steady:9", old},
                                   {"restarted:9", kEndsStart + 900},
                                   {"fell:9", old},
                                   {"late:9", kEndsStart + 30},
                                   {"gone:9", old}});
  const std::vector<std::string> hosts{"fell:9", "gone:9", "late:9", "restarted:9", "steady:9", "quiet:9"};
  std::vector<std::string> loop_names;
  LoopNames loops(loop_names);
  const EndsResult r = ends_increases(hosts, a, kEndsRange, 45, "t", loops);
  CHECK(r.at_ends == 2);
  CHECK(r.started_inside == 1);
  REQUIRE(r.in_full.size() == 4);
  CHECK(r.in_full[0].instance == "fell:9");
  CHECK_THAT(r.in_full[0].why, Catch::Contains("fell between the ends") && Catch::Contains("500 to 450"));
  CHECK(r.in_full[1].instance == "gone:9");
  CHECK_THAT(r.in_full[1].why, Catch::Contains("before END"));
  CHECK(r.in_full[2].instance == "quiet:9");
  CHECK(r.in_full[3].instance == "restarted:9");
  CHECK_THAT(r.in_full[3].why, Catch::Contains("restarted"));
  const CpuKey steady{"steady:9", 1}, late{"late:9", 1};
  CHECK(r.increases.buckets.at(steady).at(1000) == 3000);
  CHECK(r.increases.buckets.at(steady).rbegin()->second == 6000);
  CHECK(r.increases.sampled.at(steady) == 600);
  CHECK(r.increases.interruptions.at(steady) == Approx(60));
  CHECK(r.increases.sampled.at(late) == 300);  // from zero
  CHECK(r.increases.buckets.count({"restarted:9", 1}) == 0);
  CHECK(r.increases.buckets.count({"fell:9", 1}) == 0);
}
