// The command line: budgets and bless, GitHub Actions
// annotations and step summary, did-you-mean, consistent flags, and the man
// page and completions generated from the --help definitions.
// tools/check/check_reports.py checks every subcommand in every format against
// the report schema.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "test_util.h"

using impsim::test::kSource;

using namespace impsim;

namespace {



// seed_incident with its expectations replaced by `expect`.
std::string seed_with(const std::string& name, const std::string& expect) {
  std::string text = impsim::test::read_file(kSource + "/scenarios/seed_incident.json");
  size_t at = text.find("\"expect\"");
  REQUIRE(at != std::string::npos);
  return test::write_temp(name, text.substr(0, at) + "\"expect\": " + expect + "\n}\n");
}

}  // namespace

TEST_CASE("budgets: a bound on a count and a ratio to another variant") {
  // The incident's counts, measured by impsim run: before 13,699 probe
  // lookups, after 7 (docs/model.md, ground truth; scenarios/seed_incident.json).
  std::string ok = seed_with("budget_ok.json",
                             R"({"after": {"probe.lookups": {"<=": 7}, "lookups": {">=": 1, "<": 100},
                                  "probe.comparisons": {"ratio_to": "before", "<=": "1/1000"}}})");
  auto r = test::impsim("run " + ok);
  CAPTURE(r.out);
  CHECK(r.status == 0);
  CHECK(r.out.find("expectations: 3/3 hold") != std::string::npos);

  // 7 / 13,699 is about 1/1,957: "at least 2,000x cheaper" fails, 1,957x holds.
  std::string ratio = seed_with("budget_ratio.json",
                                R"({"after": {"probe.lookups": {"ratio_to": "before", "<=": "1/2000"},
                                              "probe.walks": {"ratio_to": "before", "<=": 0.000511}}})");
  r = test::impsim("run " + ratio);
  CAPTURE(r.out);
  CHECK(r.status == 1);
  CHECK(r.out.find("FAILED after probe.lookups [filler=3298, k=7]: expected <= x1/2,000 of before, got 7 (x1/1,957 of "
                   "before's 13,699)") != std::string::npos);
  CHECK(r.out.find("expectations: 1/2 hold") != std::string::npos);  // 14 / 27,398 = 0.000511
  auto j = nlohmann::json::parse(test::impsim("run " + ratio + " --format json").out);
  auto& ex = j["runs"][1]["expectations"];
  CHECK(ex[0]["budget"] == nlohmann::json({{"ratio_to", "before"}, {"<=", "1/2000"}}));
  CHECK(ex[0]["baseline"] == 13699);
  CHECK(ex[0]["ok"] == false);

  // A budget that names no bound, or a variant the scenario does not run, is refused.
  r = test::impsim("validate " + seed_with("budget_bad.json", R"({"after": {"lookups": {"ratio_to": "before"}}})"));
  CHECK(r.status == 2);
  CHECK(r.out.find("expected a budget") != std::string::npos);
  r = test::impsim("validate " + seed_with("budget_bad2.json", R"({"after": {"lookups": {"ratio_to": "nope", "<": 1}}})"));
  CHECK(r.status == 2);
  CHECK(r.out.find("/expect/after/lookups/ratio_to") != std::string::npos);
}

TEST_CASE("compare honours expectations as run does") {
  std::string failing = seed_with("compare_fail.json", R"({"after": {"probe.lookups": 8}})");
  auto run = test::impsim("run " + failing);
  auto cmp = test::impsim("compare " + failing + " --variants before,after");
  CAPTURE(cmp.out);
  CHECK(run.status == 1);
  CHECK(cmp.status == 1);
  CHECK(cmp.out.find("FAILED after probe.lookups [filler=3298, k=7]: expected 8, got 7") != std::string::npos);
  auto j = nlohmann::json::parse(test::impsim("compare " + failing + " --variants before,after --json").out);
  CHECK(j["exit_status"] == 1);
  CHECK(j["expectations"][0]["ok"] == false);
  CHECK(j["expectations"][0]["variant"] == "after");
}

TEST_CASE("under GitHub Actions a failed expectation is annotated at its line and the step summary gets the report") {
  std::string failing = seed_with("gha.json", "{\n    \"after\": {\n      \"probe.lookups\": 8\n    }\n  }");
  std::string text = impsim::test::read_file(failing);
  // The line of the entry, counted here from the file itself.
  int line = 1;
  for (size_t i = 0; i < text.find("\"probe.lookups\": 8"); ++i) line += text[i] == '\n';
  std::string summary = test::write_temp("summary.md", "");
  auto r = test::shell_split("GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=" + summary + " " + IMPSIM_BINARY + " run " +
                             failing);
  CAPTURE(r.err);
  CHECK(r.status == 1);
  // On standard error, always: standard output holds the report alone.
  CHECK(r.out.find("::error") == std::string::npos);
  CHECK(r.err.find("::error file=" + failing + ",line=" + std::to_string(line) +
                   ",col=24,title=impsim expectation::seed_incident: after probe.lookups [filler=3298, k=7]: expected "
                   "8, got 7\n") != std::string::npos);
  std::string md = impsim::test::read_file(summary);
  CHECK(md.starts_with("### impsim run: seed_incident\n"));
  CHECK(md.find("| `probe.lookups` | 13,699 | 7 | x1,957 |") != std::string::npos);
  CHECK(md.find("FAILED after probe.lookups") != std::string::npos);
  // Under --format json the annotations go to standard error: standard
  // output stays one JSON object.
  auto j = test::shell("GITHUB_ACTIONS=true " + std::string(IMPSIM_BINARY) + " run " + failing + " --json 2>/dev/null");
  CHECK(nlohmann::json::parse(j.out)["exit_status"] == 1);
  // Elsewhere, no annotation.
  auto plain = test::shell("GITHUB_ACTIONS= " + std::string(IMPSIM_BINARY) + " run " + failing);
  CHECK(plain.out.find("::error") == std::string::npos);
}

TEST_CASE("under GitHub Actions a trace of a run that raises is still one document on standard output") {
  // The ::error line used to follow the document on standard output:
  // `trace --format chrome > t.json` in CI wrote invalid JSON.
  const std::string raises = test::write_temp("raises.json", R"({"impsim": 1, "tree": {}, "program": [{"import": "nope"}]})");
  for (const char* format : {"chrome", "json", "dot", "importtime", "text"}) {
    CAPTURE(format);
    auto r = test::shell_split("GITHUB_ACTIONS=true " + std::string(IMPSIM_BINARY) + " trace " + raises +
                               " --variant before --format " + format);
    CHECK(r.status == 1);
    CHECK(r.out.find("::error") == std::string::npos);
    CHECK(r.err.find("::error file=" + raises) != std::string::npos);
    if (std::string_view(format) == "chrome" || std::string_view(format) == "json")
      CHECK_NOTHROW(nlohmann::json::parse(r.out));
  }
}

TEST_CASE("a $GITHUB_STEP_SUMMARY that cannot be written is a warning, never a wait") {
  const std::string dir = test::scratch_subdir("fifo");
  const std::string fifo = dir + "/summary";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  // A FIFO nobody reads used to hold the command in open() for good; the
  // timeout makes a regression fail instead of hanging the suite.
  auto r = test::shell_split("GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=" + fifo + " timeout 20 " +
                             std::string(IMPSIM_BINARY) + " run " + test::kNested);
  CHECK(r.status == 0);
  CHECK(r.out.find("expectations: 8/8 hold") != std::string::npos);
  CHECK(r.err.find("impsim: warning: $GITHUB_STEP_SUMMARY: cannot append to " + fifo +
                   ": a FIFO that no process is reading; the step summary is left out") != std::string::npos);
  // A folder: the same warning, the run the same.
  auto folder = test::shell_split("GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=" + dir + " " +
                                  std::string(IMPSIM_BINARY) + " run " + test::kNested);
  CHECK(folder.status == 0);
  CHECK(folder.err.find("impsim: warning: $GITHUB_STEP_SUMMARY") != std::string::npos);
}

TEST_CASE("run --bless on a copy of each shipped scenario: the expectations then hold, and files whose held are unchanged") {
  for (const std::string& path : test::shipped_scenarios()) {
    CAPTURE(path);
    std::string copy = test::write_temp("bless_" + std::filesystem::path(path).filename().string(), impsim::test::read_file(path));
    bool held = test::impsim("run " + test::write_temp("bless_orig.json", impsim::test::read_file(path))).status == 0;
    bool has_expect = nlohmann::json::parse(impsim::test::read_file(path)).contains("expect");
    auto b = test::impsim("run " + copy + " --bless");
    CHECK(b.status == 0);
    auto again = test::impsim("run " + copy);
    CHECK(again.status == 0);
    if (held && has_expect) CHECK(impsim::test::read_file(copy) == impsim::test::read_file(path));
    if (!has_expect) CHECK(nlohmann::json::parse(impsim::test::read_file(copy)).contains("expect"));
  }
}

TEST_CASE("run --bless rewrites only the wrong values, keeps budgets, and refuses partial counts") {
  std::string text = impsim::test::read_file(kSource + "/scenarios/nested_guards.json");
  std::string wrong = text;
  size_t at = wrong.find("[1, 4, 15, 64]");
  REQUIRE(at != std::string::npos);
  wrong.replace(at, 14, "[1, 5, 15, 99]");
  std::string path = test::write_temp("bless_wrong.json", wrong);
  CHECK(test::impsim("run " + path).status == 1);
  auto b = test::impsim("run " + path + " --bless");
  CAPTURE(b.out);
  CHECK(b.status == 0);
  CHECK(b.out.find("blessed: 2 values rewritten, 0 added") != std::string::npos);
  CHECK(impsim::test::read_file(path) == text);

  std::string budget = seed_with("bless_budget.json", R"({"after": {"probe.lookups": {"<=": 5}, "lookups": 1}})");
  b = test::impsim("run " + budget + " --bless");
  CHECK(b.status == 1);  // the budget is a decision: kept, and still failing
  // ...and the bless says so, rather than exit 1 reading as its own failure.
  CHECK(b.out.find("blessed: 1 value rewritten, 0 added; 1 expectation still fails (listed below): --bless writes "
                   "exact counts and keeps every budget") != std::string::npos);
  std::string after = impsim::test::read_file(budget);
  CHECK(after.find("{\"<=\": 5}") != std::string::npos);
  CHECK(after.find("\"lookups\": 8") != std::string::npos);

  std::string before = impsim::test::read_file(kSource + "/scenarios/nested_guards.json");
  std::string stopped = test::write_temp("bless_stopped.json", before);
  auto s = test::impsim("run " + stopped + " --bless --max-events 10");
  CHECK(s.status == 3);
  CHECK(s.out.find("not rewritten") != std::string::npos);
  CHECK(impsim::test::read_file(stopped) == before);
  CHECK(test::impsim("run " + stopped + " --bless --set k=2").status == 2);
}

TEST_CASE("one spelling of a flag everywhere") {
  const std::string nested = kSource + "/scenarios/nested_guards.json";
  // --variant: repeatable and comma lists, in run and compare alike.
  auto a = test::impsim("run " + nested + " --variant before --variant after");
  auto b = test::impsim("run " + nested + " --variants before,after");
  CHECK(a.status == 0);
  CHECK(a.out == b.out);
  auto c1 = test::impsim("compare " + nested + " --variant before --variant after");
  auto c2 = test::impsim("compare " + nested + " --variants before,after");
  CHECK(c1.out == c2.out);
  CHECK(test::impsim("run " + nested + " --variant before,before").status == 2);
  // --set: a parameter given twice is an error, as a variant given twice is.
  auto s = test::impsim("run " + nested + " --set k=2 --set k=3");
  CHECK(s.status == 2);
  CHECK(s.out.find("k is set twice") != std::string::npos);
  // --values: a value given twice is an error.
  auto v = test::impsim("sweep " + nested + " --param k --values 1,2,2");
  CHECK(v.status == 2);
  CHECK(v.out.find("2 is given twice") != std::string::npos);
  // compare --counters picks rows.
  auto cc = test::impsim("compare " + nested + " --variants before,after --counters lookups,probe.lookups --set k=2");
  CAPTURE(cc.out);
  CHECK(cc.out.find("counter        before        after\nlookups             6  3 (x1/2.00)\nprobe.lookups       4  2 "
                    "(x1/2.00)\n") != std::string::npos);
  CHECK(test::impsim("compare " + nested + " --counters lookup").status == 2);
}

TEST_CASE("a sweep value past --max-nest marks its cells, as --max-events does, instead of ending the table") {
  auto r = test::impsim("sweep " + kSource + "/scenarios/nested_guards.json --param k --values 1..3 --max-nest 2");
  CAPTURE(r.out);
  CHECK(r.status == 3);
  CHECK(r.out.find("lookups per probe, before              1  4  limit\n") != std::string::npos);
  std::string text = r.out;  // the line wraps at 80 columns
  for (size_t nl; (nl = text.find("\n      ")) != std::string::npos;) text.replace(nl, 7, " ");
  CHECK(text.find("before: stopped: limit nest reached at /program/0/nest: nest is 3; the limit is 2 (--max-nest)") !=
        std::string::npos);
}

TEST_CASE("help, usage and did-you-mean") {
  auto bare = test::impsim("");
  CHECK(bare.status == 2);
  CHECK(bare.out.find("Subcommands:") != std::string::npos);
  auto typo = test::impsim("runn x.json");
  CHECK(typo.status == 2);
  CHECK(typo.out.find("unknown subcommand 'runn' (did you mean 'run'?)") != std::string::npos);
  auto help = test::impsim("help compare");
  CHECK(help.status == 0);
  CHECK(help.out.find("--counters") != std::string::npos);
  std::string bad = test::write_temp("typo_key.json", R"({"impsim": 1, "tree": {}, "program": [], "nmae": "x"})");
  auto key = test::impsim("validate " + bad);
  CHECK(key.status == 2);
  CHECK(key.out.find("unknown key \"nmae\" in a scenario (did you mean \"name\"?); expected one of: ") !=
        std::string::npos);
}

TEST_CASE("the man page and the completions are what the --help definitions generate") {
  // Regenerate: build/impsim help --man > docs/impsim.1 (and --completion bash|zsh).
  CHECK(test::impsim("help --man").out == impsim::test::read_file(kSource + "/docs/impsim.1"));
  CHECK(test::impsim("help --completion bash").out == impsim::test::read_file(kSource + "/docs/completion/impsim.bash"));
  CHECK(test::impsim("help --completion zsh").out == impsim::test::read_file(kSource + "/docs/completion/_impsim"));
}

TEST_CASE("--quiet prints no report, the exit status says it") {
  std::string failing = seed_with("quiet.json", R"({"after": {"probe.lookups": 8}})");
  auto q = test::shell(std::string(IMPSIM_BINARY) + " run " + failing + " --quiet 2>/dev/null");
  CHECK(q.status == 1);
  CHECK(q.out.empty());
}

TEST_CASE("budgets are exact past 2^64: the fast engine's counts at k = 30 against bounds and ratios") {
  // lookups(k) = k * (lookups(k-1) + 1) (docs/model.md): at k = 30 the before
  // probe makes about 7.2e32 lookups, the after probe 30.
  std::string text = impsim::test::read_file(kSource + "/scenarios/nested_guards.json");
  size_t sweep = text.find("\"sweep\"");
  size_t sweep_end = text.find("\"sys_modules\"");
  size_t expect = text.find("\"expect\"");
  REQUIRE(sweep != std::string::npos);
  std::string big = text.substr(0, sweep) + text.substr(sweep_end, expect - sweep_end) +
                    R"("expect": {"before": {"probe.lookups": {">": 18446744073709551615}},
                                  "after": {"probe.lookups": {"ratio_to": "before", "<": "1/100000000000000000"}}}})";
  std::string path = test::write_temp("big_budget.json", big);
  auto r = test::impsim("run " + path + " --engine fast --set k=30");
  CAPTURE(r.out);
  CHECK(r.status == 0);
  CHECK(r.out.find("expectations: 2/2 hold") != std::string::npos);
  // The same bound the other way round fails, and says by how much.
  size_t gt = big.find("{\">\": 18446744073709551615}");
  big.replace(gt, 3, "{\"<=");
  r = test::impsim("run " + test::write_temp("big_budget_fail.json", big) + " --engine fast --set k=30");
  CHECK(r.status == 1);
  CHECK(r.out.find("FAILED before probe.lookups [k=30]: expected <= 18,446,744,073,709,551,615, got ") !=
        std::string::npos);
}

TEST_CASE("explore tells an error as JSON under --json and takes one file, as the shared flags say") {
  const std::string missing = kSource + "/scenarios/no_such_file.json";
  auto j = test::shell(std::string(IMPSIM_BINARY) + " explore " + missing + " -o /dev/null --json 2>/dev/null");
  CHECK(j.status == 2);
  CHECK(nlohmann::json::parse(j.out)["error"]["kind"] == "invalid");
  auto plain = test::shell(std::string(IMPSIM_BINARY) + " explore " + missing + " -o /dev/null 2>/dev/null");
  CHECK(plain.status == 2);
  CHECK(plain.out.empty());
  auto two = test::impsim("explore " + missing + " " + missing + " -o /dev/null");
  CHECK(two.status == 2);
  CHECK(two.out.find("impsim: error: explore takes one FILE; '" + missing +
                     "' is one too many; see impsim help "
                     "explore\n") != std::string::npos);
}

TEST_CASE("validate's lines of several files are one list, with no blank line between") {
  const std::string a = kSource + "/scenarios/seed_incident.json", b = kSource + "/scenarios/nested_guards.json";
  auto v = test::impsim("validate " + a + " " + b);
  CHECK(v.status == 0);
  CHECK(v.out == a + ": ok (1 tree entry, 1 top-level step)\n" + b + ": ok (2 tree entries, 1 top-level step)\n");
}

TEST_CASE("--skip-non-scenarios: a JSON file that is not a scenario is skipped, saying so, the rest is checked") {
  // What a pre-commit hook is handed: every JSON file of a repository.
  std::string package = test::write_temp("package.json", R"({"name": "x", "dependencies": {"left-pad": "1"}})");
  std::string array = test::write_temp("list.json", "[1, 2]");
  std::string broken = test::write_temp("broken.json", "{\"impsim\": 1,");
  std::string failing = seed_with("skip_failing.json", R"({"after": {"probe.lookups": 8}})");
  std::string good = kSource + "/scenarios/nested_guards.json";

  // Without the flag a package.json is an invalid scenario, as before.
  CHECK(test::impsim("validate " + package).status == 2);

  for (std::string command : {"validate", "run --quiet", "compare", "sweep --param k --values 1", "trace"}) {
    CAPTURE(command);
    auto r = test::impsim(command + " --skip-non-scenarios " + package + " " + array);
    CHECK(r.status == 0);
    CHECK(r.out.find("impsim: skipped " + package +
                     ": not a scenario: its top-level object has no \"impsim\" key") != std::string::npos);
    CHECK(r.out.find("impsim: skipped " + array + ": not a scenario: its top level is a JSON array, not an object") !=
          std::string::npos);
  }
  auto v = test::impsim("validate --skip-non-scenarios " + package + " " + good);
  CHECK(v.status == 0);
  CHECK(v.out.find("nested_guards.json: ok") != std::string::npos);
  // A file that is not JSON, or a scenario, is checked as without the flag.
  auto b = test::impsim("validate --skip-non-scenarios " + broken);
  CHECK(b.status == 2);
  CHECK(b.out.find("invalid JSON") != std::string::npos);
  auto f = test::impsim("run --quiet --skip-non-scenarios " + package + " " + failing);
  CHECK(f.status == 1);
  CHECK(f.out.find("skipped " + package) != std::string::npos);
  // A missing file is an error, not a skip.
  CHECK(test::impsim("validate --skip-non-scenarios /nonexistent/x.json").status == 2);
  // explore writes one page: it has no such flag.
  CHECK(test::impsim("explore --skip-non-scenarios " + good + " -o /dev/null").status == 2);
}

TEST_CASE("--stats gives a rate past the range of a double as digits, never inf") {
  const std::string nested = std::string(IMPSIM_SOURCE_DIR) + "/scenarios/nested_guards.json";
  // k = 200 replays about 10^376 events: past a double's 1.8e308.
  auto r = test::shell_split(std::string(IMPSIM_BINARY) + " run " + nested +
                             " --engine fast --set k=200 --variants before --stats");
  CHECK(r.status == 0);
  CHECK(r.err.find("inf") == std::string::npos);
  CHECK(std::regex_search(r.err, std::regex(R"(, [1-9](\.[0-9]+)?e\+37[0-9] events/s,)")));
}
