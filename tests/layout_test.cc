// Through the binary: text reports fit an 80-column terminal, sweep
// tables group thousands as run's do, and the SVG chart's legend is never
// cut.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "test_util.h"

using impsim::test::kSource;
using impsim::test::kNested;
using impsim::test::kSeed;

using namespace impsim;

namespace {



// The columns of the widest line: its code points.
size_t widest_line(const std::string& text) {
  size_t widest = 0, start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    size_t columns = 0;
    for (size_t i = start; i < nl; ++i) columns += (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    widest = std::max(widest, columns);
    start = nl + 1;
  }
  return widest;
}

}  // namespace

TEST_CASE("text reports fit 80 columns, sweep tables group thousands as run does") {
  for (const std::string& args :
       {"run " + kSeed, "compare " + kSeed, "compare " + kSource + "/scenarios/revisions/enable_blocked_modules.json",
        "run " + kSource + "/scenarios/revisions/enable_blocked_modules.json",
        "sweep " + kNested + " --param k --values 1..8"}) {
    CAPTURE(args);
    CHECK(widest_line(test::impsim(args).out) <= 80);
  }
  // compare's table is cut into blocks of designs, each with the counter column.
  std::string compare = test::impsim("compare " + kSeed).out;
  size_t first = compare.find("counter ");
  REQUIRE(first != std::string::npos);
  CHECK(compare.find("counter ", first + 1) != std::string::npos);
  CHECK(test::impsim("sweep " + kNested + " --param k --values 7").out.find("13,699") != std::string::npos);
}

TEST_CASE("sweep --svg: the legend's names are drawn whole, inside the canvas") {
  std::string svg = test::write_temp("flags_legend.svg", "");
  auto r = test::impsim("sweep " + kNested + " --param k --values 1..3 --variants before,after+idempotent-enable@04efefd "
                        "--counters probe.lookups,probe.comparisons --svg " + svg);
  CHECK(r.status == 0);
  std::string text = impsim::test::read_file(svg);
  std::smatch m;
  REQUIRE(std::regex_search(text, m, std::regex("<svg [^>]*width=\"([0-9.]+)\"")));
  const double width = std::stod(m[1]);
  // The name is whole (its lines joined), and each of its lines, at 7 px a
  // character or more, ends inside the canvas.
  const std::string name = "probe.comparisons, after+idempotent-enable@04efefd";
  std::string joined = std::regex_replace(text, std::regex("</tspan><tspan[^>]*>"), " ");
  REQUIRE(std::regex_search(joined, m, std::regex("<text x=\"([0-9.]+)\"[^>]*>(<tspan[^>]*>)?" +
                                                  std::regex_replace(name, std::regex("[.+]"), "\\$&"))));
  const std::string x = m[1];
  size_t lines = 0;
  const std::regex line("x=\"" + std::regex_replace(x, std::regex("\\."), "\\.") + "\"[^>]*>([^<]+)<");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
    CAPTURE((*it)[1].str());
    CHECK(std::stod(x) + 7.0 * static_cast<double>((*it)[1].length()) <= width);
    ++lines;
  }
  CHECK(lines >= 4);
}
