// SPDX-License-Identifier: Apache-2.0
#include "export/status_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "export/status_snapshot_views.h"
#include "host/text.h"
#include "probes/probe_registry.h"
#include "report/html.h"
#include "report/probe_section.h"
#include "report/stolen_plot.h"

namespace jitterd {
namespace {

// --- HTML ---

std::string esc(std::string_view text) { return html_escape(text); }

// Nanoseconds as microseconds with three decimals, by way of seconds (the page's numbers are
// /metrics' to the last digit): what the browser test reads.
std::string micros(double ns) { return fmt::format("{:.3f}", ns_to_seconds(ns) * 1e6); }

// One numeric cell of the row `id` ("cpu3", "loop-NAME"), with the id the browser test reads
// ("cpu3-p99").
std::string num_cell(std::string_view id, std::string_view name, const std::string& text) {
  return fmt::format("<td class=\"num\" id=\"{}-{}\">{}</td>", id, name, text);
}

// The header cells from the window on, the same for a sampled CPU's table and the loops'.
constexpr std::string_view kWindowHeads =
    "<th class=\"num\">window&nbsp;s</th><th class=\"num\">p50</th><th class=\"num\">p99</th>"
    "<th class=\"num\">p99.9</th><th class=\"num\">p99.99</th><th class=\"num\">max</th>"
    "<th class=\"num\">interr./s</th><th class=\"num\">stolen&nbsp;%</th><th class=\"num\">floor</th>"
    "<th class=\"num\">threshold</th><th>note</th></tr></thead><tbody>\n";

// A row's cells from the window on, for a sampled CPU's row and a loop's alike: the window's
// figures (or "no window yet" unless `valid`), floor and threshold once `warm`, and the note.
std::string window_row_cells(std::string_view id, const CpuFigures& f, bool valid, bool warm,
                             const std::string& note) {
  const auto num = [&](std::string_view name, const std::string& text) { return num_cell(id, name, text); };
  std::string out =
      valid ? num("window", fmt::format("{:.1f}", f.span_seconds)) + num("p50", micros(f.p50_ns)) +
                  num("p99", micros(f.p99_ns)) + num("p999", micros(f.p999_ns)) +
                  num("p9999", micros(f.p9999_ns)) + num("max", micros(f.max_ns)) +
                  num("interruptions",
                      fmt::format("{:.2f}", per_window_second(static_cast<double>(f.interruptions), f))) +
                  num("stolen", fmt::format("{:.4f}", per_window_second(f.stolen_seconds, f) * 100))
            : std::string("<td colspan=\"8\" class=\"meta\">no window yet</td>");
  return out + num("floor", warm ? micros(f.floor_ns) : "") +
         num("threshold", warm ? micros(f.threshold_ns) : "") + "<td class=\"wrap\">" + esc(note) + "</td></tr>\n";
}

std::string yes_no(bool value, bool good_when = true) {
  return fmt::format("<td class=\"{}\">{}</td>", value == good_when ? "ok" : "bad", value ? "yes" : "no");
}

constexpr const char* kStatusCss = R"css(<style>
td.ok,td.pass{background:var(--better);color:var(--better-ink);font-weight:600}
td.bad,td.fail{background:var(--worse);color:var(--worse-ink);font-weight:600}
td.warn{background:#fdf0c8;color:#6b4500;font-weight:600}
nav.links{display:flex;flex-wrap:wrap;gap:.4rem 1rem;margin:.5rem 0 0}
nav.links a{color:var(--accent);font-weight:600}
.cpus{display:flex;flex-wrap:wrap;gap:0 1rem}.cpus .cpu{flex:1 1 22rem;max-width:38rem}
.cpu .plot{max-width:36rem}
.heatmaps figure.stolen{flex:1 1 22rem;max-width:44rem}
</style>
)css";

std::string links_html(std::string_view telemetry_path, int refresh_seconds) {
  std::string out = "<nav class=\"links\">";
  out += "<a href=\"" + esc(telemetry_path) + "\">metrics (" + esc(telemetry_path) + ")</a>";
  out += fmt::format("<a href=\"{}\">JSON ({})</a>", kStatusJsonPath, kStatusJsonPath);
  out += fmt::format("<a href=\"{}\" download>baseline of this window ({})</a>", kBaselineDownloadPath,
                     kBaselineDownloadPath);
  out += refresh_seconds > 0 ? std::string("<a href=\"/\">stop refreshing</a>")
                             : std::string("<a href=\"/?refresh=10\">refresh every 10 s</a>");
  return out + "</nav>\n";
}

std::string sampler_table(const StatusSnapshot& s) {
  std::string out =
      "<div class=\"table-wrap\"><table id=\"samplers\"><caption>per sampled CPU, over the rolling window "
      "(gaps in &micro;s; mlock: memory locked; prio: SCHED_FIFO priority, 0 normal)</caption><thead><tr>"
      "<th>cpu</th><th>up</th><th>pinned</th><th>mlock</th><th class=\"num\">prio</th>";
  out += kWindowHeads;
  for (const SamplerReading& r : s.samplers) {
    const int cpu = r.settings.cpu;
    const CpuFigures f = window_figures(r);
    out += fmt::format("<tr id=\"cpu{}\"><td>{}</td>", cpu, cpu);
    out += yes_no(r.up) + yes_no(r.startup.pinned && !r.off_cpu) + yes_no(r.startup.memory_locked);
    out += fmt::format("<td class=\"num\">{}</td>", r.startup.realtime_priority);
    out += window_row_cells(fmt::format("cpu{}", cpu), f, f.valid, r.sampling, sampler_problem(r));
  }
  return out + "</tbody></table></div>\n";
}

std::string cpu_plots(const StatusSnapshot& s) {
  std::string out = "<div class=\"cpus\">";
  for (const SamplerReading& r : s.samplers) {
    if (!r.sampling || r.window_detail.gaps.empty()) continue;
    const double ns_per_tick = r.settings.scale.to_seconds(1'000'000) * 1e3;
    const std::string title = fmt::format("cpu {}: gaps longer than x, this window", r.settings.cpu);
    out += fmt::format("<section class=\"cpu\"><h3>cpu {}</h3>", r.settings.cpu) +
           exceedance_plot_svg({{"window", exceedance_points(r.window_detail.gaps, ns_per_tick)}},
                               window_figures(r).threshold_ns, title) +
           "</section>";
  }
  return out + "</div>\n";
}

// When the probe last ran and how, above its tables (those of the last successful run when the
// last one failed).
std::string probe_run_html(const StatusSnapshot& s, const ProbeStatus& p) {
  if (!p.ran) return "<p class=\"meta\">not run yet</p>";
  std::string out =
      fmt::format("<p class=\"meta\">last run {} ({:.0f} s ago), took {:.3f} s, {}</p>\n",
                  utc_text(p.last_run_unix_seconds), std::max(0.0, s.unix_seconds - p.last_run_unix_seconds),
                  p.duration_seconds, p.success ? "succeeded" : "failed");
  if (p.success) return out;
  out += "<p>failed: " + esc(p.error) + "</p>\n";
  if (!p.result.tables.empty()) out += "<p class=\"meta\">the last successful run:</p>\n";
  return out;
}

// The heading of a probe's section of its own (ProbeFacts::status_heading), empty for one listed
// among the probes.
std::string_view own_heading(const ProbeStatus& p) {
  const ProbeFacts* facts = probe_facts(p.name);
  return facts ? facts->status_heading : std::string_view();
}

// Each watched CPU's and loop's stolen-time plot (report/stolen_plot.h), ids stolen-cpu3 and
// stolen-loop-NAME.
std::vector<std::string> stolen_figures(const std::vector<StolenPlot>& plots) {
  std::vector<std::string> out;
  for (const StolenPlot& plot : plots)
    out.push_back(stolen_plot_figure(
        plot, plot.loop.empty() ? fmt::format("stolen-cpu{}", plot.cpu) : "stolen-loop-" + plot.loop));
  return out;
}

std::string probe_section(const StatusSnapshot& s, const ProbeStatus& p) {
  ProbeSection section{.heading = p.name, .heading_level = 3, .id = "probe-" + p.name};
  section.meta_html = probe_run_html(s, p);
  if (p.ran && (p.success || !p.result.tables.empty())) {
    section.figures_html = stolen_figures(p.result.stolen);
    section.tables = p.result.tables;
    section.notes = p.result.notes;
  }
  return probe_section_html(section);
}

// The loops' labels as the page shows them: "nic=eth0, queue=0".
std::string labels_text(const ProbeLabels& labels) {
  std::string out;
  for (const auto& [k, v] : labels) out += (out.empty() ? "" : ", ") + k + "=" + v;
  return out;
}

// The id of a loop's row, cells and plot: its name is letters, digits, '_', '-' and '.', which an
// id may hold (escaped all the same).
std::string loop_id(const LoopView& loop) { return "loop-" + loop.loop; }

// Per loop, what the samplers' table shows per CPU, over the loop's rolling window, with the
// cells the browser test reads (id LOOP-p99 and so on).
std::string loop_table(const StatusSnapshot& s, const LoopsReading& reading) {
  std::string out =
      "<div class=\"table-wrap\"><table id=\"loops\"><caption>per application loop, over the rolling window "
      "(gaps in &micro;s; last seen: when its heartbeat last moved)</caption><thead><tr>"
      "<th>loop</th><th>cpu</th><th>labels</th><th class=\"num\">pid</th><th>up</th>"
      "<th class=\"num\">last seen s ago</th>";
  out += kWindowHeads;
  for (const LoopView& loop : reading.loops) {
    const std::string id = esc(loop_id(loop));
    const CpuFigures& f = loop.window;
    out += fmt::format("<tr id=\"{}\"><td>{}</td><td>{}</td><td class=\"wrap\">{}</td>", id, esc(loop.loop),
                       loop.cpu, esc(labels_text(loop.labels)));
    out += fmt::format("<td class=\"num\">{}</td>", loop.pid) + yes_no(loop.up);
    out += num_cell(id, "last-seen",
                    loop.last_seen_unix_seconds > 0
                        ? fmt::format("{:.1f}", std::max(0.0, s.unix_seconds - loop.last_seen_unix_seconds))
                        : std::string("never"));
    out +=
        window_row_cells(id, f, f.valid && f.span_seconds > 0, loop.warmed_up, loop.up ? std::string() : loop.why);
  }
  return out + "</tbody></table></div>\n";
}

// A section per loop: its exceedance plot over the window, as a sampled CPU's.
std::string loop_plots(const LoopsReading& reading) {
  std::string out = "<div class=\"cpus\">";
  for (const LoopView& loop : reading.loops) {
    if (loop.window_gaps.total() == 0) continue;
    const std::string title =
        fmt::format("loop {} on cpu {}: gaps longer than x, this window", loop.loop, loop.cpu);
    out += fmt::format("<section class=\"cpu\" id=\"{}-plot\"><h3>loop {} (cpu {})</h3>", esc(loop_id(loop)),
                       esc(loop.loop), loop.cpu) +
           exceedance_plot_svg({{"window", exceedance_points(loop.window_gaps, loop.ns_per_tick)}},
                               loop.warmed_up ? loop.window.threshold_ns : 0, title) +
           "</section>";
  }
  return out + "</div>\n";
}

std::string refused_table(const LoopsReading& reading) {
  std::string out =
      "<div class=\"table-wrap\"><table id=\"loops-refused\"><caption>segments refused (no series; "
      "jitterd_loop_refused_total counts them by reason)</caption><thead><tr><th>file</th><th>reason</th>"
      "<th>why</th></tr></thead><tbody>\n";
  for (const RefusedLoopSegment& r : reading.refused)
    out += "<tr><td>" + esc(r.file) + "</td><td>" + esc(r.reason) + "</td><td class=\"wrap\">" + esc(r.why) +
           "</td></tr>\n";
  return out + "</tbody></table></div>\n";
}

// The loops probe's section: when it last read the directory, a row and a plot per loop, the
// refused segments with why.
std::string loops_section(const StatusSnapshot& s, const ProbeStatus& p, const LoopsReading& reading) {
  std::string out = "<section class=\"probe\" id=\"probe-" + esc(p.name) + "\">" + probe_run_html(s, p);
  out += fmt::format("<p class=\"meta\">{} loop{} and {} refused segment{} in <code>{}</code></p>\n",
                     reading.loops.size(), reading.loops.size() == 1 ? "" : "s", reading.refused.size(),
                     reading.refused.size() == 1 ? "" : "s", esc(reading.directory));
  if (!reading.glance.rows.empty()) out += table_html(reading.glance);
  if (!reading.loops.empty()) out += loop_table(s, reading) + loop_plots(reading);
  const std::string stolen = joined_with(stolen_figures(p.result.stolen), "");
  if (!stolen.empty()) out += "<div class=\"heatmaps\">" + stolen + "</div>\n";
  for (const ProbeTable& who : reading.who) out += table_html(who);
  if (!reading.refused.empty()) out += refused_table(reading);
  return out + "</section>\n";
}

// The probes with a section of their own, each under its <h2>: the loops' as loops_section draws
// it, any other as its tables.
std::string own_sections(const StatusSnapshot& s) {
  std::string out;
  for (const ProbeStatus& p : statuses_of(s))
    if (const std::string_view heading = own_heading(p); !heading.empty())
      out += "<h2>" + esc(heading) + "</h2>\n" +
             (p.ran && p.result.loops ? loops_section(s, p, *p.result.loops) : probe_section(s, p));
  return out;
}

std::string probe_sections(const StatusSnapshot& s) {
  std::string out;
  for (const ProbeStatus& p : statuses_of(s))
    if (own_heading(p).empty()) out += probe_section(s, p);
  if (out.empty()) out = "<p class=\"meta\">no probe configured</p>\n";
  return out;
}

std::string fingerprint_html(const StatusSnapshot& s) {
  const FingerprintView f = fingerprint_of(s);
  if (!f.known)
    return "<p class=\"meta\">not read yet (the posture probe has not run, or is not configured)</p>\n";
  std::string out = fmt::format(
      "<p class=\"meta\" id=\"fingerprint-since\">unchanged since {} ({} change{} "
      "seen since jitterd started)</p>\n",
      esc(utc_text(f.since_unix_seconds)), f.changes, f.changes == 1 ? "" : "s");
  out += "<div class=\"table-wrap\"><table><thead><tr><th>field</th><th>value</th></tr></thead><tbody>\n";
  for (const auto& [k, v] : f.fields)
    out += "<tr><td>" + esc(k) + "</td><td class=\"wrap\"><code>" + esc(v) + "</code></td></tr>\n";
  return out + "</tbody></table></div>\n";
}

}  // namespace

std::optional<int> parse_refresh(std::string_view value) {
  NumberError error = NumberError::none;
  const std::optional<int> seconds = parse_number<int>(value, &error);
  // A number too large for an int is still a number: the longest refresh.
  if (error == NumberError::out_of_range && value.front() != '-') return kMaxRefreshSeconds;
  if (!seconds || *seconds < 0) return std::nullopt;
  if (*seconds == 0) return 0;
  return std::clamp(*seconds, kMinRefreshSeconds, kMaxRefreshSeconds);
}

std::string status_html(const StatusSnapshot& s, std::string_view telemetry_path, int refresh_seconds) {
  std::string body = kStatusCss;
  body += "<header class=\"page\"><h1>" + (s.hostname.empty() ? std::string() : esc(s.hostname) + " · ") +
          "jitterd " + esc(s.build.version) + "</h1>";
  const std::uint64_t sequence = window_sequence(s);
  body += fmt::format(
      "<p class=\"meta\" id=\"window\" data-sequence=\"{}\">{} · window update {} at {} · counter {} at {:.3f} "
      "MHz "
      "({}){}</p>",
      sequence, esc(utc_text(s.unix_seconds)), sequence, esc(utc_text(window_end(s))), esc(to_string(s.method)),
      s.frequency.hertz / 1e6, esc(s.frequency.source),
      refresh_seconds > 0 ? fmt::format(" · refreshing every {} s", refresh_seconds) : "");
  body += links_html(telemetry_path, refresh_seconds) + "</header>\n";
  body += "<h2>Samplers</h2>\n";
  if (s.samplers.empty())
    body += "<p class=\"meta\">no sampler running</p>\n";
  else
    body += sampler_table(s) + cpu_plots(s);
  body += own_sections(s);
  body += "<h2>Probes</h2>\n" + probe_sections(s);
  body += "<h2>Fingerprint</h2>\n" + fingerprint_html(s);
  body += fmt::format(
      "<footer>Revision {}, {}, {}. Percentiles are the upper edge of a histogram bucket (at most 6.25% above "
      "the true value, never above the exact max); an exceedance plot shows, for each gap length x, the "
      "fraction of the window's gaps longer than x. The configuration was {}.</footer>\n",
      esc(s.build.revision), esc(s.build.arch), esc(s.build.compiler),
      s.last_reload_ok ? "loaded" : "last rejected at a reload; the previous one is in use");
  HtmlPageOptions options;
  options.refresh_seconds = refresh_seconds;
  return html_page(s.hostname.empty() ? "jitterd status" : s.hostname + ": jitterd status", body, options);
}

}  // namespace jitterd
