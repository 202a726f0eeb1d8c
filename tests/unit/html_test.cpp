// SPDX-License-Identifier: Apache-2.0
#include "report/html.h"
#include "report/heatmap.h"
#include "report/probe_section.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>

#include "measure/histogram.h"

namespace jitterd {
namespace {

// Every URL-like reference, anywhere in the page.
bool references_network(const std::string& page) {
  return page.find("http://") != std::string::npos || page.find("https://") != std::string::npos ||
         std::regex_search(page, std::regex(R"((\bsrc|\bhref)\s*=|url\(|@import)"));
}

HistogramSnapshot known_histogram() {
  HistogramSnapshot h;
  h.counts[histogram_bucket_index(5)] += 2;    // exact bucket: 5
  h.counts[histogram_bucket_index(20)] += 1;   // 20 (one tick wide)
  h.counts[histogram_bucket_index(100)] += 1;  // 100..103
  return h;
}

}  // namespace

TEST_CASE("html_escape: the five characters HTML gives meaning to become references") {
  CHECK(html_escape("<a href=\"x\">&'</a>") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  CHECK(html_escape("</script><script>alert(1)</script>") ==
        "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK(html_escape("plain text, 28.2±1.3 ns, µs") == "plain text, 28.2±1.3 ns, µs");
  CHECK(html_escape("") == "");
}

TEST_CASE("html_escape: invalid UTF-8 and control characters become U+FFFD, one per bad byte") {
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(html_escape("a\xFF"
                    "b") == "a" + fffd + "b");
  CHECK(html_escape("\xC3") == fffd);                                   // truncated two-byte sequence
  CHECK(html_escape("\xC0\xAF") == fffd + fffd);                        // overlong '/'
  CHECK(html_escape("\xE0\x80\xBC") == fffd + fffd + fffd);             // overlong '<'
  CHECK(html_escape("\xED\xA0\x80") == fffd + fffd + fffd);             // a surrogate
  CHECK(html_escape("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // above U+10FFFF
  CHECK(html_escape("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");         // U+1F600 is fine
  CHECK(html_escape(std::string("a\0b", 3)) == "a" + fffd + "b");
  CHECK(html_escape("bell\x07 esc\x1B del\x7F") == "bell" + fffd + " esc" + fffd + " del" + fffd);
  CHECK(html_escape("\xC2\x85") == fffd);  // C1 control NEL
  CHECK(html_escape("tab\tnewline\n") == "tab\tnewline\n");
}

TEST_CASE("exceedance_points: one exact point per non-empty bucket") {
  const auto points = exceedance_points(known_histogram(), 0.5);
  REQUIRE(points.size() == 3);
  CHECK(points[0].first == Approx(2.5));  // 5 ticks: the 2 gaps of 5 are not longer, 2 of 4 are
  CHECK(points[0].second == Approx(0.5));
  CHECK(points[1].first == Approx(10.0));  // 20 ticks
  CHECK(points[1].second == Approx(0.25));
  CHECK(points[2].first == Approx(51.5));  // the bucket 100..103 ends at 103 ticks
  CHECK(points[2].second == 0);
  CHECK(exceedance_points(HistogramSnapshot{}, 1).empty());
}

TEST_CASE("html_page: a complete document that fetches nothing and runs nothing") {
  const std::string page = html_page("t <1>", "<p>body</p>", {});
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("<meta charset=\"utf-8\">") != std::string::npos);
  CHECK(page.find("name=\"viewport\"") != std::string::npos);
  CHECK(page.find("content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"") !=
        std::string::npos);
  CHECK(page.find("<title>t &lt;1&gt;</title>") != std::string::npos);
  CHECK(page.find("@media print") != std::string::npos);
  CHECK(page.find("http-equiv=\"refresh\"") == std::string::npos);
  CHECK(html_page("t", "", {5}).find("<meta http-equiv=\"refresh\" content=\"5\">") != std::string::npos);
}

TEST_CASE("a page of every part has no script and no reference to the network") {
  ProbeTable table{"figures <caption>", {"figure", "before", "verdict"}, {}};
  table.rows.push_back({"p99_ns", Cell(61.25, 1), "worse"});
  table.rows.push_back({"p50_ns", Cell(30.0, 1), "no significant change"});
  table.rows.push_back({"max_ns", 12, "better"});
  const std::vector<HeatmapCell> cells{{0, 1, 28.2, "shared_l3"}, {0, 2, 40.5, "cross_package"}};
  const std::string body = table_html(table) +
                           exceedance_plot_svg({{"before", exceedance_points(known_histogram(), 1)},
                                                {"after </svg><script>", exceedance_points(known_histogram(), 2)}},
                                               10, "cpu 1") +
                           heatmap_svg(cells, "c2c", {}) + heatmap_svg(cells, "difference", {"ns", true});
  const std::string page = html_page("all", body);
  CHECK(page.find("<script") == std::string::npos);
  CHECK_FALSE(references_network(page));
  CHECK(page.find("&lt;/svg&gt;&lt;script&gt;") != std::string::npos);
}

TEST_CASE("table_html: numbers right-aligned, a cell's own class kept, text escaped") {
  const auto classed = [](std::string text, std::string html_class) {
    Cell cell(std::move(text));
    cell.html_class = std::move(html_class);
    return cell;
  };
  ProbeTable table{"t", {"figure", "before", "verdict"}, {}};
  table.rows.push_back({"a<b", Cell(61.25, 1), classed("worse", "worse")});
  table.rows.push_back({"c", Cell(), classed("better", "better")});
  table.rows.push_back({"d", 7, classed("no significant change", "same")});
  table.rows.push_back({"e", 8, classed("not tested (a reason longer than 20)", "")});
  const std::string html = table_html(table);
  CHECK(html.find("<caption>t</caption>") != std::string::npos);
  CHECK(html.find("<th class=\"num\">before</th>") != std::string::npos);
  CHECK(html.find("<td>a&lt;b</td><td class=\"num\">61.2</td><td class=\"worse\">worse</td>") !=
        std::string::npos);
  CHECK(html.find("<td>c</td><td>-</td><td class=\"better\">better</td>") != std::string::npos);
  CHECK(html.find("<td class=\"same\">no significant change</td>") != std::string::npos);
  CHECK(html.find("<td>not tested (a reason longer than 20)</td>") != std::string::npos);
  CHECK(html.find("table-wrap") != std::string::npos);
  // Without a class of its own, long text wraps: a "verdict" column means nothing to report/.
  table.rows.push_back({"f", 9, "not tested (a reason longer than 20)"});
  CHECK(table_html(table).find("<td class=\"wrap\">not tested (a reason longer than 20)</td>") !=
        std::string::npos);
}

TEST_CASE("exceedance_plot_svg: scalable, decades labelled, threshold marked, series told apart by dash") {
  const std::string svg = exceedance_plot_svg(
      {{"before", exceedance_points(known_histogram(), 1)}, {"after", exceedance_points(known_histogram(), 100)}},
      20'000, "cpu 1");
  CHECK(svg.find("viewBox=") != std::string::npos);
  CHECK(svg.find("width=\"100%\"") == std::string::npos);  // CSS sizes it
  CHECK(svg.find(">1 µs<") != std::string::npos);
  CHECK(svg.find(">10 µs<") != std::string::npos);
  CHECK(svg.find(">10⁻¹<") != std::string::npos);
  CHECK(svg.find("threshold 20 µs") != std::string::npos);
  CHECK(svg.find(">before</text>") != std::string::npos);
  CHECK(svg.find(">after</text>") != std::string::npos);
  // Two polylines, the second dashed; the y = 0 points are left out (3 points, 2 on the plot).
  const auto first = svg.find("<polyline");
  const auto second = svg.find("<polyline", first + 1);
  REQUIRE(second != std::string::npos);
  CHECK(svg.substr(first, second - first).find("stroke-dasharray") == std::string::npos);
  CHECK(svg.find("stroke-dasharray=\"7 4\"", second) != std::string::npos);
  const std::string line = svg.substr(first, svg.find("/>", first) - first);
  CHECK(std::count(line.begin(), line.end(), ',') == 2);
}

TEST_CASE("heatmap_svg: lower triangle of the pairs, relation classes marked, differences diverge") {
  const std::vector<HeatmapCell> cells{{0, 1, 28.2, "shared_l3"}, {0, 2, 40.5, "cross_package"}};
  const std::string svg = heatmap_svg(cells, "before", {});
  CHECK(svg.find(">28.2<") != std::string::npos);
  CHECK(svg.find(">40.5<") != std::string::npos);
  CHECK(svg.find("cpu 0 - cpu 2: 40.5 ns (cross_package)") != std::string::npos);
  CHECK(svg.find("3 shared_l3, X cross_package") != std::string::npos);
  // 3 cpus: a 2x2 lower triangle, the pair (1, 2) not measured is an empty cell.
  CHECK(svg.find("fill=\"#f3f5f8\"") != std::string::npos);
  const std::string diff =
      heatmap_svg({{0, 1, -3.0, "shared_l3"}, {0, 2, 6.0, "cross_package"}}, "difference", {"ns", true});
  CHECK(diff.find(">-3.0<") != std::string::npos);
  CHECK(diff.find(">+6.0<") != std::string::npos);
  CHECK(diff.find("fill=\"#b2182b\"") != std::string::npos);  // the largest rise, full red
  CHECK(heatmap_svg({}, "none").find("no pair measured") != std::string::npos);
  // 20 CPUs: too many for values in the cells; the letters stay, the values go to the tooltips.
  std::vector<HeatmapCell> many;
  for (int a = 0; a < 20; ++a)
    for (int b = a + 1; b < 20; ++b)
      many.push_back({a, b, 20.0 + a + b, b - a == 10 ? "smt_sibling" : "shared_l3"});
  const std::string big = heatmap_svg(many, "many");
  CHECK(big.find(">20.1<") == std::string::npos);
  CHECK(big.find("cpu 0 - cpu 10: 30.0 ns (smt_sibling)") != std::string::npos);
  CHECK(big.find(">T</text>") != std::string::npos);
  CHECK(big.find("letter: T smt_sibling, 3 shared_l3") != std::string::npos);
}

TEST_CASE("pair_heatmap_cells: the pairs table's medians, failed pairs left out") {
  ProbeTable pairs{"pairs", {"cpu_a", "cpu_b", "relation", "median_ns"}, {}};
  pairs.rows.push_back({0, 1, "shared_l3", Cell(28.2, 1)});
  pairs.rows.push_back({0, 2, "cross_package", Cell()});
  const auto cells = pair_heatmap_cells(pairs);
  REQUIRE(cells.size() == 1);
  CHECK(cells[0].cpu_a == 0);
  CHECK(cells[0].cpu_b == 1);
  CHECK(cells[0].value == Approx(28.2));
  CHECK(cells[0].relation == "shared_l3");
  CHECK(pair_heatmap_cells(ProbeTable{"other", {"cpu", "x"}, {}}).empty());
}

}  // namespace jitterd

namespace jitterd {

TEST_CASE("probe_section_html: one section for every page, the tables drawn by their shape") {
  const std::vector<ProbeTable> tables{
      {"pairs",
       {"cpu_a", "cpu_b", "relation", "median_ns"},
       {{0, 1, "shared_l3", Cell(28.0, 1)}},
       TableShape::pair_heatmap},
      {"checks", {"status", "check"}, {{"FAIL", "isolated"}, {"PASS", "governor"}}, TableShape::checklist}};
  const std::vector<std::string> notes{"a <note>"};
  const std::string report = probe_section_html({.heading = "probe c2c", .tables = tables, .notes = notes});
  CHECK(report.rfind("<h2>probe c2c</h2>\n<div class=\"heatmaps\"><figure><svg", 0) == 0);
  CHECK(report.find("<section") == std::string::npos);
  CHECK_THAT(report, Catch::Contains("<td class=\"fail\">FAIL</td>"));
  CHECK_THAT(report, Catch::Contains("<td class=\"pass\">PASS</td>"));
  CHECK_THAT(report, Catch::EndsWith("<ul class=\"notes\"><li>a &lt;note&gt;</li></ul>\n"));
  const std::string status = probe_section_html(
      {.heading = "c2c", .heading_level = 3, .id = "probe-c2c", .meta_html = "<p class=\"meta\">not run yet</p>"});
  CHECK(status ==
        "<section class=\"probe\" id=\"probe-c2c\"><h3>c2c</h3>\n<p class=\"meta\">not run yet</p></section>\n");
  const std::string compared = probe_section_html({.heading = "Pacing",
                                                   .figures_html = {"<figure>a</figure>", "<figure>b</figure>"},
                                                   .summary_html = "<div>"});
  CHECK(compared == "<h2>Pacing</h2>\n<div class=\"heatmaps\"><figure>a</figure><figure>b</figure></div>\n<div>");
  // c2c with one sampled CPU: no pair in scope, so no empty heatmap or header-only tables.
  const std::vector<ProbeTable> empty{
      {"pairs", {"cpu_a", "cpu_b", "relation", "median_ns"}, {}, TableShape::pair_heatmap},
      {"relation classes", {"relation", "pairs"}, {}}};
  const std::vector<std::string> why{"no pair to measure: fewer than two CPUs in scope"};
  const std::string nothing = probe_section_html({.heading = "c2c", .tables = empty, .notes = why});
  CHECK(nothing ==
        "<h2>c2c</h2>\n<p class=\"meta\">nothing measured in this run; the notes say why</p>\n<ul "
        "class=\"notes\"><li>no pair to measure: fewer than two CPUs in scope</li></ul>\n");
}

TEST_CASE("html_escape: bidirectional controls and line separators show as their escape, never act") {
  // U+202E (right-to-left override), U+2066 (left-to-right isolate), U+2028 (line separator).
  CHECK(html_escape("host\xe2\x80\xae"
                    "gpj.exe") == "host\\u202egpj.exe");
  CHECK(html_escape("a\xe2\x81\xa6"
                    "b\xe2\x80\xa8"
                    "c") == "a\\u2066b\\u2028c");
  CHECK(html_escape("\xd8\x9c") == "\\u061c");                           // Arabic letter mark
  CHECK(html_escape("\xe2\x80\x94 em dash") == "\xe2\x80\x94 em dash");  // other punctuation kept
}

}  // namespace jitterd
