// Every failure says which file, where and why, through the binary: under
// --quiet one line per failure on standard error; in a report of several
// files a header per file, a `file` in every JSON report and the file on
// every failing line; under GitHub Actions an annotation for every kind of
// failure, escaped as the runner reads it back, and the step summary's list.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"

using impsim::test::kSource;
using impsim::test::kBin;

namespace {


// test::kProbeScenario named and at k = 4, with exact counts and budgets
// that hold there (lookups per probe: before k*(previous+1) = 64, after
// k = 4); a file of several lines, so that a failure's line is tested too.
const std::string kProbe = [] {
  std::string text = impsim::test::kProbeScenario;
  const std::string params = R"("params": {"k": 1})";
  text.replace(text.find(params), params.size(), R"("name": "probe_cost", "params": {"k": 4})");
  text.insert(text.rfind("\n}"), R"(,
  "expect": {
    "before": {"probe.lookups": 64},
    "after": {"probe.lookups": {"<=": 4}}
  })");
  return text + "\n";
}();

using impsim::test::sh_word;
using impsim::test::Split;

// `text` written as the file `path`, its folder made if need be.
std::string write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// "LINE:COL" of the first byte of `needle` in `text` (ASCII: a column is a byte).
std::string place(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  int line = 1;
  size_t start = 0;
  for (size_t i = 0; i < at; ++i)
    if (text[i] == '\n') {
      ++line;
      start = i + 1;
    }
  return std::to_string(line) + ":" + std::to_string(at - start + 1);
}

std::string line_of(const std::string& line_col) { return line_col.substr(0, line_col.find(':')); }

// The binary run in `cwd` with `env` assignments first (no GitHub variable
// but those), standard output and standard error apart.
Split binary(const std::string& args, const std::string& env = "", const std::string& cwd = kSource) {
  return impsim::test::shell_split("cd " + sh_word(cwd) + " && env -u GITHUB_ACTIONS -u GITHUB_STEP_SUMMARY " + env +
                                   " " + kBin + " " + args);
}

// A workflow command as the GitHub runner reads it (actions/runner,
// src/Runner.Common/ActionCommand.cs, TryParseV2): `::NAME PROPS::DATA`,
// PROPS split at `,`, each at its first `=`; then the documented unescaping,
// UnescapeProperty (%0D, %0A, %3A, %2C, %25, in that order) and
// UnescapeData (%0D, %0A, %25).
struct Annotation {
  std::string name;
  std::map<std::string, std::string> props;
  std::string data;
};

std::string unescape(std::string s, bool property) {
  std::vector<std::pair<std::string, std::string>> mappings = {{"%0D", "\r"}, {"%0A", "\n"}};
  if (property) {
    mappings.push_back({"%3A", ":"});
    mappings.push_back({"%2C", ","});
  }
  mappings.push_back({"%25", "%"});
  for (auto& [from, to] : mappings)
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

std::vector<Annotation> annotations(const std::string& output) {
  std::vector<Annotation> out;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("::")) continue;
    size_t end = line.find("::", 2);
    if (end == std::string::npos) continue;
    std::string info = line.substr(2, end - 2);
    Annotation a;
    a.data = unescape(line.substr(end + 2), false);
    size_t space = info.find(' ');
    a.name = info.substr(0, space);
    if (space != std::string::npos) {
      std::istringstream props(info.substr(space + 1));
      std::string prop;
      while (std::getline(props, prop, ',')) {
        size_t eq = prop.find('=');
        REQUIRE(eq != std::string::npos);
        a.props[prop.substr(0, eq)] = unescape(prop.substr(eq + 1), true);
      }
    }
    out.push_back(a);
  }
  return out;
}

}  // namespace

TEST_CASE("--quiet silences success only: every failure is one line on standard error, with its file, place and why") {
  const std::string dir = impsim::test::scratch_subdir("quiet");
  const std::string probe = write(dir + "/probe_cost.json", kProbe);
  const std::string before_at = place(kProbe, "64}"), after_at = place(kProbe, "{\"<=\": 4}");

  // Success: nothing at all.
  Split ok = binary("run " + probe + " --quiet");
  CHECK(ok.status == 0);
  CHECK(ok.out.empty());
  CHECK(ok.err.empty());

  // A failed expectation (exact, and a budget): where the value sits.
  const std::string failed = probe + ":" + before_at + ": FAILED before probe.lookups [k=5]: expected 64, got 325\n" +
                             probe + ":" + after_at + ": FAILED after probe.lookups [k=5]: expected <= 4, got 5\n";
  for (const std::string cmd : {"run", "compare"}) {
    CAPTURE(cmd);
    Split r = binary(cmd + " " + probe + " --set k=5 --quiet");
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err == failed);
  }
  std::string broken = kProbe;
  broken.replace(broken.find("64}"), 2, "65");
  write(dir + "/broken.json", broken);
  Split sweep = binary("sweep " + dir + "/broken.json --param k --values 3,4 --quiet");
  CHECK(sweep.status == 1);
  CHECK(sweep.err == dir + "/broken.json:" + before_at + ": FAILED before probe.lookups [k=4]: expected 65, got 64\n");

  // A run stopped by a limit: at its step, with the limit and how to raise it,
  // on the terminal and under GitHub Actions alike (standard output stays empty).
  const std::string nested = impsim::test::read_file(kSource + "/scenarios/nested_guards.json");
  const std::string stopped = "scenarios/nested_guards.json:" + place(nested, "{\"find_spec\": \"pkg.missing\"") +
                              ": before [k=12]: stopped: limit max-events reached at /program/0/body/1: 1000 "
                              "simulated events (finder asks + toggles); raise it with --max-events\n";
  for (const std::string env : {"", "GITHUB_ACTIONS=true"}) {
    CAPTURE(env);
    Split r = binary("run scenarios/nested_guards.json --set k=12 --max-events 1000 --quiet", env);
    CHECK(r.status == 3);
    CHECK(r.out.empty());
    CHECK(r.err.starts_with(stopped));
  }
  for (const std::string& cmd : {std::string("trace"), "explore -o " + dir + "/page.html"}) {
    CAPTURE(cmd);
    Split r = binary(cmd + " scenarios/nested_guards.json --set k=12 --max-events 1000 --variant before --quiet");
    CHECK(r.status == 3);
    CHECK(r.err == stopped);
  }

  // The program raised where the scenario does not allow it: at the step.
  const std::string raises_text =
      "{\n  \"impsim\": 1, \"name\": \"raises\", \"tree\": {\"pkg\": {}},\n  \"program\": [\n    {\"import\": "
      "\"pkg\"},\n    {\"import\": \"nope\"}\n  ]\n}\n";
  const std::string raises = write(dir + "/raises.json", raises_text);
  Split r = binary("run " + raises + " --variant after --quiet");
  CHECK(r.status == 1);
  CHECK(r.err == raises + ":" + place(raises_text, "{\"import\": \"nope\"}") +
                     ": after: raised ModuleNotFoundError: No module named 'nope'\n");

  // Errors were always said; under --quiet still one line each.
  const std::string typo = write(dir + "/typo.json", "{\"impsim\": 1, \"nmae\": \"t\", \"tree\": {}, \"program\": []}");
  Split v = binary("validate " + typo + " --quiet");
  CHECK(v.status == 2);
  CHECK(v.err.starts_with("impsim: error: " + typo + ":1:15: at /nmae: unknown key \"nmae\""));
  Split o = binary("sweep " + probe + " --param k --values 4 --svg /nonexistent_dir/x.svg --quiet");
  CHECK(o.status == 4);
  CHECK(o.err.starts_with("impsim: error: --svg /nonexistent_dir/x.svg: "));
}

TEST_CASE("a report of several files says which file each report is, and every failing line names its file") {
  const std::string dir = impsim::test::scratch_subdir("several");
  // Two scenarios of one name, in two folders; the second fails at k = 4.
  const std::string a = write(dir + "/a/probe_cost.json", kProbe);
  std::string failing = kProbe;
  failing.replace(failing.find("64}"), 2, "65");
  const std::string b = write(dir + "/b/probe_cost.json", failing);
  const std::string at = place(failing, "65}");

  Split text = binary("run " + a + " " + b);
  CHECK(text.status == 1);
  CHECK(text.out.starts_with("==> " + a + " <==\nprobe_cost\n\n"));
  CHECK(text.out.find("\n\n==> " + b + " <==\nprobe_cost\n\n") != std::string::npos);
  CHECK(text.out.find("\n  " + b + ":" + at + ": FAILED before probe.lookups [k=4]: expected 65, got 64\n") !=
        std::string::npos);
  // One file: the command line named it, and its first line is the report's as ever.
  CHECK(binary("run " + a).out.starts_with("probe_cost\n\n"));
  // Markdown: a heading per file above the report's own.
  Split md = binary("run " + a + " " + b + " --format markdown");
  CHECK(md.out.starts_with("## " + a + "\n\n### impsim run: probe_cost\n"));
  CHECK(md.out.find("\n## " + b + "\n\n### impsim run: probe_cost\n") != std::string::npos);
  CHECK(md.out.find("  " + b + ":" + at + ": FAILED before") != std::string::npos);

  // JSON: every report of run, compare and sweep carries its file.
  for (const std::string cmd : {"run", "compare", "sweep --param k --values 4"}) {
    CAPTURE(cmd);
    nlohmann::json j = nlohmann::json::parse(binary(cmd + " " + a + " " + b + " --json").out);
    REQUIRE(j["reports"].size() == 2);
    CHECK(j["reports"][0]["file"] == a);
    CHECK(j["reports"][1]["file"] == b);
    CHECK(j["reports"][1]["exit_status"] == 1);
    CHECK(nlohmann::json::parse(binary(cmd + " " + a + " --json").out)["file"] == a);
  }
  // A list (validate) names the file on each line, and a trace format of its
  // own (DOT) has no room for a header; a text trace has one.
  CHECK(binary("validate " + a + " " + b).out.starts_with(a + ": ok"));
  CHECK(binary("trace " + a + " " + b + " --format dot").out.find("==>") == std::string::npos);
  CHECK(binary("trace " + a + " " + b + " --max-lines 5").out.starts_with("==> " + a + " <==\n"));

  // Standard input is <stdin> in every report and error, validate's too.
  for (const std::string cmd : {"run", "validate"}) {
    CAPTURE(cmd);
    CHECK(nlohmann::json::parse(binary(cmd + " - --json < " + a).out)["file"] == "<stdin>");
  }
  CHECK(binary("validate - < " + a).out.starts_with("<stdin>: ok"));
}

TEST_CASE("under GitHub Actions every failure is an annotation at its place, escaped as the runner reads it, and a line in the step summary") {
  const std::string dir = impsim::test::scratch_subdir("gha");
  // A file name with every character a property must escape.
  const std::string probe = write(dir + "/50%,pro:be.json", kProbe);
  const std::string typo = write(dir + "/typo.json", "{\"impsim\": 1, \"nmae\": \"t\", \"tree\": {}, \"program\": []}");
  const std::string summary = dir + "/summary.md";
  const std::string env = "GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=" + sh_word(summary);

  Split r = binary("run " + sh_word(probe) + " " + typo + " --set k=5", env);
  CAPTURE(r.out);
  CAPTURE(r.err);
  CHECK(r.status == 2);
  // Every annotation on standard error, in order: the expectations, then
  // the error; standard output holds the reports alone, each file's a
  // group of the log, folded under its name (escaped as a message).
  std::vector<Annotation> groups = annotations(r.out);
  REQUIRE(groups.size() == 4);
  CHECK(groups[0].name == "group");
  CHECK(groups[0].data == "impsim run " + probe);
  CHECK(groups[1].name == "endgroup");
  CHECK(groups[2].name == "group");
  CHECK(groups[2].data == "impsim run " + typo);
  CHECK(groups[3].name == "endgroup");
  std::vector<Annotation> all = annotations(r.err);
  REQUIRE(all.size() == 3);
  const std::vector<Annotation> out(all.begin(), all.begin() + 2), err(all.begin() + 2, all.end());
  CHECK(r.err.find("::error file=" + dir + "/50%25%2Cpro%3Abe.json,line=") != std::string::npos);
  const Annotation& exact = out[0];
  CHECK(exact.name == "error");
  const std::string before_at = place(kProbe, "64}");
  CHECK(exact.props == std::map<std::string, std::string>{{"file", probe},
                                                          {"line", line_of(before_at)},
                                                          {"col", before_at.substr(before_at.find(':') + 1)},
                                                          {"title", "impsim expectation"}});
  CHECK(exact.data == "probe_cost: before probe.lookups [k=5]: expected 64, got 325");
  CHECK(out[1].props.at("line") == line_of(place(kProbe, "{\"<=\": 4}")));
  CHECK(err[0].props == std::map<std::string, std::string>{
                            {"file", typo}, {"line", "1"}, {"col", "15"}, {"title", "impsim invalid scenario"}});
  CHECK(err[0].data.starts_with(typo + ":1:15: at /nmae: unknown key \"nmae\""));
  // A message's % is escaped too, and the runner reads it back.
  std::string percent = kProbe;
  percent.replace(percent.find("probe_cost"), 10, "50% of it");
  Split p = binary("run " + write(dir + "/percent.json", percent) + " --set k=5 --quiet", env);
  CHECK(p.err.find(",title=impsim expectation::50%25 of it: before probe.lookups") != std::string::npos);
  CHECK(annotations(p.err).at(0).data.starts_with("50% of it: before probe.lookups [k=5]"));

  // The summary: the report, then the command's failures, as standard error says them.
  const std::string md = impsim::test::read_file(summary);
  CHECK(md.starts_with("### impsim run: probe_cost\n"));
  CHECK(md.find("### impsim run: 3 failures\n\n```text\n" + probe + ":" + before_at + ": FAILED before probe.lookups [k=5]: "
                "expected 64, got 325\n") != std::string::npos);
  CHECK(md.find("\nimpsim: error: " + typo + ":1:15: at /nmae: unknown key") != std::string::npos);

  // A limit, at the step's line; an exception; an output error; a flag.
  const std::string nested = impsim::test::read_file(kSource + "/scenarios/nested_guards.json");
  const std::string step = place(nested, "{\"find_spec\": \"pkg.missing\"");
  Split limit = binary("run scenarios/nested_guards.json --set k=12 --max-events 1000", env);
  CHECK(limit.status == 3);
  std::vector<Annotation> l = annotations(limit.err);
  REQUIRE(l.size() == 1);
  CHECK(l[0].props == std::map<std::string, std::string>{{"file", "scenarios/nested_guards.json"},
                                                         {"line", line_of(step)},
                                                         {"col", step.substr(step.find(':') + 1)},
                                                         {"title", "impsim limit"}});
  CHECK(l[0].data.starts_with("nested_guards: before [k=12]: stopped: limit max-events reached at /program/0/body/1"));
  // Before the run, a model limit is placed at its step too.
  Split nest = binary("run scenarios/nested_guards.json --set k=3 --max-nest 2", env);
  CHECK(nest.status == 3);
  CHECK(nest.err.starts_with("impsim: error: scenarios/nested_guards.json:" + place(nested, "\"$k\"") +
                             ": at /program/0/nest: limit nest reached"));
  REQUIRE(annotations(nest.err).size() == 1);
  CHECK(annotations(nest.err)[0].props.at("title") == "impsim limit");
  CHECK(annotations(nest.err)[0].props.at("line") == line_of(place(nested, "\"$k\"")));

  const std::string raises_text = "{\"impsim\": 1, \"tree\": {}, \"program\": [{\"import\": \"x\"}]}";
  const std::string raises = write(dir + "/raises.json", raises_text);
  std::vector<Annotation> e = annotations(binary("run " + raises + " --variant before", env).err);
  REQUIRE(e.size() == 1);
  CHECK(e[0].props.at("title") == "impsim exception");
  CHECK(e[0].props.at("line") + ":" + e[0].props.at("col") == place(raises_text, "{\"import\""));
  CHECK(e[0].data == "raises: before: raised ModuleNotFoundError: No module named 'x'");

  Split svg = binary("sweep scenarios/nested_guards.json --param k --values 1,2 --svg /nonexistent_dir/x.svg", env);
  CHECK(svg.status == 4);
  std::vector<Annotation> s = annotations(svg.err);
  REQUIRE(s.size() == 1);
  // The chart is written once the scenario has run: the scenario is the file.
  CHECK(s[0].props == std::map<std::string, std::string>{{"file", "scenarios/nested_guards.json"},
                                                         {"title", "impsim output error"}});

  Split flag = binary("run scenarios/nested_guards.json --engine fats", env);
  CHECK(flag.status == 2);
  REQUIRE(annotations(flag.err).size() == 1);
  CHECK(annotations(flag.err)[0].props == std::map<std::string, std::string>{{"title", "impsim usage error"}});
  CHECK(annotations(flag.err)[0].data.starts_with("--engine fats: unknown engine"));

  // Off GitHub Actions: the same failures, no annotation.
  Split plain = binary("run " + sh_word(probe) + " " + typo + " --set k=5");
  CHECK(plain.status == 2);
  CHECK(annotations(plain.out + plain.err).empty());
}
