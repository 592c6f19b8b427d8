#include "common/metrics_registry.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>

namespace wipeproof {

namespace {

void AddAtomic(std::atomic<double>& target, double by) {
  double old = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(old, old + by, std::memory_order_relaxed)) {
  }
}

bool ValidName(const std::string& name, bool colon_allowed) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon_allowed && c == ':');
    const bool digit = c >= '0' && c <= '9';
    if (!letter && !(digit && i > 0)) return false;
  }
  return true;
}

// A broken registration is a programming error: stop at once, naming it.
void Require(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "metrics registry: %s\n", what.c_str());
    std::abort();
  }
}

std::string EscapeHelp(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string FormatMetricValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", value);
    return std::string(buf) == "-0" ? "0" : buf;
  }
  // The shortest %g form that reads back as the same double.
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

void Counter::Increment(double by) {
  if (by > 0) AddAtomic(value_, by);
}

void Gauge::Add(double by) { AddAtomic(value_, by); }

Histogram::Histogram(const std::vector<double>& upper_bounds)
    : upper_bounds_(upper_bounds), counts_(upper_bounds.size() + 1, 0) {}

void Histogram::Observe(double value) {
  // The first bucket whose upper bound is >= value ("le"); past the last: +Inf.
  const size_t bucket = std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) - upper_bounds_.begin();
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

Histogram::Snapshot Histogram::Get() const {
  Snapshot out;
  out.upper_bounds = upper_bounds_;
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t running = 0;
  for (uint64_t c : counts_) {
    running += c;
    out.cumulative.push_back(running);
  }
  out.sum = sum_;
  out.count = count_;
  return out;
}

// ---------------------------------------------------------------------------------------------

MetricFamilyBase::MetricFamilyBase(std::string name, std::string help, std::string type,
                                   std::vector<std::string> label_names)
    : name_(std::move(name)), help_(std::move(help)), type_(std::move(type)), label_names_(std::move(label_names)) {}

std::string MetricFamilyBase::LabelText(const std::vector<std::string>& values, const std::string& extra) const {
  if (values.empty() && extra.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += label_names_[i] + "=\"" + EscapeLabelValue(values[i]) + "\"";
  }
  if (!extra.empty()) out += (values.empty() ? "" : ",") + extra;
  return out + "}";
}

void MetricFamilyBase::RenderHeader(std::string* out) const {
  *out += "# HELP " + name_ + " " + EscapeHelp(help_) + "\n";
  *out += "# TYPE " + name_ + " " + type_ + "\n";
}

template <>
std::unique_ptr<Counter> MetricFamily<Counter>::NewMetric() const {
  return std::make_unique<Counter>();
}

template <>
std::unique_ptr<Gauge> MetricFamily<Gauge>::NewMetric() const {
  return std::make_unique<Gauge>();
}

template <>
std::unique_ptr<Histogram> MetricFamily<Histogram>::NewMetric() const {
  return std::make_unique<Histogram>(std::vector<double>{});  // HistogramFamily gives the bounds
}

template <typename Metric>
Metric& MetricFamily<Metric>::WithLabels(const std::vector<std::string>& values) {
  Require(values.size() == label_names_.size(), name_ + ": " + std::to_string(values.size()) + " label values for " +
                                                    std::to_string(label_names_.size()) + " label names");
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<Metric>& slot = series_[values];
  if (!slot) slot = NewMetric();
  return *slot;
}

template <typename Metric>
void MetricFamily<Metric>::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  series_.clear();
}

template <typename Metric>
void MetricFamily<Metric>::Render(std::string* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (series_.empty()) return;
  RenderHeader(out);
  for (const auto& [values, metric] : series_) RenderSeries(values, *metric, out);
}

template <>
void MetricFamily<Counter>::RenderSeries(const std::vector<std::string>& values, const Counter& metric,
                                         std::string* out) const {
  *out += name_ + LabelText(values) + " " + FormatMetricValue(metric.Value()) + "\n";
}

template <>
void MetricFamily<Gauge>::RenderSeries(const std::vector<std::string>& values, const Gauge& metric,
                                       std::string* out) const {
  *out += name_ + LabelText(values) + " " + FormatMetricValue(metric.Value()) + "\n";
}

template <>
void MetricFamily<Histogram>::RenderSeries(const std::vector<std::string>& values, const Histogram& metric,
                                           std::string* out) const {
  const Histogram::Snapshot s = metric.Get();
  for (size_t i = 0; i < s.cumulative.size(); ++i) {
    const std::string le = i < s.upper_bounds.size() ? FormatMetricValue(s.upper_bounds[i]) : "+Inf";
    *out +=
        name_ + "_bucket" + LabelText(values, "le=\"" + le + "\"") + " " + FormatMetricValue(s.cumulative[i]) + "\n";
  }
  *out += name_ + "_sum" + LabelText(values) + " " + FormatMetricValue(s.sum) + "\n";
  *out += name_ + "_count" + LabelText(values) + " " + FormatMetricValue(static_cast<double>(s.count)) + "\n";
}

template class MetricFamily<Counter>;
template class MetricFamily<Gauge>;
template class MetricFamily<Histogram>;

HistogramFamily::HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                                 std::vector<double> upper_bounds)
    : MetricFamily<Histogram>(std::move(name), std::move(help), "histogram", std::move(label_names)),
      upper_bounds_(std::move(upper_bounds)) {}

// ---------------------------------------------------------------------------------------------

void MetricsRegistry::CheckNewName(const std::string& name, const std::vector<std::string>& label_names) {
  Require(ValidName(name, /*colon_allowed=*/true), "invalid metric name '" + name + "'");
  for (const auto& f : families_) Require(f->name() != name, "metric '" + name + "' registered twice");
  std::set<std::string> seen;
  for (const std::string& l : label_names) {
    Require(ValidName(l, /*colon_allowed=*/false) && l.rfind("__", 0) != 0, name + ": invalid label name '" + l + "'");
    Require(seen.insert(l).second, name + ": label '" + l + "' given twice");
  }
}

CounterFamily& MetricsRegistry::AddCounter(const std::string& name, const std::string& help,
                                           const std::vector<std::string>& label_names) {
  std::lock_guard<std::mutex> lock(mu_);
  CheckNewName(name, label_names);
  families_.push_back(std::make_unique<CounterFamily>(name, help, "counter", label_names));
  return static_cast<CounterFamily&>(*families_.back());
}

GaugeFamily& MetricsRegistry::AddGauge(const std::string& name, const std::string& help,
                                       const std::vector<std::string>& label_names) {
  std::lock_guard<std::mutex> lock(mu_);
  CheckNewName(name, label_names);
  families_.push_back(std::make_unique<GaugeFamily>(name, help, "gauge", label_names));
  return static_cast<GaugeFamily&>(*families_.back());
}

HistogramFamily& MetricsRegistry::AddHistogram(const std::string& name, const std::string& help,
                                               const std::vector<std::string>& label_names,
                                               const std::vector<double>& upper_bounds) {
  std::lock_guard<std::mutex> lock(mu_);
  CheckNewName(name, label_names);
  Require(std::find(label_names.begin(), label_names.end(), "le") == label_names.end(),
          name + ": a histogram may not have a label 'le'");
  Require(!upper_bounds.empty(), name + ": a histogram needs bucket bounds");
  for (size_t i = 0; i < upper_bounds.size(); ++i) {
    Require(std::isfinite(upper_bounds[i]) && (i == 0 || upper_bounds[i] > upper_bounds[i - 1]),
            name + ": bucket bounds must be finite and strictly increasing");
  }
  families_.push_back(std::make_unique<HistogramFamily>(name, help, label_names, upper_bounds));
  return static_cast<HistogramFamily&>(*families_.back());
}

void MetricsRegistry::AddCollector(std::function<void()> collect) {
  std::lock_guard<std::mutex> lock(mu_);
  collectors_.push_back(std::move(collect));
}

std::string MetricsRegistry::Render() const {
  std::lock_guard<std::mutex> render_lock(render_mu_);
  std::vector<std::function<void()>> collectors;
  {
    std::lock_guard<std::mutex> lock(mu_);
    collectors = collectors_;
  }
  for (const auto& collect : collectors) collect();
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& f : families_) f->Render(&out);
  return out;
}

}  // namespace wipeproof
