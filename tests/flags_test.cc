// Through the binary: a flag means the same in every subcommand that takes
// it, and an expectation a run does not check is said, not skipped in
// silence.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_util.h"

using impsim::test::kSource;
using impsim::test::kNested;
using impsim::test::kSeed;

using namespace impsim;

namespace {



// Standard output only (standard error dropped).
test::Command out_of(const std::string& args) {
  return test::shell(std::string(IMPSIM_BINARY) + " " + args + " 2>/dev/null");
}

}  // namespace

TEST_CASE("-o FILE writes what standard output would get, in every subcommand that prints a report") {
  for (const std::string& args : {"run " + kNested, "compare " + kSeed, "sweep " + kNested + " --param k --values 1..3",
                                  "validate " + kNested, "run " + kNested + " --json"}) {
    CAPTURE(args);
    std::string file = test::write_temp("flags_o.txt", "old");
    auto to_file = test::impsim(args + " -o " + file);
    CHECK(to_file.status == 0);
    CHECK(to_file.out.empty());
    CHECK(impsim::test::read_file(file) == out_of(args).out);
  }
  // An output that is one of the inputs is refused before anything runs.
  std::string copy = test::write_temp("flags_input.json", impsim::test::read_file(kNested));
  auto over = test::impsim("run " + copy + " -o " + copy);
  CHECK(over.status == 2);
  CHECK(over.out.find("writing it would destroy the input") != std::string::npos);
  CHECK(impsim::test::read_file(copy) == impsim::test::read_file(kNested));
}

TEST_CASE("--json is --format json of the subcommand's own output, explore's too") {
  CHECK(out_of("trace " + kNested + " --set k=2 --json").out == out_of("trace " + kNested + " --set k=2 --format json").out);
  std::string page = test::write_temp("flags_page.html", "");
  auto explore = out_of("explore " + kNested + " --set k=1 --json -o " + page);
  CHECK(explore.status == 0);
  auto j = nlohmann::json::parse(explore.out);
  CHECK(j["page"] == page);
  CHECK(j["exit_status"] == 0);
  CHECK(impsim::test::read_file(page).starts_with("<!DOCTYPE html>"));
  // The page and the JSON cannot share standard output.
  CHECK(test::impsim("explore " + kNested + " --json").status == 2);
}

TEST_CASE("--counter on run, --stats on every subcommand that runs a scenario") {
  auto run = test::impsim("run " + kSeed + " --counter probe.lookups,lookups");
  CHECK(run.status == 0);
  CHECK(run.out.find("probe.lookups  13,699      7") != std::string::npos);
  CHECK(run.out.find("\nlookups") != std::string::npos);
  CHECK(run.out.find("\ncomparisons ") == std::string::npos);
  CHECK(test::impsim("run " + kSeed + " --counter prob.lookups").status == 2);
  for (const char* sub : {"run", "compare", "trace", "sweep"}) {
    CAPTURE(sub);
    const std::string k2 = std::string(sub) == "sweep" ? " --values 2" : " --set k=2";
    auto r = test::shell(std::string(IMPSIM_BINARY) + " " + sub + " " + kNested + k2 + " --stats 2>&1 >/dev/null");
    CHECK(r.status == 0);
    CHECK(r.out.find("stats: before k=2: engine ") != std::string::npos);
  }
}

TEST_CASE("sweep takes --param and --values from the scenario's sweep") {
  auto sweep = test::impsim("sweep " + kNested);
  CHECK(sweep.status == 0);
  CHECK(sweep.out == test::impsim("run " + kNested).out);
  // --values alone sweeps the scenario's parameter.
  CHECK(test::impsim("sweep " + kNested + " --values 1..4").out == sweep.out);
  auto none = test::impsim("sweep " + kSeed);
  CHECK(none.status == 2);
  CHECK(none.out.find("the scenario declares no sweep: give --param NAME and --values A..B") != std::string::npos);
}

TEST_CASE("an expectation not checked is said, with why") {
  // --set k=9 is off the sweep (k = 1..4) its expectations are written for.
  auto k9 = test::impsim("run " + kNested + " --set k=9");
  CHECK(k9.status == 0);
  CHECK(k9.out.find("expectations: 2 not checked\n  not checked: after probe.lookups, before probe.lookups [k=9]: "
                    "written for\n    k=1..4\n") != std::string::npos);
  auto j = nlohmann::json::parse(out_of("run " + kNested + " --set k=9 --json").out);
  REQUIRE(j["unchecked_expectations"].size() == 2);
  CHECK(j["unchecked_expectations"][0]["reason"] == "written for k=1..4");
  CHECK(j["unchecked_expectations"][0]["params"] == nlohmann::json({{"k", 9}}));

  // A ratio_to budget whose baseline does not run.
  std::string text = impsim::test::read_file(kSeed);
  std::string ratio = test::write_temp(
      "flags_ratio.json",
      text.substr(0, text.find("\"expect\"")) +
          R"("expect": {"after": {"probe.comparisons": {"ratio_to": "before", "<=": "1/1000"}}}})");
  auto after = test::impsim("run " + ratio + " --variant after");
  CHECK(after.status == 0);
  CHECK(after.out.find("expectations: 1 not checked\n  not checked: after probe.comparisons [filler=3298, k=7]: a "
                       "ratio to before,\n    which is not among the variants run\n") != std::string::npos);
  // Values a sweep adds to the scenario's own: the report lists them too.
  auto wider = test::impsim("sweep " + kNested + " --values 3..5");
  CHECK(wider.out.find("not checked: after probe.lookups, before probe.lookups [k=5]: written for the\n"
                       "    scenario's sweep, k=1..4") != std::string::npos);
}

TEST_CASE("trace and explore say that they check no expectation: help, man page, docs") {
  const std::string line = "does not check the scenario's expectations";
  for (const char* sub : {"trace", "explore"}) {
    CAPTURE(sub);
    std::string help = test::impsim(std::string("help ") + sub).out;
    for (size_t nl; (nl = help.find('\n')) != std::string::npos;) help[nl] = ' ';
    CHECK(help.find(line) != std::string::npos);
  }
  std::string man = test::impsim("help --man").out;
  for (size_t nl; (nl = man.find('\n')) != std::string::npos;) man[nl] = ' ';
  CHECK(man.find(line) != std::string::npos);
  std::string readme = impsim::test::read_file(kSource + "/README.md");
  for (size_t nl; (nl = readme.find('\n')) != std::string::npos;) readme[nl] = ' ';
  CHECK(readme.find("`trace` and `explore` show a run and check no expectation") != std::string::npos);
}
