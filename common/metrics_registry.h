// A small metrics registry rendered as Prometheus text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): counters, gauges and histograms,
// each a family with a fixed list of label names and one series per list of label values.
//
//   MetricsRegistry registry;
//   CounterFamily& sessions = registry.AddCounter("wipeproof_agent_sessions_total", "Sessions ended.", {"outcome"});
//   sessions.WithLabels({"pass"}).Increment();
//   HistogramFamily& lookup = registry.AddHistogram("x_seconds", "...", {}, {0.001, 0.01, 0.1});
//   lookup.WithLabels({}).Observe(0.004);
//   std::string text = registry.Render();  // what GET /metrics returns
//
// Rendering: families in registration order, each as "# HELP", "# TYPE" and its series sorted by
// label values; a family with no series is left out. Label values are escaped (\\, \", \n), HELP
// text too (\\, \n). Values: integers as digits ("12"), others in the shortest form that reads back
// exactly ("0.25", "1e-06"), "+Inf", "-Inf", "NaN". A histogram renders NAME_bucket{...,le="B"} with
// cumulative counts for each bound and le="+Inf", then NAME_sum and NAME_count.
// Units are the caller's: name metrics by Prometheus conventions (_seconds, _bytes, _total).
//
// Collectors (AddCollector) run at the start of each Render, to set gauges from a snapshot of some
// state (the agent's phase, a ledger's size) instead of on every change.
//
// Thread-safety: every method is thread-safe. Counter, Gauge and Histogram updates take no
// registry-wide lock (atomics; a histogram takes its own short mutex), so they may be used on hot
// paths. Render runs the collectors and renders under one mutex, so scrapes do not interleave.
// References returned by Add* and WithLabels stay valid as long as the registry, except that
// Clear() invalidates the series references of that family.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace wipeproof {

// A value that only goes up (resets only when the process restarts).
class Counter {
 public:
  // REQUIRES: by >= 0 (a negative amount is ignored).
  void Increment(double by = 1);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// A value that goes up and down.
class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double by);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Observations counted into buckets with fixed upper bounds (plus +Inf), their sum and count.
class Histogram {
 public:
  // REQUIRES: `upper_bounds` strictly increasing and finite (the registry checks).
  explicit Histogram(const std::vector<double>& upper_bounds);
  void Observe(double value);

  struct Snapshot {
    std::vector<double> upper_bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf (so size upper_bounds + 1)
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Get() const;

 private:
  const std::vector<double> upper_bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // guarded by mu_: per bucket, not cumulative; last is +Inf
  double sum_ = 0;                // guarded by mu_
  uint64_t count_ = 0;            // guarded by mu_
};

// One metric name with its label names; a series per list of label values.
class MetricFamilyBase {
 public:
  MetricFamilyBase(std::string name, std::string help, std::string type, std::vector<std::string> label_names);
  virtual ~MetricFamilyBase() = default;
  const std::string& name() const { return name_; }
  // Appends HELP, TYPE and every series; nothing when the family has no series.
  virtual void Render(std::string* out) const = 0;

 protected:
  // "{a="x",b="y"}" for these values (and `extra`, e.g. le="0.1", appended), or "" with neither.
  std::string LabelText(const std::vector<std::string>& values, const std::string& extra = "") const;
  void RenderHeader(std::string* out) const;

  const std::string name_;
  const std::string help_;
  const std::string type_;
  const std::vector<std::string> label_names_;
};

template <typename Metric>
class MetricFamily : public MetricFamilyBase {
 public:
  using MetricFamilyBase::MetricFamilyBase;

  // The series with these label values (one per label name, in order), created at zero on first
  // use. REQUIRES: values.size() equals the number of label names (checked: a programming error).
  Metric& WithLabels(const std::vector<std::string>& values);
  // Drops every series (for a collector that rebuilds the set each scrape, e.g. a session id label).
  // Invalidates references from WithLabels.
  void Clear();
  void Render(std::string* out) const override;

 protected:
  // A new series at zero (HistogramFamily overrides it with its bounds).
  virtual std::unique_ptr<Metric> NewMetric() const;
  void RenderSeries(const std::vector<std::string>& values, const Metric& metric, std::string* out) const;

  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> series_;  // guarded by mu_
};

using CounterFamily = MetricFamily<Counter>;
using GaugeFamily = MetricFamily<Gauge>;

class HistogramFamily : public MetricFamily<Histogram> {
 public:
  HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                  std::vector<double> upper_bounds);

 protected:
  std::unique_ptr<Histogram> NewMetric() const override { return std::make_unique<Histogram>(upper_bounds_); }

 private:
  const std::vector<double> upper_bounds_;
};

class MetricsRegistry {
 public:
  // Each adds a family. REQUIRES (checked: programming errors): a valid, unused metric name
  // ([a-zA-Z_:][a-zA-Z0-9_:]*) and valid, distinct label names ([a-zA-Z_][a-zA-Z0-9_]*, not starting
  // with "__"; a histogram may not use "le"); histogram bounds strictly increasing and finite.
  CounterFamily& AddCounter(const std::string& name, const std::string& help,
                            const std::vector<std::string>& label_names);
  GaugeFamily& AddGauge(const std::string& name, const std::string& help, const std::vector<std::string>& label_names);
  HistogramFamily& AddHistogram(const std::string& name, const std::string& help,
                                const std::vector<std::string>& label_names, const std::vector<double>& upper_bounds);

  // `collect` runs at the start of every Render, under the render mutex (never concurrently with
  // itself). It must not call Render.
  void AddCollector(std::function<void()> collect);

  // The exposition text (Content-Type "text/plain; version=0.0.4; charset=utf-8").
  std::string Render() const;

 private:
  void CheckNewName(const std::string& name, const std::vector<std::string>& label_names);

  mutable std::mutex mu_;                                    // held for registration and for a whole Render
  mutable std::mutex render_mu_;                             // serializes Render (collectors run under it)
  std::vector<std::unique_ptr<MetricFamilyBase>> families_;  // guarded by mu_
  std::vector<std::function<void()>> collectors_;            // guarded by mu_
};

// Helpers exposed for tests and for other renderers.
// The value as the exposition format writes it ("12", "0.25", "+Inf", "NaN").
std::string FormatMetricValue(double value);
// A label value escaped for "...": backslash, double quote and newline.
std::string EscapeLabelValue(const std::string& value);

}  // namespace wipeproof
