#include "challenger/calibration/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace wipeproof {

namespace {

constexpr double kPanelWidth = 520;
constexpr double kPanelHeight = 400;
constexpr double kLeft = 70, kRight = 20, kTop = 50, kBottom = 60;  // margins inside a panel
constexpr double kTitleHeight = 36;

std::string Num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

std::string TickText(double v) {
  char buf[32];
  if (v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-3)) {
    std::snprintf(buf, sizeof buf, "%.0e", v);
  } else {
    std::snprintf(buf, sizeof buf, "%g", v);
  }
  return buf;
}

// Maps data to pixels along one axis.
struct Scale {
  const SvgAxis& axis;
  double from, to;  // pixel range
  double T(double v) const { return axis.log ? std::log10(v) : v; }
  bool Valid(double v) const { return !axis.log || v > 0; }
  double operator()(double v) const {
    const double lo = T(axis.min), hi = T(axis.max);
    double t = (T(std::clamp(v, axis.min, axis.max)) - lo) / (hi - lo);
    return from + t * (to - from);
  }
};

std::vector<std::pair<double, std::string>> AutoTicks(const SvgAxis& a) {
  std::vector<std::pair<double, std::string>> ticks;
  if (a.log) {
    for (double d = std::pow(10, std::floor(std::log10(a.min))); d <= a.max * 1.0001; d *= 10) {
      if (d >= a.min * 0.9999) ticks.push_back({d, TickText(d)});
    }
    return ticks;
  }
  const double span = a.max - a.min;
  const double raw = span / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double f : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= f * mag) {
      step = f * mag;
      break;
    }
  }
  for (double v = std::ceil(a.min / step) * step; v <= a.max + step * 1e-6; v += step)
    ticks.push_back({v, TickText(v)});
  return ticks;
}

void RenderPanel(std::ostringstream& out, const SvgChart& c, double x0, double y0) {
  const double left = x0 + kLeft, right = x0 + kPanelWidth - kRight;
  const double top = y0 + kTop, bottom = y0 + kPanelHeight - kBottom;
  const Scale sx{c.x, left, right};
  const Scale sy{c.y, bottom, top};
  out << "<text x=\"" << Num((left + right) / 2) << "\" y=\"" << Num(y0 + 24)
      << "\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">" << SvgEscape(c.title) << "</text>\n";
  out << "<rect x=\"" << Num(left) << "\" y=\"" << Num(top) << "\" width=\"" << Num(right - left) << "\" height=\""
      << Num(bottom - top) << "\" fill=\"none\" stroke=\"#333\"/>\n";
  for (const auto& [v, text] : c.x.ticks.empty() ? AutoTicks(c.x) : c.x.ticks) {
    if (!sx.Valid(v) || v < c.x.min || v > c.x.max) continue;
    const double px = sx(v);
    out << "<line x1=\"" << Num(px) << "\" y1=\"" << Num(top) << "\" x2=\"" << Num(px) << "\" y2=\"" << Num(bottom)
        << "\" stroke=\"#ddd\"/>\n";
    out << "<text x=\"" << Num(px) << "\" y=\"" << Num(bottom + 16) << "\" text-anchor=\"middle\" font-size=\"11\">"
        << SvgEscape(text) << "</text>\n";
  }
  for (const auto& [v, text] : c.y.ticks.empty() ? AutoTicks(c.y) : c.y.ticks) {
    if (!sy.Valid(v) || v < c.y.min || v > c.y.max) continue;
    const double py = sy(v);
    out << "<line x1=\"" << Num(left) << "\" y1=\"" << Num(py) << "\" x2=\"" << Num(right) << "\" y2=\"" << Num(py)
        << "\" stroke=\"#ddd\"/>\n";
    out << "<text x=\"" << Num(left - 6) << "\" y=\"" << Num(py + 4) << "\" text-anchor=\"end\" font-size=\"11\">"
        << SvgEscape(text) << "</text>\n";
  }
  out << "<text x=\"" << Num((left + right) / 2) << "\" y=\"" << Num(bottom + 38)
      << "\" text-anchor=\"middle\" font-size=\"12\">" << SvgEscape(c.x.label) << "</text>\n";
  out << "<text x=\"" << Num(x0 + 16) << "\" y=\"" << Num((top + bottom) / 2)
      << "\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 " << Num(x0 + 16) << " "
      << Num((top + bottom) / 2) << ")\">" << SvgEscape(c.y.label) << "</text>\n";
  for (const auto& [v, text] : c.y_lines) {
    if (!sy.Valid(v) || v < c.y.min || v > c.y.max) continue;
    const double py = sy(v);
    out << "<line x1=\"" << Num(left) << "\" y1=\"" << Num(py) << "\" x2=\"" << Num(right) << "\" y2=\"" << Num(py)
        << "\" stroke=\"#999\" stroke-dasharray=\"2,3\"/>\n";
    out << "<text x=\"" << Num(right - 4) << "\" y=\"" << Num(py - 4) << "\" text-anchor=\"end\" font-size=\"10\" "
        << "fill=\"#666\">" << SvgEscape(text) << "</text>\n";
  }
  for (const SvgSeries& s : c.series) {
    std::string points;
    for (const auto& [x, y] : s.points) {
      if (!sx.Valid(x) || !sy.Valid(y) || !std::isfinite(x) || !std::isfinite(y)) continue;
      points += Num(sx(x)) + "," + Num(sy(y)) + " ";
    }
    if (points.empty()) continue;
    out << "<polyline fill=\"none\" stroke=\"" << SvgEscape(s.color) << "\" stroke-width=\"2\""
        << (s.dashed ? " stroke-dasharray=\"6,4\"" : "") << " points=\"" << points << "\"/>\n";
  }
  for (const SvgMarker& m : c.markers) {
    if (!sx.Valid(m.x) || !sy.Valid(m.y)) continue;
    out << "<circle cx=\"" << Num(sx(m.x)) << "\" cy=\"" << Num(sy(m.y)) << "\" r=\"4\" fill=\"" << SvgEscape(m.color)
        << "\"/>\n";
    out << "<text x=\"" << Num(sx(m.x) + 6) << "\" y=\"" << Num(sy(m.y) - 6) << "\" font-size=\"10\">"
        << SvgEscape(m.label) << "</text>\n";
  }
  // Legend, top left inside the plot area.
  double ly = top + 14;
  for (const SvgSeries& s : c.series) {
    if (s.label.empty()) continue;
    out << "<line x1=\"" << Num(left + 8) << "\" y1=\"" << Num(ly - 4) << "\" x2=\"" << Num(left + 30) << "\" y2=\""
        << Num(ly - 4) << "\" stroke=\"" << SvgEscape(s.color) << "\" stroke-width=\"2\""
        << (s.dashed ? " stroke-dasharray=\"6,4\"" : "") << "/>\n";
    out << "<text x=\"" << Num(left + 36) << "\" y=\"" << Num(ly) << "\" font-size=\"11\">" << SvgEscape(s.label)
        << "</text>\n";
    ly += 15;
  }
}

}  // namespace

std::string SvgEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderSvg(const std::vector<SvgChart>& charts, const std::string& title) {
  const double width = kPanelWidth * std::max<size_t>(1, charts.size());
  const double height = kPanelHeight + kTitleHeight;
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << Num(width) << "\" height=\""
      << Num(height) << "\" viewBox=\"0 0 " << Num(width) << " " << Num(height) << "\" font-family=\"sans-serif\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << Num(width / 2) << "\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">" << SvgEscape(title)
      << "</text>\n";
  for (size_t i = 0; i < charts.size(); ++i) RenderPanel(out, charts[i], kPanelWidth * i, kTitleHeight);
  out << "</svg>\n";
  return out.str();
}

}  // namespace wipeproof
