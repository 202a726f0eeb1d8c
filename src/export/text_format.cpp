// SPDX-License-Identifier: Apache-2.0
#include "export/text_format.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

namespace jitterd {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

class TextWriter {
 public:
  explicit TextWriter(std::string& out) : out_(out) {}

  // TextSerializer's WriteValue: NaN and the infinities by name, anything else as an ostream with
  // the classic locale and precision 16 (max_digits10 - 1) writes it, i.e. printf's "%.16g".
  void number(double value) {
    if (std::isnan(value)) {
      out_ += "Nan";
    } else if (std::isinf(value)) {
      out_ += value < 0 ? "-Inf" : "+Inf";
    } else {
      char buffer[64];
      const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general,
                                        std::numeric_limits<double>::max_digits10 - 1);
      out_.append(buffer, result.ptr);
    }
  }
  template <typename Integer>
  void integer(Integer value) {
    char buffer[24];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    out_.append(buffer, result.ptr);
  }
  // A label value with '\\' and '"' escaped by a backslash and a newline written as \n.
  void escaped(std::string_view value) {
    for (const char c : value) {
      if (c == '\n') {
        out_ += "\\n";
        continue;
      }
      if (c == '\\' || c == '"') out_ += '\\';
      out_ += c;
    }
  }

  // The name and labels of one line, then a blank; `extra` is a quantile or le label.
  template <typename Extra = std::string_view>
  void head(const MetricFamily& family, const ClientMetric& metric, std::string_view suffix = {},
            std::string_view extra_name = {}, const Extra& extra_value = Extra()) {
    out_ += family.name;
    out_ += suffix;
    if (!metric.label.empty() || !extra_name.empty()) {
      out_ += '{';
      const char* separator = "";
      for (const ClientMetric::Label& label : metric.label) {
        out_ += separator;
        out_ += label.name;
        out_ += "=\"";
        escaped(label.value);
        out_ += '"';
        separator = ",";
      }
      if (!extra_name.empty()) {
        out_ += separator;
        out_ += extra_name;
        out_ += "=\"";
        if constexpr (std::is_same_v<Extra, double>)
          number(extra_value);
        else
          escaped(extra_value);
        out_ += '"';
      }
      out_ += '}';
    }
    out_ += ' ';
  }
  void tail(const ClientMetric& metric) {
    if (metric.timestamp_ms != 0) {
      out_ += ' ';
      integer(metric.timestamp_ms);
    }
    out_ += '\n';
  }

  // A summary's or a histogram's first two lines.
  void count_and_sum(const MetricFamily& family, const ClientMetric& metric, std::uint64_t count, double sum) {
    head(family, metric, "_count");
    integer(count);
    tail(metric);
    head(family, metric, "_sum");
    number(sum);
    tail(metric);
  }
  void summary(const MetricFamily& family, const ClientMetric& metric) {
    const ClientMetric::Summary& s = metric.summary;
    count_and_sum(family, metric, s.sample_count, s.sample_sum);
    for (const ClientMetric::Quantile& q : s.quantile) {
      head(family, metric, "", "quantile", q.quantile);
      number(q.value);
      tail(metric);
    }
  }
  void histogram(const MetricFamily& family, const ClientMetric& metric) {
    const ClientMetric::Histogram& h = metric.histogram;
    count_and_sum(family, metric, h.sample_count, h.sample_sum);
    double last = -std::numeric_limits<double>::infinity();
    for (const ClientMetric::Bucket& b : h.bucket) {
      head(family, metric, "_bucket", "le", b.upper_bound);
      last = b.upper_bound;
      integer(b.cumulative_count);
      tail(metric);
    }
    if (last != std::numeric_limits<double>::infinity()) {
      head(family, metric, "_bucket", "le", std::string_view("+Inf"));
      integer(h.sample_count);
      tail(metric);
    }
  }
  void single(const MetricFamily& family, const ClientMetric& metric, double value) {
    head(family, metric);
    number(value);
    tail(metric);
  }

  void family(const MetricFamily& f) {
    if (!f.help.empty()) {
      out_ += "# HELP ";
      out_ += f.name;
      out_ += ' ';
      out_ += f.help;
      out_ += '\n';
    }
    out_ += "# TYPE ";
    out_ += f.name;
    switch (f.type) {
      case MetricType::Counter:
        out_ += " counter\n";
        for (const ClientMetric& m : f.metric) single(f, m, m.counter.value);
        break;
      case MetricType::Gauge:
        out_ += " gauge\n";
        for (const ClientMetric& m : f.metric) single(f, m, m.gauge.value);
        break;
      case MetricType::Summary:
        out_ += " summary\n";
        for (const ClientMetric& m : f.metric) summary(f, m);
        break;
      case MetricType::Untyped:
        out_ += " untyped\n";
        for (const ClientMetric& m : f.metric) single(f, m, m.untyped.value);
        break;
      case MetricType::Histogram:
        out_ += " histogram\n";
        for (const ClientMetric& m : f.metric) histogram(f, m);
        break;
    }
  }

 private:
  std::string& out_;
};

}  // namespace

std::string serialize_text(const std::vector<MetricFamily>& families) {
  // About 80 bytes a line; a histogram or summary writes several lines per metric.
  std::size_t lines = 0;
  for (const MetricFamily& f : families) {
    for (const ClientMetric& m : f.metric) lines += 3 + m.histogram.bucket.size() + m.summary.quantile.size();
  }
  std::string out;
  out.reserve(lines * 80);
  TextWriter writer(out);
  for (const MetricFamily& f : families) writer.family(f);
  return out;
}

}  // namespace jitterd
