// A small SVG line-chart writer for `wipeproof-challenger plan --plot=FILE.svg`: panels side by
// side, each with axes (linear or logarithmic), ticks, line series (solid or dashed), point
// markers with labels, and a legend. Plain SVG 1.1 text, no scripts, no external resources.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace wipeproof {

struct SvgSeries {
  std::string label;  // legend text; "" = not in the legend
  std::string color;  // CSS colour, e.g. "#1f77b4"
  bool dashed = false;
  std::vector<std::pair<double, double>> points;  // (x, y) in data units, drawn in order
};

struct SvgMarker {
  double x = 0, y = 0;
  std::string label;
  std::string color;
};

struct SvgAxis {
  std::string label;
  bool log = false;  // base-10 ticks, or base 2 when `ticks` is given
  double min = 0, max = 1;
  // Explicit ticks (value, text); empty = automatic (decades for log, ~5 round values for linear).
  std::vector<std::pair<double, std::string>> ticks;
};

struct SvgChart {
  std::string title;
  SvgAxis x, y;
  std::vector<SvgSeries> series;
  std::vector<SvgMarker> markers;
  std::vector<std::pair<double, std::string>> y_lines;  // horizontal reference lines (value, text)
};

// One SVG document with `charts` side by side under `title`. Points outside an axis range are
// clipped to it; on log axes non-positive values are dropped.
std::string RenderSvg(const std::vector<SvgChart>& charts, const std::string& title);

// Escapes &, <, >, " for SVG text.
std::string SvgEscape(const std::string& text);

}  // namespace wipeproof
