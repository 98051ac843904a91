// scenario_warnings (sim/scenario/warnings.cc) and how validate tells them.
#include <doctest/doctest.h>

#include "impsim/reader/read_scenario.h"
#include "impsim/scenario/warnings.h"
#include "test_util.h"

namespace impsim {

namespace {

// The pointers of the warnings of an inline scenario.
std::vector<std::string> warned(const std::string& tree, const std::string& program, const std::string& extra = "") {
  Scenario sc =
      parse_scenario(R"({"impsim": 1, "tree": )" + tree + R"(, "program": )" + program + extra + "}", "inline.json");
  std::vector<std::string> out;
  for (const ScenarioWarning& w : scenario_warnings(sc)) out.push_back(w.pointer);
  return out;
}

using Pointers = std::vector<std::string>;

}  // namespace

TEST_CASE("a call step is warned of only where its module cannot be in sys.modules yet") {
  const std::string tree = R"({"pkg": {"package": true}, "pkg.mod": {}, "zoo": {}})";
  const std::string call = R"({"call": "zoo", "body": []})";
  // Nothing imports zoo before the call (the import after it comes too late).
  CHECK(warned(tree, "[" + call + R"(, {"import": "zoo"}])") == Pointers{"/program/0/call"});
  CHECK(warned(tree, R"([{"guard": {"enable": true}, "body": [)" + call + "]}]") == Pointers{"/program/0/body/0/call"});
  // A call's own body runs after the call has looked its module up.
  CHECK(warned(tree, R"([{"call": "zoo", "body": [{"import": "zoo"}]}])") == Pointers{"/program/0/call"});
  // Imported before it, by its own name, a submodule's import or a find_spec of a submodule.
  CHECK(warned(tree, R"([{"import": "zoo"}, )" + call + "]").empty());
  CHECK(warned(tree, R"([{"import": "pkg.mod"}, {"call": "pkg", "body": []}])").empty());
  CHECK(warned(tree, R"([{"find_spec": "pkg.nope"}, {"call": "pkg", "body": []}])").empty());
  CHECK(warned(tree, R"([{"find_spec": "pkg"}, {"call": "pkg", "body": []}])") == Pointers{"/program/1/call"});
  // A module body, a hook or the starting sys.modules may bring it in.
  CHECK(warned(R"({"zoo": {}, "app": {"body": [{"import": "zoo"}]}})", "[" + call + "]").empty());
  CHECK(warned(tree, "[" + call + "]", R"(, "sys_modules": {"preloaded": ["zoo"]})").empty());
  CHECK(warned(R"({"zoo": {}})", "[" + call + "]",
               R"(, "hooks": {"h": {"find_spec": [{"import": "zoo"}]}}, "finders": {"f": {"hook": "h"}})")
            .empty());
  // Paddle's finder imports the paddle twin of a torch name.
  CHECK(warned(R"({"paddle": {"package": true}, "paddle.nn": {}})",
               R"([{"import": "torch.nn", "optional": true}, {"call": "paddle.nn", "body": []}])")
            .empty());
  // In a module body, which may run at any point: named only when nothing ever imports it.
  CHECK(warned(R"({"zoo": {}, "app": {"body": [{"call": "zoo", "body": []}]}})", R"([{"import": "zoo"}])").empty());
  CHECK(warned(R"({"zoo": {}, "app": {"body": [{"call": "zoo", "body": []}]}})", R"([{"import": "app"}])") ==
        Pointers{"/tree/app/body/0/call"});
}

TEST_CASE("validate tells a warning at its line, keeps exit status 0, and the run raises what it said") {
  const std::string file = test::write_temp("call_warned.json", R"({"impsim": 1, "tree": {"zoo": {}, "app": {}},
 "program": [{"import": "app"}, {"call": "zoo", "body": [{"import": "app"}]}, {"import": "zoo"}]})");
  test::Split v = test::shell_split("env -u GITHUB_ACTIONS " + std::string(IMPSIM_BINARY) + " validate " + file);
  CHECK(v.status == 0);
  CHECK(v.out.find(": ok (") != std::string::npos);
  CHECK(v.err.find("impsim: warning: " + file +
                   ":2:42: at /program/1/call: \"zoo\" is not in sys.modules when this "
                   "call runs, so it raises KeyError: 'zoo'") != std::string::npos);
  CHECK(v.err.find("::warning") == std::string::npos);

  test::Split j = test::shell_split("env -u GITHUB_ACTIONS " + std::string(IMPSIM_BINARY) + " validate --json " + file);
  CHECK(j.status == 0);
  auto report = nlohmann::json::parse(j.out);
  REQUIRE(report["warnings"].size() == 1);
  CHECK(report["warnings"][0]["pointer"] == "/program/1/call");
  CHECK(report["warnings"][0]["line"] == 2);
  CHECK(report["warnings"][0]["column"] == 42);

  // Under GitHub Actions, a ::warning annotation at the line; a hostile
  // file name forges no command of its own.
  const std::string dir = test::scratch_subdir("warn gha");
  const std::string hostile = dir + "/w\n::add-mask::x.json";
  std::filesystem::copy_file(file, hostile, std::filesystem::copy_options::overwrite_existing);
  test::Split g =
      test::shell_split("GITHUB_ACTIONS=true " + std::string(IMPSIM_BINARY) + " validate '" + hostile + "'");
  CHECK(g.status == 0);
  CHECK(g.err.find("::warning file=") != std::string::npos);
  CHECK(g.err.find(",line=2,col=42,title=impsim warning::") != std::string::npos);
  CHECK(g.err.find("\n::add-mask::") == std::string::npos);
  CHECK(g.out.find("\n::add-mask::") == std::string::npos);

  // What the warning says is what a run does.
  test::Command r = test::impsim("run " + file);
  CHECK(r.out.find("KeyError: 'zoo'") != std::string::npos);
}

TEST_CASE("a join is warned of only where its thread cannot have been started yet") {
  const std::string threads = R"(, "threads": {"w": [{"import": "a"}]})";
  const std::string tree = R"({"a": {}})";
  // Joined before the program starts it, or never started at all.
  CHECK(warned(tree, R"([{"join": "w"}, {"start": "w"}])", threads) == Pointers{"/program/0/join"});
  CHECK(warned(tree, R"([{"join": "w"}])", threads) == Pointers{"/program/0/join"});
  CHECK(warned(tree, R"([{"start": "w"}, {"join": "w"}])", threads).empty());
  CHECK(warned(tree, R"([{"do": [{"start": "w"}], "repeat": 1}, {"join": "w"}])", threads).empty());
  // A start that another thread, a module body or a hook makes may come first.
  CHECK(warned(R"({"a": {}, "app": {"body": [{"start": "w"}]}})", R"([{"join": "w"}, {"import": "app"}])", threads)
            .empty());
  CHECK(warned(tree, R"([{"start": "v"}, {"join": "w"}])",
               R"(, "threads": {"w": [{"import": "a"}], "v": [{"start": "w"}]})")
            .empty());
  CHECK(warned(tree, R"([{"join": "w"}, {"import": "a"}])",
               threads + R"(, "hooks": {"h": {"find_spec": [{"start": "w"}]}}, "finders": {"f": {"hook": "h"}})")
            .empty());
  // Joined in a module body, a thread or a hook: named only when nothing starts it anywhere.
  CHECK(warned(R"({"a": {}, "app": {"body": [{"join": "w"}]}})", R"([{"import": "app"}])", threads) ==
        Pointers{"/tree/app/body/0/join"});
  CHECK(warned(R"({"a": {}, "app": {"body": [{"join": "w"}]}})", R"([{"import": "app"}, {"start": "w"}])", threads)
            .empty());
}

TEST_CASE("validate warns of a join before the start, and the run raises what it said") {
  const std::string file = test::write_temp("join_warned.json", R"({"impsim": 1, "tree": {"a": {}},
 "threads": {"w": [{"import": "a"}]},
 "program": [{"join": "w"}, {"start": "w"}]})");
  test::Split v = test::shell_split("env -u GITHUB_ACTIONS " + std::string(IMPSIM_BINARY) + " validate " + file);
  CHECK(v.status == 0);
  CHECK(v.err.find("impsim: warning: " + file + ":3:23: at /program/0/join: thread \"w\" has not been started when "
                   "this join runs, so it raises RuntimeError: cannot join thread before it is started") !=
        std::string::npos);
  test::Command r = test::impsim("run " + file);
  CHECK(r.out.find("RuntimeError") != std::string::npos);
}

TEST_CASE("no shipped scenario is warned of") {
  test::Split v = test::shell_split("cd " + std::string(IMPSIM_SOURCE_DIR) + " && " + IMPSIM_BINARY +
                                    " validate $(find scenarios -name '*.json' | sort)");
  CHECK(v.status == 0);
  CHECK(v.err.find("warning") == std::string::npos);
}

}  // namespace impsim
