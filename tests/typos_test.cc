// A misspelt name anywhere a user types one, on the command line or in a
// scenario, gets the same answer through the binary: one "impsim: error: "
// line, exit 2, what was wrong and the nearest right name; a file that
// cannot be read is named as such, without a made-up position.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

using impsim::test::kNested;

using namespace impsim;

namespace {

// `args` fails with exit 2 and this one line on standard error.
void refused(const std::string& args, const std::string& line) {
  auto r = test::impsim(args);
  CAPTURE(args);
  CHECK(r.status == 2);
  CHECK(r.out == "impsim: error: " + line + "\n");
}

std::string scenario(const std::string& name, const std::string& text) { return test::write_temp(name, text); }

}  // namespace

TEST_CASE("a misspelt flag, subcommand or flag value: did you mean, with the one error prefix") {
  refused("run " + kNested + " --quite",
          "unknown flag '--quite' for run (did you mean '--quiet'?); see impsim help run");
  refused("run " + kNested + " --baseline before",
          "unknown flag '--baseline' for run (a flag of compare); see impsim help run");
  refused("--versoin", "unknown flag '--versoin' for impsim (did you mean '--version'?); see impsim help");
  refused("runn " + kNested,
          "unknown subcommand 'runn' (did you mean 'run'?); expected one of: run, validate, "
          "compare, trace, sweep, explore, schedules, help (see impsim help)");
  refused("help runn",
          "unknown subcommand 'runn' (did you mean 'run'?); expected one of: run, validate, compare, "
          "trace, sweep, explore, schedules, help; see impsim help help");
  refused("run " + kNested + " --engine fats",
          "--engine fats: unknown engine (did you mean 'fast'?); expected one of: step, fast; see impsim help run");
  refused("run " + kNested + " --format jsno",
          "--format jsno: unknown format (did you mean 'json'?); expected one of: text, json, markdown; see impsim "
          "help run");
  refused("run " + kNested + " --revision b52ce71",
          "--revision b52ce71: unknown revision (did you mean 'b52ce17'?); expected one of: b52ce17, 04efefd; see "
          "impsim help run");
  refused("trace " + kNested + " --cpython 3.133",
          "--cpython 3.133: unknown CPython version (did you mean '3.13'?); expected one of: 3.9, 3.10, 3.11, 3.12, "
          "3.13, 3.13.13, 3.13.16, 3.14, 3.14.4, 3.15; or a release X.Y.P of one of them (3.13.5, 3.15.0rc1); see "
          "impsim help trace");
  refused("help --completion bsah",
          "--completion bsah: unknown shell (did you mean 'bash'?); expected one of: bash, zsh; see impsim help help");
  // Checked against the scenario: variants (a design, its revision), --set, counters, labels.
  auto variant = test::impsim("run " + kNested + " --variant aftr");
  CHECK(variant.status == 2);
  CHECK(
      variant.out.starts_with("impsim: error: " + kNested +
                              ": --variant aftr: unknown variant (did you mean 'after'?); expected one of: before, "));
  CHECK(test::impsim("run " + kNested + " --variant after@04efdef").out.find("(did you mean 'after@04efefd'?)") !=
        std::string::npos);
  CHECK(test::impsim("compare " + kNested + " --baseline befor").out.find("(did you mean 'before'?)") !=
        std::string::npos);
  refused("run " + kNested + " --set kk=2", kNested +
                                                ": --set kk: the scenario has no parameter \"kk\" (did you "
                                                "mean 'k'?); it has: k");
  auto counter = test::impsim("compare " + kNested + " --counters lookup");
  CHECK(counter.status == 2);
  CHECK(counter.out.find("--counters lookup: unknown counter (did you mean 'lookups'?); expected asks, ") !=
        std::string::npos);
  CHECK(test::impsim("sweep " + kNested + " --param k --values 1,2 --counter prob.lookups")
            .out.find("--counter prob.lookups: the scenario has no step labelled \"prob\" (did you mean 'probe'?)") !=
        std::string::npos);
}

TEST_CASE("a misspelt name in a scenario: step kinds and keys, report counters, labels, variants, axes") {
  auto check = [](const std::string& name, const std::string& text, const std::string& message) {
    auto r = test::impsim("validate " + scenario(name, text));
    CAPTURE(name);
    CAPTURE(r.out);
    CHECK(r.status == 2);
    CHECK(r.out.starts_with("impsim: error: "));
    CHECK(r.out.find(message) != std::string::npos);
  };
  const std::string head = R"({"impsim": 1, "tree": {"a": {}}, )";
  check("step_key.json", head + R"("program": [{"import": "a", "lable": "p"}]})",
        "at /program/0/lable: unknown key \"lable\" in an import step (did you mean \"label\"?); expected one of: "
        "import, label, optional, repeat");
  check("step_kind.json", head + R"("program": [{"improt": "a"}]})",
        "at /program/0/improt: unknown step \"improt\" (did you mean \"import\"?); expected one of: import, "
        "find_spec, import_module, enable, disable, guard, block, call, start, join, do, lazy_import, lazy_from, "
        "use, resolve, set_lazy_imports, set_lazy_imports_filter, __lazy_modules__, or a sys.meta_path step: "
        "install, ");
  check("report_counter.json",
        head + R"("program": [{"import": "a", "label": "probe"}], "report": [{"counter": "probe.lookup"}]})",
        "at /report/0/counter: unknown counter \"lookup\" (did you mean \"lookups\"?); expected asks, ");
  check("report_label.json",
        head + R"("program": [{"import": "a", "label": "probe"}], "report": [{"counter": "prbe.lookups"}]})",
        "\"prbe.lookups\" names label \"prbe\", which no step has (did you mean \"probe\"?)");
  check("variant.json", head + R"("program": [], "variants": ["before", "aftr"]})",
        "at /variants/1: unknown variant \"aftr\" (did you mean \"after\"?)");
  check("expect_variant.json", head + R"("program": [], "expect": {"befor": {"lookups": 0}}})",
        "expectations for variant \"befor\", which this scenario does not run (did you mean \"before\"?)");
  check("budget.json", head + R"("program": [], "expect": {"before": {"lookups": {"=<": 0}}}})",
        "unknown key \"=<\" in a budget (did you mean \"<=\"?)");
  check("revision.json", head + R"("program": [], "revision": "04efedf"})",
        "unknown finder revision \"04efedf\" (did you mean \"04efefd\"?)");
  check("cpython.json", head + R"("program": [], "cpython": "3.011"})",
        "unknown CPython version \"3.011\" (did you mean \"3.11\"?)");
  check("top_key.json", head + R"("program": [], "varaints": ["before"]})",
        "unknown key \"varaints\" in a scenario (did you mean \"variants\"?)");
}

TEST_CASE("a file that cannot be read is named as such, without a line and column") {
  refused("run no_such_scenario.json", "no_such_scenario.json: no such file");
  const std::string dir = std::string(IMPSIM_SOURCE_DIR) + "/scenarios";
  refused("explore " + dir, dir + ": is a directory, not a scenario file");
  auto j = test::shell(std::string(IMPSIM_BINARY) + " run no_such_scenario.json --json 2>/dev/null");
  CHECK(j.status == 2);
  auto error = nlohmann::json::parse(j.out)["error"];
  CHECK(error["kind"] == "invalid");
  CHECK(error["file"] == "no_such_scenario.json");
  CHECK(error["line"].is_null());
  CHECK(error["column"].is_null());
  CHECK(error["pointer"].is_null());
  CHECK(error["message"] == "no_such_scenario.json: no such file");
}

TEST_CASE("a command line CLI11 refuses is told in impsim's words") {
  refused("run", "impsim run needs FILE... (one or more scenario files); see impsim help run");
  refused("sweep " + kNested + " --param", "--param needs a value (NAME); see impsim help sweep");
  refused("explore a.json b.json -o x.html",
          "explore takes one FILE; 'b.json' is one too many; see impsim help explore");
  refused("run " + kNested + " --set", "--set needs a value (NAME=N); see impsim help run");
  refused("trace " + kNested + " --max-nodes many",
          "--max-nodes: \"many\" is not an integer; expected an integer from 0 to 18446744073709551615; see impsim "
          "help trace");
  // Under --json the same message is the JSON error object too.
  auto j = test::shell(std::string(IMPSIM_BINARY) + " run " + kNested + " --quite --json 2>/dev/null");
  CHECK(j.status == 2);
  CHECK(nlohmann::json::parse(j.out)["error"]["message"] ==
        "unknown flag '--quite' for run (did you mean '--quiet'?); see impsim help run");
}
