#include "impsim/report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "impsim/base/escape.h"
#include "impsim/base/text_layout.h"
#include "impsim/base/text.h"

namespace impsim {

namespace {

// The plot's frame is fixed; the canvas widens (and grows taller) so that
// the legend, right of the plot, is never cut.
constexpr double kWidth = 820, kHeight = 500;
constexpr double kLeft = 90, kRight = 190, kTop = 82, kBottom = 62;
// A legend line: about 8 px a character at 13 px (DejaVu Sans averages
// less; capitals and wide letters need the room); past kLegendChars a name
// wraps onto more lines.
constexpr double kLegendCharWidth = 8, kLegendText = 34, kLegendGap = 18, kLegendPad = 12;
constexpr size_t kLegendChars = 36;
constexpr const char* kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";
constexpr const char* kPalette[] = {"#d62728", "#1f77b4", "#ff7f0e", "#2ca02c",
                                    "#9467bd", "#17becf", "#8c564b", "#7f7f7f"};
constexpr const char* kDashes[] = {"", "7 4", "2 3", "9 3 2 3"};

// A decade's label: grouped digits, or 1eN on an axis that reaches a
// million (one form per axis: "100,000" beside "1e7" read as two scales,
// and "1,000,000" runs into the axis title).
std::string decade_label(int e, bool exponents) {
  if (!exponents) {
    uint64_t v = 1;
    for (int i = 0; i < e; ++i) v *= 10;
    return grouped(v);
  }
  return fmt::format("1e{}", e);
}

std::string num(double v) { return fmt::format("{:.1f}", v); }

// A legend name as the lines it is drawn on: whole when it fits
// kLegendChars, else wrapped at its spaces, a word longer than a line cut
// (at a character boundary).
std::vector<std::string> legend_lines(const std::string& name) {
  const std::string text = visible_text(name);
  if (text_width(text) <= kLegendChars) return {text};
  std::vector<std::string> lines;
  for (const std::string& line : [&] {
         std::vector<std::string> wrapped;
         std::string all = wrap_paragraph(text, "", "", kLegendChars);
         for (size_t pos = 0; pos < all.size();) {
           size_t nl = all.find('\n', pos);
           wrapped.push_back(all.substr(pos, nl - pos));
           pos = nl + 1;
         }
         return wrapped;
       }()) {
    std::string rest = line;
    while (text_width(rest) > kLegendChars) {
      size_t cut = 0;
      for (size_t n = 0; n < kLegendChars; ++n) {
        ++cut;
        while (cut < rest.size() && (static_cast<unsigned char>(rest[cut]) & 0xC0) == 0x80) ++cut;
      }
      lines.push_back(rest.substr(0, cut));
      rest = rest.substr(cut);
    }
    lines.push_back(rest);
  }
  return lines;
}

}  // namespace

std::string svg_line_chart(const ChartSpec& spec) {
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  const double x0 = kLeft, y0 = kTop + ph;  // the plot's bottom-left corner

  // The legend's lines, and the canvas that holds them.
  std::vector<std::vector<std::string>> legend;
  size_t legend_chars = 0, legend_lines_total = 0;
  for (const ChartSeries& s : spec.series) {
    legend.push_back(legend_lines(s.name));
    for (const std::string& line : legend.back()) legend_chars = std::max(legend_chars, text_width(line));
    legend_lines_total += legend.back().size();
  }
  const double width =
      std::max(kWidth, kLeft + pw + kLegendGap + kLegendText + static_cast<double>(legend_chars) * kLegendCharWidth +
                           kLegendPad);
  const double legend_bottom = kTop + 10 + static_cast<double>(spec.series.size()) * 22 +
                               static_cast<double>(legend_lines_total - spec.series.size()) * 15;
  const double height = std::max(kHeight, legend_bottom + 10);

  // Y: whole decades around the positive values.
  uint64_t vmax = 1, vmin = 0;
  for (auto& s : spec.series)
    for (auto& v : s.values)
      if (v && *v > 0) {
        vmax = std::max(vmax, *v);
        vmin = vmin == 0 ? *v : std::min(vmin, *v);
      }
  if (vmin == 0) vmin = 1;
  int elo = static_cast<int>(std::floor(std::log10(static_cast<double>(vmin)) + 1e-9));
  int ehi = static_cast<int>(std::ceil(std::log10(static_cast<double>(vmax)) - 1e-9));
  if (ehi <= elo) ehi = elo + 1;
  // The decades span the frame less a margin at both ends, so points on the
  // lowest and highest decade keep room for their labels; 0 sits on the frame.
  const double margin = 22, span = ph - 2 * margin;
  auto ydec = [&](double e) { return y0 - margin - (e - elo) / (ehi - elo) * span; };
  auto ypos = [&](uint64_t v) {
    if (v == 0) return y0;
    return ydec(std::log10(static_cast<double>(v)));
  };
  // X: linear over the values, a little room at both ends.
  int64_t xmin = spec.x.empty() ? 0 : *std::min_element(spec.x.begin(), spec.x.end());
  int64_t xmax = spec.x.empty() ? 1 : *std::max_element(spec.x.begin(), spec.x.end());
  auto xpos = [&](int64_t x) {
    if (xmax == xmin) return x0 + pw / 2;
    double pad = 0.05 * pw;
    return x0 + pad + (static_cast<double>(x - xmin) / static_cast<double>(xmax - xmin)) * (pw - 2 * pad);
  };

  std::string o;
  o += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"{2}\">\n",
      width, height, kFont);
  o += fmt::format("<title>{}</title>\n", xml_text(spec.title));
  o += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", width, height);
  o += fmt::format("<text x=\"{}\" y=\"28\" font-size=\"18\" font-weight=\"bold\" fill=\"#222222\">{}</text>\n",
                   num(kLeft), xml_text(spec.title));
  // The subtitle, wrapped at word boundaries onto at most two lines.
  {
    std::vector<std::string> lines(1);
    const size_t chars = 100;
    size_t pos = 0;
    while (pos < spec.subtitle.size()) {
      size_t end = spec.subtitle.find(' ', pos);
      if (end == std::string::npos) end = spec.subtitle.size();
      std::string word = spec.subtitle.substr(pos, end - pos);
      if (!lines.back().empty() && lines.back().size() + 1 + word.size() > chars) {
        if (lines.size() == 2) {
          lines.back() += " ...";
          break;
        }
        lines.emplace_back();
      }
      lines.back() += (lines.back().empty() ? "" : " ") + word;
      pos = end + 1;
    }
    for (size_t i = 0; i < lines.size(); ++i)
      if (!lines[i].empty())
        o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#555555\">{}</text>\n", num(kLeft),
                         48 + 15 * i, xml_text(lines[i]));
  }

  // Grid and y axis: a labelled line per decade, light lines at 2..9.
  o += "<g stroke-width=\"1\">\n";
  for (int e = elo; e <= ehi; ++e) {
    double y = ydec(e);
    o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#cccccc\"/>\n", num(x0), num(y),
                     num(x0 + pw), num(y));
    o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\" fill=\"#333333\">{}</text>\n",
                     num(x0 - 8), num(y + 4), decade_label(e, ehi >= 6));
    if (e < ehi && ehi - elo <= 8)
      for (int m = 2; m <= 9; ++m) {
        double ym = ydec(e + std::log10(static_cast<double>(m)));
        o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#eeeeee\"/>\n", num(x0), num(ym),
                         num(x0 + pw), num(ym));
      }
  }
  // X ticks: every value when they fit, else about 12.
  size_t step = std::max<size_t>(1, (spec.x.size() + 11) / 12);
  for (size_t i = 0; i < spec.x.size(); i += step) {
    double x = xpos(spec.x[i]);
    o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333333\"/>\n", num(x), num(y0), num(x),
                     num(y0 + 5));
    o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333333\">{}</text>\n",
                     num(x), num(y0 + 19), spec.x[i]);
  }
  o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333333\"/>\n", num(x0),
                   num(kTop), num(pw), num(ph));
  o += "</g>\n";
  o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222222\">{}</text>\n",
                   num(x0 + pw / 2), num(kHeight - 16), xml_text(spec.x_label));
  o += fmt::format(
      "<text x=\"{0}\" y=\"{1}\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222222\" "
      "transform=\"rotate(-90 {0} {1})\">{2}</text>\n",
      num(22), num(kTop + ph / 2), xml_text(spec.y_label));

  // The series: lines, then points and their labels on top. A value's
  // label goes above its point (below, for a series that asks), on the
  // other side where that box is taken by an earlier label, and is left
  // out where both are (the point's tooltip still gives the value): two
  // series with close values at one x wrote their labels over each other.
  struct Box {
    double left, right, top, bottom;
  };
  std::vector<Box> placed;
  auto label_box = [](double x, double baseline, const std::string& text) {
    const double half = 3.3 * static_cast<double>(text.size()) + 2;  // 11 px digits are about 6.6 px wide
    return Box{x - half, x + half, baseline - 10, baseline + 2};
  };
  auto free_at = [&](const Box& b) {
    return std::none_of(placed.begin(), placed.end(), [&](const Box& other) {
      return b.left < other.right && other.left < b.right && b.top < other.bottom && other.top < b.bottom;
    });
  };
  for (size_t si = 0; si < spec.series.size(); ++si) {
    const ChartSeries& s = spec.series[si];
    const char* color = kPalette[static_cast<size_t>(s.color) % std::size(kPalette)];
    const char* dash = kDashes[static_cast<size_t>(s.dash) % std::size(kDashes)];
    o += fmt::format("<g fill=\"{0}\" stroke=\"{0}\">\n", color);
    std::string pts;
    auto flush = [&] {
      if (pts.empty()) return;
      o += fmt::format("<polyline fill=\"none\" stroke-width=\"2.5\"{} points=\"{}\"/>\n",
                       *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "", pts);
      pts.clear();
    };
    for (size_t i = 0; i < s.values.size() && i < spec.x.size(); ++i) {
      if (!s.values[i]) {
        flush();
        continue;
      }
      pts += fmt::format("{}{},{}", pts.empty() ? "" : " ", num(xpos(spec.x[i])), num(ypos(*s.values[i])));
    }
    flush();
    for (size_t i = 0; i < s.values.size() && i < spec.x.size(); ++i) {
      if (!s.values[i]) continue;
      double x = xpos(spec.x[i]), y = ypos(*s.values[i]);
      bool zero = *s.values[i] == 0;
      const std::string text = grouped(*s.values[i]);
      o += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\"{}><title>{}: {} = {}</title></circle>\n", num(x), num(y),
                       zero ? " fill=\"#ffffff\" stroke-width=\"2\"" : "", xml_text(s.name), spec.x[i], text);
      double ly = s.labels_below ? y + 17 : y - 9;
      if (!free_at(label_box(x, ly, text))) ly = s.labels_below ? y - 9 : y + 17;
      if (!free_at(label_box(x, ly, text))) continue;
      placed.push_back(label_box(x, ly, text));
      o += fmt::format(
          "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" stroke=\"#ffffff\" stroke-width=\"3\" "
          "paint-order=\"stroke\">{}</text>\n",
          num(x), num(ly), text);
    }
    o += "</g>\n";
  }

  // Legend, right of the plot: a name too long for a line continues on the
  // next ones, and the entries below move down.
  double lx = x0 + pw + kLegendGap, y = kTop + 10;
  for (size_t si = 0; si < spec.series.size(); ++si) {
    const ChartSeries& s = spec.series[si];
    const char* color = kPalette[static_cast<size_t>(s.color) % std::size(kPalette)];
    const char* dash = kDashes[static_cast<size_t>(s.dash) % std::size(kDashes)];
    o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"{}/>\n", num(lx),
                     num(y), num(lx + 26), num(y), color, *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "");
    o += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>\n", num(lx + 13), num(y), color);
    const std::vector<std::string>& lines = legend[si];
    if (lines.size() == 1) {
      o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"13\" fill=\"#222222\">{}</text>\n", num(lx + kLegendText),
                       num(y + 4), xml_text(lines[0]));
    } else {
      o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"13\" fill=\"#222222\">", num(lx + kLegendText), num(y + 4));
      for (size_t i = 0; i < lines.size(); ++i)
        o += fmt::format("<tspan x=\"{}\"{}>{}</tspan>", num(lx + kLegendText), i == 0 ? "" : " dy=\"15\"",
                         xml_text(lines[i]));
      o += "</text>\n";
    }
    y += 22 + 15 * static_cast<double>(lines.size() - 1);
  }
  o += "</svg>\n";
  return o;
}

}  // namespace impsim
