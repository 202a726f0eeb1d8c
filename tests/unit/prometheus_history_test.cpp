// SPDX-License-Identifier: Apache-2.0
// compare --prometheus without a server: time ranges, the API envelope, and a baseline rebuilt
// from a range's raw samples (increments between scrapes, a reset, sub-windows, quantiles at the
// exported bounds, the fingerprint from the _info series), compared by the one compare.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "compare/comparison.h"
#include "compare/prometheus_history.h"

using namespace jitterd;

namespace {

constexpr double kStart = 1'800'000'000;

// A matrix item: `values` at kStart + 1, + 2, ... (one scrape a second).
Json series(const std::string& name, Json labels, const std::vector<double>& values) {
  labels["__name__"] = name;
  labels["instance"] = "box:9978";
  Json points = Json::array();
  for (std::size_t i = 0; i < values.size(); ++i)
    points.push_back(Json::array({kStart + 1 + static_cast<double>(i), fmt::format("{}", values[i])}));
  return {{"metric", labels}, {"values", points}};
}

// CPU `cpu` over 10 scrapes: 1000 gaps a second, `slow` of them per second at or under 50 us
// (above 25 us), the rest at or under 100 ns.
Json range_matrix(int cpu, double slow_per_s, const std::string& kernel, bool reset_at_5 = false) {
  Json matrix = Json::array();
  const std::string c = std::to_string(cpu);
  std::vector<double> fast, all, sampled, interruptions, stolen, slow;
  for (int i = 0; i < 10; ++i) {
    const int n = reset_at_5 && i >= 5 ? i - 5 : i + 10;  // a restart: counters from 0 again
    fast.push_back(n * (1000 - slow_per_s));
    slow.push_back(n * slow_per_s);
    all.push_back(n * 1000.0);
    sampled.push_back(n * 1.0);
    interruptions.push_back(n * slow_per_s);
    stolen.push_back(n * slow_per_s * 40e-6);
  }
  for (const char* le : {"1e-08", "1e-07", "1e-05", "2.5e-05", "5e-05", "0.0001", "0.001", "0.1"}) {
    const double bound = std::stod(le);
    std::vector<double> cumulative;
    for (std::size_t i = 0; i < fast.size(); ++i)
      cumulative.push_back(bound < 1e-7 ? 0 : bound < 5e-5 ? fast[i] : all[i]);
    matrix.push_back(series("jitterd_sampler_gap_seconds_bucket", {{"cpu", c}, {"le", le}}, cumulative));
  }
  matrix.push_back(series("jitterd_sampler_gap_seconds_bucket", {{"cpu", c}, {"le", "+Inf"}}, all));
  matrix.push_back(series("jitterd_sampler_sampled_seconds_total", {{"cpu", c}}, sampled));
  matrix.push_back(series("jitterd_sampler_interruptions_total", {{"cpu", c}}, interruptions));
  matrix.push_back(series("jitterd_sampler_stolen_seconds_total", {{"cpu", c}}, stolen));
  matrix.push_back(series("jitterd_sampler_interruption_threshold_seconds", {{"cpu", c}}, {1e-5, 1e-5}));
  matrix.push_back(series("jitterd_sampler_loop_floor_seconds", {{"cpu", c}}, {2e-8}));
  matrix.push_back(series("jitterd_tick_frequency_hertz", Json::object(), {2e9}));
  matrix.push_back(series("jitterd_tick_info", {{"method", "lfence_rdtsc"}, {"frequency_source", "cpuid"}}, {1}));
  matrix.push_back(series("jitterd_fingerprint_info",
                          {{"kernel", kernel}, {"cpu_model", "Example CPU"}, {"hypervisor", "yes"}}, {1, 1}));
  matrix.push_back(
      series("jitterd_posture_cpufreq_governor_info", {{"cpu", c}, {"governor", "performance"}}, {1}));
  return matrix;
}

RangeSamples samples_of(Json matrix, const std::string& name) {
  RangeSamples s;
  s.range = {kStart, kStart + 10, name};
  s.instance = "box:9978";
  s.source = "http://prom instance box:9978 range " + name;
  s.matrix = std::move(matrix);
  return s;
}

}  // namespace

TEST_CASE("time ranges are RFC 3339 or unix seconds, START before END", "[prometheus_history]") {
  std::string error;
  const auto range = parse_time_range("2026-11-25T10:00:00Z/2026-11-25T10:10:00.5Z", &error);
  REQUIRE(range);
  CHECK(range->start == 1795600800);
  CHECK(range->end == 1795600800 + 600.5);
  const auto offset = parse_time_range("2026-11-25T11:00:00+01:00/1795600860", &error);
  REQUIRE(offset);
  CHECK(offset->start == 1795600800);
  CHECK(offset->end == 1795600860);
  CHECK_FALSE(parse_time_range("1795600860/1795600800", &error));
  CHECK_THAT(error, Catch::Contains("wrong way round"));
  CHECK_FALSE(parse_time_range("2026-11-25 10:00/2026-11-25T10:10:00Z", &error));
  CHECK_THAT(error, Catch::Contains("START \"2026-11-25 10:00\""));
  CHECK_FALSE(parse_time_range("2026-11-25T10:00:00Z", &error));
  CHECK_THAT(error, Catch::Contains("START/END"));
  CHECK_FALSE(parse_instant("2026-13-25T10:00:00Z"));
  CHECK_FALSE(parse_instant("2026-11-25T10:00:00"));  // no zone: ambiguous
}

TEST_CASE("the API envelope: data, Prometheus's error, or not Prometheus at all", "[prometheus_history]") {
  CHECK(prometheus_data(200, R"({"status":"success","data":[1]})", "u") == Json::array({1}));
  const auto code_and_message = [](long status, const std::string& body) {
    try {
      prometheus_data(status, body, "http://x (query q)");
    } catch (const BaselineError& e) {
      return std::pair<int, std::string>(e.exit_code(), e.what());
    }
    return std::pair<int, std::string>(0, "");
  };
  auto [code, message] =
      code_and_message(400, R"({"status":"error","errorType":"bad_data","error":"parse error"})");
  CHECK(code == kExitBadBaseline);
  CHECK_THAT(message, Catch::Contains("http://x (query q)") && Catch::Contains("bad_data: parse error"));
  std::tie(code, message) = code_and_message(200, "<html><body>hello</body></html>");
  CHECK(code == kExitBadBaseline);
  CHECK_THAT(message, Catch::Contains("not a Prometheus answer (not JSON)") && Catch::Contains("<html>"));
  std::tie(code, message) = code_and_message(200, R"({"hello":1})");
  CHECK(code == kExitBadBaseline);
  CHECK_THAT(message, Catch::Contains("no \"status\""));
  std::tie(code, message) = code_and_message(404, "404 page not found");
  CHECK(code == kExitPrometheusUnavailable);
  CHECK_THAT(message, Catch::Contains("HTTP status 404"));
}

TEST_CASE("a refusal for size is a QueryTooLarge in every engine's wording, read from the whole error",
          "[prometheus_history]") {
  const std::string long_query(3000, 'q');  // VictoriaMetrics echoes the query before its reason
  for (const std::string& error :
       {std::string("query processing would load too many samples into memory in query execution"),
        "error when executing query=\"" + long_query +
            "\": cannot select more than -search.maxSamplesPerQuery=100000 samples; possible solutions: ...",
        "error when executing query=\"" + long_query +
            "\": error when searching tsids: the number of matching timeseries exceeds 5000; either narrow "
            "down the search"}) {
    const std::string body = Json{{"status", "error"}, {"errorType", "422"}, {"error", error}}.dump();
    try {
      prometheus_data(422, body, "http://x (query q)");
      FAIL("no refusal");
    } catch (const QueryTooLarge& e) {
      CHECK(e.exit_code() == kExitBadBaseline);
      CHECK_THAT(std::string(e.what()), Catch::Contains("http://x (query q)") && Catch::Contains("too big") &&
                                            !Catch::Contains(long_query.substr(0, 100)));
    }
  }
  CHECK_THROWS_AS(prometheus_data(400, R"({"status":"error","errorType":"bad_data","error":"parse error"})", "u"),
                  BaselineError);
  try {
    prometheus_data(400, R"({"status":"error","errorType":"bad_data","error":"parse error"})", "u");
  } catch (const QueryTooLarge&) {
    FAIL("a parse error is no refusal for size");
  } catch (const BaselineError&) {
  }
}

TEST_CASE("a range's samples become a baseline at the exported buckets", "[prometheus_history]") {
  const HistoryBaseline h = baseline_from_samples(samples_of(range_matrix(1, 10, "6.1.0-9"), "before"), 2);
  const Baseline& b = h.baseline;
  REQUIRE(b.cpus.size() == 1);
  const BaselineCpu& c = b.cpus[0];
  CHECK(c.cpu == 1);
  CHECK(c.samples == 9000);  // 9 increments of 1000, the first scrape being the start
  CHECK(c.sampled_seconds == Approx(9));
  CHECK(c.interruptions == 90);
  CHECK(c.stolen_seconds == Approx(90 * 40e-6));
  CHECK(c.histogram.total() == c.samples);
  CHECK(c.max_ns == 50'000);
  CHECK(c.threshold_ns == Approx(10'000));
  CHECK(b.histogram_bounds_ns.front() == 10);
  CHECK(b.tail_thresholds_ns == std::vector<double>{10'000, 25'000, 50'000, 100'000, 1'000'000});
  CHECK(baseline_quantile_ns(b, c, 0.5) == 100);
  CHECK(baseline_quantile_ns(b, c, 0.999) == 50'000);
  // Scrapes at +1..+10 s, 2 s sub-windows: the increments end at +2..+10, in windows 1..4 (+10 in 4).
  REQUIRE(c.sub_windows.size() == 4);
  CHECK(c.sub_windows[0].samples == 2000);
  CHECK(c.sub_windows[0].p50_ns == 100);
  CHECK(c.sub_windows[0].p999_ns == 50'000);
  CHECK(c.sub_windows[0].over_threshold == std::vector<std::uint64_t>{20, 20, 0, 0, 0});
  CHECK(b.counter_hertz == 2e9);
  CHECK(b.tick_method == "lfence_rdtsc");
  CHECK(std::find(b.fingerprint.begin(), b.fingerprint.end(),
                  std::pair<std::string, std::string>("kernel", "6.1.0-9")) != b.fingerprint.end());
  CHECK(std::find(b.fingerprint.begin(), b.fingerprint.end(),
                  std::pair<std::string, std::string>("governor", "performance")) != b.fingerprint.end());
  // The hypervisor label: compare applies the guest allowances to a range from a VM too.
  CHECK(jitterd::ran_under_hypervisor(b));
  CHECK(h.notes.empty());
}

namespace {

// `matrix` with its classic gap buckets replaced by what a Prometheus 3 server converting them
// (convert_classic_histograms_to_nhcb) answers: one native histogram series per CPU, each sample's
// buckets [rule, lower, upper, count], only the non-empty ones.
Json as_native_histograms(const Json& matrix) {
  Json out = Json::array();
  std::map<std::string, std::map<double, std::vector<double>>> cumulative;  // cpu -> le -> values
  std::vector<double> times;
  for (const Json& item : matrix) {
    if (item["metric"]["__name__"] != "jitterd_sampler_gap_seconds_bucket") {
      out.push_back(item);
      continue;
    }
    auto& values = cumulative[item["metric"]["cpu"].get<std::string>()][std::stod(
        item["metric"]["le"].get<std::string>() == "+Inf" ? "inf" : item["metric"]["le"].get<std::string>())];
    times.clear();
    for (const Json& p : item["values"]) {
      times.push_back(p[0].get<double>());
      values.push_back(std::stod(p[1].get<std::string>()));
    }
  }
  for (const auto& [cpu, by_le] : cumulative) {
    Json histograms = Json::array();
    for (std::size_t i = 0; i < times.size(); ++i) {
      Json buckets = Json::array();
      double lower = 0, below = 0;
      for (const auto& [le, values] : by_le) {
        if (values[i] > below)
          buckets.push_back(
              Json::array({0, fmt::format("{}", lower), std::isinf(le) ? "+Inf" : fmt::format("{}", le),
                           fmt::format("{}", values[i] - below)}));
        lower = le;
        below = values[i];
      }
      histograms.push_back(
          Json::array({times[i], {{"count", fmt::format("{}", below)}, {"sum", "0"}, {"buckets", buckets}}}));
    }
    out.push_back(
        {{"metric", {{"__name__", "jitterd_sampler_gap_seconds"}, {"instance", "box:9978"}, {"cpu", cpu}}},
         {"histograms", histograms}});
  }
  return out;
}

}  // namespace

TEST_CASE("native histograms with custom buckets read as the classic buckets they came from",
          "[prometheus_history]") {
  const HistoryBaseline classic = baseline_from_samples(samples_of(range_matrix(1, 10, "k"), "before"), 2);
  const HistoryBaseline native =
      baseline_from_samples(samples_of(as_native_histograms(range_matrix(1, 10, "k")), "before"), 2);
  REQUIRE(native.baseline.cpus.size() == 1);
  const BaselineCpu &a = classic.baseline.cpus[0], &b = native.baseline.cpus[0];
  CHECK(b.samples == a.samples);
  CHECK(b.histogram.counts == a.histogram.counts);
  CHECK(b.max_ns == a.max_ns);
  REQUIRE(b.sub_windows.size() == a.sub_windows.size());
  for (std::size_t i = 0; i < a.sub_windows.size(); ++i) {
    CHECK(b.sub_windows[i].samples == a.sub_windows[i].samples);
    CHECK(b.sub_windows[i].p999_ns == a.sub_windows[i].p999_ns);
    CHECK(b.sub_windows[i].over_threshold == a.sub_windows[i].over_threshold);
  }
  // Both kept by the server (always_scrape_classic_histograms): each gap counted once.
  Json both = range_matrix(1, 10, "k");
  for (const Json& item : as_native_histograms(range_matrix(1, 10, "k")))
    if (item.contains("histograms")) both.push_back(item);
  const HistoryBaseline twice = baseline_from_samples(samples_of(both, "before"), 2);
  CHECK(twice.baseline.cpus[0].samples == a.samples);
  CHECK(twice.baseline.cpus[0].histogram.counts == a.histogram.counts);
  // Hostile shapes are refused naming the source: a bucket that is not four fields, a count
  // that is not a number.
  for (const Json& bucket : {Json::array({0, "0", "1e-05"}), Json::array({0, "0", "1e-05", "many"}),
                             Json::array({0, "0", "NaN", "1"})}) {
    Json matrix = Json::array({{{"metric", {{"__name__", "jitterd_sampler_gap_seconds"}, {"cpu", "1"}}},
                                {"histograms", Json::array({Json::array({kStart, {{"buckets", {bucket}}}})})}}});
    CHECK_THROWS_WITH(baseline_from_samples(samples_of(matrix, "before"), 2),
                      Catch::Contains("http://prom instance box:9978") && Catch::Contains("native histogram"));
  }
}

TEST_CASE("a reset inside a range counts from 0, as increase() does, and says so", "[prometheus_history]") {
  const HistoryBaseline h = baseline_from_samples(samples_of(range_matrix(1, 10, "k", true), "before"), 2);
  // 4 increments of 1000 before the restart, the restart's own value 0, then 4 more.
  CHECK(h.baseline.cpus[0].samples == 8000);
  REQUIRE(h.notes.size() == 1);
  CHECK_THAT(h.notes[0], Catch::Contains("counters reset at") && Catch::Contains("increase()"));
}

TEST_CASE("two ranges compare as two files: the fingerprint diff, CPU sets, verdicts", "[prometheus_history]") {
  Json before_matrix = range_matrix(1, 10, "6.1.0-9");
  for (const Json& item : range_matrix(2, 10, "6.1.0-9"))
    if (item["metric"].contains("cpu")) before_matrix.push_back(item);
  const HistoryBaseline before = baseline_from_samples(samples_of(before_matrix, "before"), 1);
  const HistoryBaseline after = baseline_from_samples(samples_of(range_matrix(1, 300, "6.1.0-10"), "after"), 1);
  const Comparison c = compare_baselines(before.baseline, "before", after.baseline, "after");
  REQUIRE_FALSE(c.changed.empty());
  CHECK(c.changed[0] == std::vector<std::string>{"fingerprint.kernel", "6.1.0-9", "6.1.0-10"});
  CHECK(std::find(c.notes.begin(), c.notes.end(), "cpu 2: left out, sampled only in before") != c.notes.end());
  const auto figure = [&](const std::string& name) {
    return *std::find_if(c.figures.begin(), c.figures.end(),
                         [&](const FigureComparison& f) { return f.figure == name; });
  };
  CHECK(figure("gaps_over_25us_per_s").before == Approx(10));
  CHECK(figure("gaps_over_25us_per_s").after == Approx(300));
  CHECK(figure("gaps_over_25us_per_s").verdict == "worse");
  CHECK(figure("p99_9_ns").after == 50'000);
}

TEST_CASE("ranges without a sampled CPU, or not a matrix, are refused naming the source", "[prometheus_history]") {
  Json matrix = Json::array({series("jitterd_tick_frequency_hertz", Json::object(), {2e9})});
  CHECK_THROWS_WITH(baseline_from_samples(samples_of(matrix, "R"), 1),
                    Catch::Contains("range R: empty range") && Catch::Contains("two scrapes"));
  CHECK_THROWS_WITH(baseline_from_samples(samples_of(Json::object(), "R"), 1),
                    Catch::Contains("not a Prometheus range answer"));
  CHECK_THROWS_WITH(baseline_from_samples(samples_of(Json::array(), "R"), 1),
                    Catch::Contains("jitterd_tick_frequency_hertz"));
}

TEST_CASE("the selector names the instance, escaped, and the range in milliseconds", "[prometheus_history]") {
  const std::string s = history_selector("a\"b:1", 20.5);
  CHECK_THAT(s, Catch::Contains("instance=\"a\\\"b:1\"}[20500ms]"));
  CHECK_THAT(s, Catch::Contains("jitterd_sampler_gap_seconds_bucket|"));
}

TEST_CASE("a Prometheus baseline is not written as a file", "[prometheus_history]") {
  Baseline b;
  b.histogram_bounds_ns = {10, 100};
  CHECK_THROWS_AS(write_baseline(b, "/tmp/jitterd_never_written.json"), BaselineError);
}

TEST_CASE("a bearer token file that cannot be read or is empty is refused, naming it", "[prometheus_history]") {
  const auto code_of = [](const std::string& file) {
    try {
      PrometheusOptions options;
      options.url = "http://127.0.0.1:9";
      options.bearer_token_file = file;
      PrometheusClient client(options);
    } catch (const BaselineError& e) {
      CHECK_THAT(e.what(), Catch::Contains(file));
      return e.exit_code();
    }
    return 0;
  };
  CHECK(code_of("/nonexistent/jitterd-token") == kExitUnreadableBaseline);
  CHECK(code_of("/dev/null") == kExitBadBaseline);
}

TEST_CASE("an answer with a number out of range or a key given twice is refused naming the URL",
          "[prometheus_history]") {
  const auto refused = [](const std::string& body) {
    try {
      prometheus_data(200, body, "http://x (query q)");
    } catch (const BaselineError& e) {
      CHECK(e.exit_code() == kExitBadBaseline);
      return std::string(e.what());
    }
    FAIL("accepted " << body);
    return std::string();
  };
  CHECK_THAT(
      refused(
          R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1e999,"1"]]}]}})"),
      Catch::StartsWith("http://x (query q): not a Prometheus answer: data.result[0].values[0][0]: the number "
                        "1e999 is out of range"));
  CHECK_THAT(refused(R"({"status":"success","status":"error","data":[]})"),
             Catch::Contains("http://x (query q)") && Catch::Contains("the key \"status\" is given twice"));
  // A value beyond a double, as Prometheus writes values (a string), and an infinite one.
  for (const char* value : {"1e999", "+Inf"}) {
    Json matrix = range_matrix(1, 10, "6.1.0-9");
    matrix[0]["values"][3][1] = value;
    CHECK_THROWS_WITH(
        baseline_from_samples(samples_of(matrix, "R"), 2),
        Catch::Contains("range R: not a Prometheus range answer") &&
            Catch::Contains(std::string("a sample value \"") + value + "\" that is not a finite number"));
  }
  CHECK_THROWS_WITH(
      range_result(Json::object({{"resultType", "vector"}, {"result", Json::array()}}), "http://x (query q)"),
      Catch::Contains("http://x (query q): not a Prometheus answer (no matrix result)"));
}

TEST_CASE("a range of more than 8192 CPUs is refused, as a file would be", "[prometheus_history]") {
  Json matrix = range_matrix(1, 10, "6.1.0-9");
  for (int cpu = 2; cpu <= 8193; ++cpu)
    matrix.push_back(series("jitterd_sampler_sampled_seconds_total", {{"cpu", std::to_string(cpu)}}, {1, 2}));
  CHECK_THROWS_WITH(
      baseline_from_samples(samples_of(matrix, "R"), 2),
      Catch::Contains("range R: not a Prometheus range answer: sampler series of more than 8192 CPUs"));
}

TEST_CASE("loops and watched CPUs from their exported families; the watch's tail counts unknown",
          "[prometheus_history]") {
  // Loop rx0 on cpu 3: the sampler's shapes under jitterd_loop_ with a loop label. Watched cpu 3,
  // method counts: `preemptions_per_s` of its application per scrape (40x after: the 0.70 allowance
  // calls 21x).
  const auto application = [](double slow_per_s, double preemptions_per_s) {
    Json matrix = range_matrix(1, 0, "6.1.0");
    for (Json item : range_matrix(3, slow_per_s, "6.1.0")) {
      std::string name = item["metric"]["__name__"];
      if (name.rfind("jitterd_sampler_", 0) != 0) continue;
      item["metric"]["__name__"] = "jitterd_loop_" + name.substr(std::string("jitterd_sampler_").size());
      if (name == "jitterd_sampler_loop_floor_seconds") item["metric"]["__name__"] = "jitterd_loop_floor_seconds";
      item["metric"]["loop"] = "rx0";
      matrix.push_back(item);
    }
    std::vector<double> preemptions, irqs, softirqs, stolen;
    for (int i = 0; i < 10; ++i) {
      preemptions.push_back(i * preemptions_per_s);
      irqs.push_back(i * 100.0);
      softirqs.push_back(i * 10.0);
      stolen.push_back(i * preemptions_per_s * 20e-6);
    }
    matrix.push_back(series("jitterd_watch_method_info", {{"method", "counts"}, {"requested", "counts"}}, {1}));
    matrix.push_back(series("jitterd_watch_preemptions_total", {{"cpu", "3"}}, preemptions));
    matrix.push_back(series("jitterd_watch_irqs_total", {{"cpu", "3"}, {"cause", "timer"}}, irqs));
    matrix.push_back(series("jitterd_watch_softirqs_total", {{"cpu", "3"}, {"cause", "softirq_rcu"}}, softirqs));
    matrix.push_back(series("jitterd_watch_stolen_seconds_total", {{"cpu", "3"}, {"cause", "preempted"}}, stolen));
    return matrix;
  };
  const HistoryBaseline before = baseline_from_samples(samples_of(application(5, 5), "before"), 1);
  REQUIRE(before.baseline.loops.size() == 1);
  const BaselineLoop& loop = before.baseline.loops[0];
  CHECK(loop.name == "rx0");
  CHECK(loop.cpu == 3);
  CHECK(loop.sub_windows.size() == 8);  // 9 increments; the last window holds two (the range's end)
  CHECK(loop.samples == 9000);
  REQUIRE(before.baseline.watched.size() == 1);
  const BaselineWatched& w = before.baseline.watched[0];
  CHECK(w.cpu == 3);
  CHECK(w.method == "counts");
  CHECK(w.sub_windows.size() == 8);
  CHECK(w.seconds == Approx(9));
  CHECK(w.preemptions == 45);
  CHECK(w.interruptions == 990);
  CHECK(w.stolen_seconds == Approx(45 * 20e-6));
  CHECK_FALSE(w.over_threshold[0]);
  CHECK(w.tail_unknown.find("no single interruption's length") != std::string::npos);

  const HistoryBaseline after = baseline_from_samples(samples_of(application(100, 200), "after"), 1);
  const Comparison c = compare_baselines(before.baseline, "before", after.baseline, "after");
  const auto verdict = [&](const std::string& scope, const std::string& figure) {
    for (const FigureComparison& f : c.figures)
      if (f.scope == scope && f.figure == figure) return f.verdict;
    return std::string("absent");
  };
  CHECK(verdict("watched cpu 3", "preemptions_per_s") == "worse");
  CHECK(verdict("watched cpu 3", "interruptions_per_s") == "no significant change");
  CHECK(verdict("watched cpu 3", "interruptions_over_10us_per_s") == "absent");
  CHECK(verdict("loop rx0", "gaps_over_25us_per_s") == "worse");
  CHECK(verdict("cpu 1", "interruptions_per_s") == "no significant change");
}

TEST_CASE("time ranges relative to now: now-24h/now, -1h, 24h, as Prometheus and Grafana users write them",
          "[prometheus_history]") {
  std::string error;
  constexpr double now = 1800000000;
  const auto day = parse_time_range("now-24h/now", &error, now);
  REQUIRE(day);
  CHECK(day->start == now - 86400);
  CHECK(day->end == now);
  CHECK(day->text == "now-24h/now");
  const auto hour = parse_time_range("-1h", &error, now);
  REQUIRE(hour);
  CHECK(hour->start == now - 3600);
  CHECK(hour->end == now);
  CHECK(parse_time_range("24h", &error, now)->start == now - 86400);
  const auto mixed = parse_time_range("now-1h30m/now-5m", &error, now);
  REQUIRE(mixed);
  CHECK(mixed->start == now - 5400);
  CHECK(mixed->end == now - 300);
  CHECK(parse_time_range("2026-11-25T10:00:00Z/now", &error, now)->start == 1795600800);
  CHECK(parse_prometheus_duration("1y2w3d4h5m6s7ms") ==
        Approx(365 * 86400.0 + 14 * 86400 + 3 * 86400 + 4 * 3600 + 5 * 60 + 6 + 0.007));
  CHECK(parse_prometheus_duration("90s") == 90);
  CHECK(parse_prometheus_duration("500ms") == Approx(0.5));
  // Strict: order, repetition, signs, blanks, fractions, zero and unknown units are refused.
  for (const char* bad : {"", "h", "1", "1.5h", "30m1h", "1h1h", "1H", " 1h", "1h ", "0s", "1d-1h", "+1h", "1x",
                          "1000000000000s", "200y", "1mss"})
    CHECK_FALSE(parse_prometheus_duration(bad));
  for (const char* bad : {"now-", "now-1x/now", "now+1h/now", "now/now-1h", "--1h", "now-1h/", "/now", "now"}) {
    CHECK_FALSE(parse_time_range(bad, &error, now));
    CHECK_FALSE(error.empty());
  }
  CHECK_FALSE(parse_time_range("now/now-1h", &error, now));
  CHECK_THAT(error, Catch::Contains("wrong way round"));
  CHECK_FALSE(parse_time_range("yesterday", &error, now));
  CHECK_THAT(error, Catch::Contains("now-DURATION"));
}
