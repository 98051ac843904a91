// `impsim sweep`: values, the table, expectations re-aligned, the SVG chart.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <tuple>

#include "impsim/reader/read_scenario.h"
#include "impsim/report/report.h"
#include "impsim/report/sweep_chart.h"
#include "test_util.h"

using namespace impsim;

namespace {

const std::string kGoldenNested = std::string(IMPSIM_SOURCE_DIR) + "/tests/golden/nested_guards.json";

std::string squash(const std::string& s) {
  std::string out;
  for (char c : s)
    if (!(c == ' ' && !out.empty() && out.back() == ' ')) out += c;
  return out;
}

std::vector<uint64_t> row(const SweepResult& r, Variant v, const std::string& label, const std::string& counter) {
  std::vector<uint64_t> out;
  for (auto& run : r.run.runs)
    if (run.variant == v)
      for (auto& [name, c] : run.labels)
        if (name == label) out.push_back(counter_value(c, counter).u64());
  return out;
}

}  // namespace

TEST_CASE("sweep values: A..B, A,B,C and both - bad ones refused") {
  CHECK(parse_sweep_values("1..4") == std::vector<int64_t>{1, 2, 3, 4});
  CHECK(parse_sweep_values("3") == std::vector<int64_t>{3});
  CHECK(parse_sweep_values("1,2,5") == std::vector<int64_t>{1, 2, 5});
  CHECK(parse_sweep_values("1..3,8,10..11") == std::vector<int64_t>{1, 2, 3, 8, 10, 11});
  CHECK(parse_sweep_values("-1..1") == std::vector<int64_t>{-1, 0, 1});
  for (std::string bad : {"", "4..2", "1..", "a", "1,,2", "1..2..3", "1.5", "0..100000"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_sweep_values(bad), InputError);
  }
}

TEST_CASE("sweep over k = 1..8: the probe's lookups grow as k(l(k-1)+1) before, as k after") {
  Scenario sc = parse_scenario_file(kGoldenNested);
  SweepOptions o;
  o.param = "k";
  o.values = parse_sweep_values("1..8");
  SweepResult r = run_sweep(sc, o);
  CHECK(row(r, Variant::Before, "probe", "lookups") == std::vector<uint64_t>{1, 4, 15, 64, 325, 1956, 13699, 109600});
  CHECK(row(r, Variant::After, "probe", "lookups") == std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8});
  // The scenario's expectations (k = 1..4) are checked where they apply.
  size_t checked = 0;
  for (auto& run : r.run.runs) {
    checked += run.expectations.size();
    if (run.params.at("k") > 4) CHECK(run.expectations.empty());
  }
  CHECK(checked == 8);
  CHECK(r.run.exit_status() == 0);
  std::string text = squash(report_text(r.run));
  CHECK(text.find("finder registrations in sys.meta_path 1 2 3 4 5 6 7 8\n") != std::string::npos);
  CHECK(text.find("lookups per probe, before 1 4 15 64 325 1,956 13,699 109,600\n") != std::string::npos);
  CHECK(text.find("lookups per probe, after 1 2 3 4 5 6 7 8\n") != std::string::npos);
  CHECK(text.find("expectations: 8/8 hold") != std::string::npos);
}

TEST_CASE("sweep over k = 1..4 prints what impsim run prints for the seed table") {
  auto run = test::impsim("run " + kGoldenNested);
  auto sweep = test::impsim("sweep " + kGoldenNested + " --param k --values 1..4");
  CHECK(run.status == 0);
  CHECK(sweep.status == 0);
  CHECK(sweep.out == run.out);
}

TEST_CASE("sweep: a value whose expectation fails still fails - --counter picks the rows") {
  Scenario sc = parse_scenario_file(kGoldenNested);
  for (auto& e : sc.expect)
    if (e.variant == Variant::Before && e.counter == "probe.lookups") e.values[1] = 5;  // k=2: really 4
  SweepOptions o;
  o.param = "k";
  o.values = {2, 3};
  o.counters = {"lookups", "probe.toggles"};
  SweepResult r = run_sweep(sc, o);
  CHECK(r.run.exit_status() == 1);
  std::string text = squash(report_text(r.run));
  CHECK(text.find("lookups, before ") != std::string::npos);
  CHECK(text.find("probe.toggles, after 4 6\n") != std::string::npos);
  CHECK(text.find("FAILED before probe.lookups [k=2]: expected 5, got 4") != std::string::npos);

  o.counters = {"nope"};
  CHECK_THROWS_AS(run_sweep(sc, o), InputError);
  o.counters = {"nolabel.lookups"};
  CHECK_THROWS_AS(run_sweep(sc, o), InputError);
  o.counters = {};
  o.param = "q";
  CHECK_THROWS_AS(run_sweep(sc, o), InputError);
  o.param = "k";
  o.run.overrides["k"] = 2;
  CHECK_THROWS_AS(run_sweep(sc, o), InputError);
}

TEST_CASE("a swept hook scenario without P and without report: the hook counters are the rows, not lookups") {
  // lookups counts Paddle's finder, which takes no part there: always 0.
  const std::string f = std::string(IMPSIM_SOURCE_DIR) + "/scenarios/zoo/pathfinder_twice.json";
  for (const char* sub : {"run ", "sweep "}) {
    CAPTURE(sub);
    const std::string text = squash(test::impsim(sub + f).out);
    CHECK(text.find(
              "\nextra PathFinder copies 0 1\nsearches, as_is 3 3\nfinder_calls:BuiltinImporter, as_is 3 3\n"
              "finder_calls:FrozenImporter, as_is 3 3\nfinder_calls:PathFinder, as_is 3 5\nmax_depth, as_is 1 1\n") !=
          std::string::npos);
    CHECK(text.find("lookups") == std::string::npos);
    const std::string md = test::impsim(sub + f + " --format markdown").out;
    CHECK(md.find("| `finder_calls:PathFinder, as_is` | 3 | 5 |") != std::string::npos);
    CHECK(md.find("lookups") == std::string::npos);
  }
  // A hook object of its own comes first among the per-object rows.
  Scenario sc = parse_scenario_file(std::string(IMPSIM_SOURCE_DIR) + "/scenarios/zoo/pyximport_cython3.json");
  sc.report.clear();
  std::vector<std::string> rows;
  for (const ReportRow& r : report_rows(sc)) rows.push_back(r.counter);
  CHECK(rows == std::vector<std::string>{"searches", "finder_calls:pyimport", "finder_calls:pyx",
                                         "finder_calls:BuiltinImporter", "finder_calls:FrozenImporter",
                                         "finder_calls:PathFinder", "max_depth"});
  // Where P takes part, lookups means something and stays the default.
  Scenario paddle = parse_scenario(R"({"impsim": 1, "tree": {"a": {}}, "meta_path": ["P", "PathFinder"],
    "program": [{"import": "a"}]})",
                                   "inline.json");
  REQUIRE(report_rows(paddle).size() == 1);
  CHECK(report_rows(paddle)[0].counter == "lookups");
}

TEST_CASE("a parameter with one constant applied counts as the literal it stands for") {
  // "install once, then N-1 more times", run side by side with the literal.
  auto scenario = [](const std::string& repeat) {
    return R"({"impsim": 1, "name": "copies", "tree": {"a": {}},
      "hooks": {"w": {"claims": {"all": true}, "find_spec": [{"reenter": "find_spec"}], "guard": "global_set"}},
      "finders": {"w1": {"hook": "w"}}, "params": {"N": 1},
      "program": [{"install": "w1"}, {"install": "w1", "repeat": )" +
           repeat + R"(}, {"import": "a"}, {"import": "b", "optional": true}]})";
  };
  auto runs = [](const std::string& file, int n) {
    const auto r = test::impsim("run --format json " + file + " --set N=" + std::to_string(n));
    REQUIRE(r.status == 0);
    return r.out.substr(r.out.find("\"runs\""));
  };
  for (auto [field, n, literal] : {std::tuple{"\"$N-1\"", 1, 0},
                                   {"\"$N-1\"", 2, 1},
                                   {"\"$N-1\"", 5, 4},
                                   {"\"$N+2\"", 1, 3},
                                   {"\"$N*3\"", 2, 6},
                                   {"\"$N-0\"", 4, 4}}) {
    CAPTURE(field);
    CAPTURE(n);
    const std::string expr = test::write_temp("param_expr.json", scenario(field));
    const std::string lit = test::write_temp("param_literal.json", scenario(std::to_string(literal)));
    CHECK(runs(expr, n) == runs(lit, n));
  }
  // The copies count: a count read as another would not go unseen.
  CHECK(runs(test::write_temp("param_0.json", scenario("0")), 1) !=
        runs(test::write_temp("param_1.json", scenario("1")), 1));
  // Past int64 is an error, not a wrapped count.
  const std::string big = test::write_temp("param_big.json", scenario("\"$N*999999999\""));
  test::impsim_says("run " + big + " --set N=9223372036854775807", 2, "reads $N*999999999 = out of range");
}

TEST_CASE("sweep --svg writes a well-formed, deterministic SVG chart") {
  std::string svg = test::write_temp("sweep.svg", "");
  auto r = test::impsim("sweep " + kGoldenNested + " --param k --values 1..8 --svg " + svg);
  CHECK(r.status == 0);
  std::ifstream in(svg);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  CHECK(text.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  // The axis reaches a million: its decades are 1eN.
  for (const std::string want : {">109,600<", ">13,699<", ">before<", ">after<", ">1e3<", ">1e6<", "(log scale)",
                                 "finder registrations in sys.meta_path (k)"}) {
    CAPTURE(want);
    CHECK(text.find(want) != std::string::npos);
  }
  CHECK(text.find("<script") == std::string::npos);
  CHECK(text.find("href") == std::string::npos);  // self-contained
  if (std::system("command -v python3 >/dev/null 2>&1") == 0) {
    int rc =
        std::system(("python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " + svg).c_str());
    CHECK(rc == 0);
  } else {
    MESSAGE("python3 is not installed: the SVG's XML is not parsed");
  }
  // The same chart twice, byte for byte.
  Scenario sc = parse_scenario_file(kGoldenNested);
  SweepOptions o;
  o.param = "k";
  o.values = parse_sweep_values("1..8");
  CHECK(svg_line_chart(sweep_chart(run_sweep(sc, o))) == text);
}

TEST_CASE("svg chart: zero values, a missing point and one x value still draw") {
  ChartSpec spec;
  spec.title = "t <&>";
  spec.x = {3};
  spec.series.push_back({"zero", {uint64_t{0}}, 0, 0, false});
  spec.series.push_back({"none", {std::nullopt}, 1, 1, true});
  std::string s = svg_line_chart(spec);
  CHECK(s.find("t &lt;&amp;&gt;") != std::string::npos);
  CHECK(s.find("fill=\"#ffffff\" stroke-width=\"2\"") != std::string::npos);  // the hollow zero point
  CHECK(s.find("</svg>") != std::string::npos);
}

TEST_CASE("svg chart: one form of label per axis, and no two value labels on each other") {
  ChartSpec spec;
  spec.x = {1, 2, 3};
  // Close values in two series at every x, up to ten million.
  
  spec.series.push_back({"b", {uint64_t{101}, uint64_t{50'100}, uint64_t{10'000'001}}, 1, 1, false});
  const std::string s = svg_line_chart(spec);
  // The y axis reaches 1e7: every decade is 1eN, none grouped.
  CHECK(s.find(">1e7</text>") != std::string::npos);
  CHECK(s.find(">1e2</text>") != std::string::npos);
  CHECK(s.find(">100</text>") == std::string::npos);
  CHECK(s.find(">1,000,000</text>") == std::string::npos);
  // Each value label (font-size 11) has a box of its own.
  struct Label {
    double x, y;
    size_t chars;
  };
  std::vector<Label> labels;
  const std::regex text_re(R"re(<text x="([0-9.]+)" y="([0-9.]+)" font-size="11"[^>]*>([^<]*)</text>)re");
  for (std::sregex_iterator it(s.begin(), s.end(), text_re), end; it != end; ++it)
    labels.push_back({std::stod((*it)[1]), std::stod((*it)[2]), static_cast<size_t>((*it)[3].length())});
  CHECK(labels.size() >= 3);
  for (size_t i = 0; i < labels.size(); ++i)
    for (size_t j = i + 1; j < labels.size(); ++j) {
      const Label &a = labels[i], &b = labels[j];
      const bool x_apart = std::abs(a.x - b.x) >= 3.3 * static_cast<double>(a.chars + b.chars) + 4;
      const bool y_apart = std::abs(a.y - b.y) >= 12;
      CHECK((x_apart || y_apart));
    }
  // A small axis keeps its digits.
  ChartSpec small;
  small.x = {1};
  small.series.push_back({"a", {uint64_t{500}}, 0, 0, false});
  const std::string t = svg_line_chart(small);
  CHECK(t.find(">100</text>") != std::string::npos);
  CHECK(t.find(">1e") == std::string::npos);
}

