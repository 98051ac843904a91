// The schedule gate (report/schedule_gate.h): `schedules` and `compare` exit
// 1 on a reachable hang, _DeadlockError or uncaught exception that the
// scenario does not accept, and say each failure at its line: in the
// report, under --quiet, as a GitHub annotation and in the step summary.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "impsim/report/schedule_gate.h"
#include "test_util.h"

namespace test = impsim::test;
using impsim::FailOn;
using impsim::parse_fail_on;

namespace {

const std::string kHang = test::kSource + "/tests/data/threads/hook_start_join.json";
const std::string kCross = test::kSource + "/tests/data/threads/cross_import.json";

// hook_start_join with `extra` keys added at its top level.
std::string hang_with(const std::string& name, const std::string& extra) {
  std::string text = test::read_file(kHang);
  const size_t end = text.rfind('}');
  REQUIRE(end != std::string::npos);
  return test::write_temp(name, text.substr(0, end) + ", " + extra + "}\n");
}

}  // namespace

TEST_CASE("--fail-on: a list of hang, deadlock and uncaught, or all, or none") {
  std::string why;
  CHECK(parse_fail_on("all", &why) == FailOn{});
  CHECK(parse_fail_on("none", &why)->kinds == std::array<bool, 3>{false, false, false});
  CHECK(parse_fail_on("hang,uncaught", &why)->kinds == std::array<bool, 3>{true, false, true});
  CHECK(impsim::fail_on_text(*parse_fail_on("deadlock", &why)) == "deadlock");
  CHECK_FALSE(parse_fail_on("hangs", &why));
  CHECK(why.find("\"hangs\" is not a finding") != std::string::npos);
  CHECK_FALSE(parse_fail_on("hang,", &why));
  test::impsim_says("schedules " + kHang + " --fail-on hangs", 2, "\"hangs\" is not a finding");
  // A scenario without threads has no schedules to gate.
  test::impsim_says("compare " + test::kNested + " --fail-on none", 2,
                    "--fail-on searches a threaded scenario's schedules");
}

TEST_CASE("schedules exits 1 on a reachable hang, and says where, in every format and under --quiet") {
  const auto text = test::impsim_says("schedules " + kHang, 1,
                                      "gate (--fail-on hang,deadlock,uncaught): 1 failure\n  " + kHang +
                                          ":14:13: as_is: a hang is reachable: 1 of 1 outcome class, 7 of 7 "
                                          "schedules; replay one with --schedule 0.0.");
  CHECK(text.out.find("\"expect_schedules\": {\"as_is\": {\"hang\": \"reachable\"}}") != std::string::npos);
  const auto quiet = test::shell_split(test::kBin + " schedules " + kHang + " --quiet");
  CHECK(quiet.status == 1);
  CHECK(quiet.out.empty());
  CHECK(quiet.err.starts_with(kHang + ":14:13: as_is: a hang is reachable"));
  const auto j = nlohmann::json::parse(test::impsim("schedules " + kHang + " --format json").out);
  CHECK(j["exit_status"] == 1);
  CHECK(j["gate"]["passed"] == false);
  CHECK(j["gate"]["failures"][0]["kind"] == "reachable");
  CHECK(j["gate"]["failures"][0]["pointer"] == "/threads");
  CHECK(j["gate"]["failures"][0]["line"] == 14);
  CHECK(j["searches"][0]["findings"]["hang"]["classes"] == 1);
  CHECK(j["searches"][0]["findings"]["hang"]["fails"] == true);
  // Each outcome as data beside its line: each thread's end, the waits.
  const auto& threaded = j["searches"][0]["outcomes"][0]["threaded"];
  CHECK(threaded["threads"][0]["ended"] == "waiting");
  CHECK(threaded["hang"][0]["waits_for"] == "join");
  CHECK(threaded["hang"][1]["held_by"] == "main");
  // Under GitHub Actions: an annotation at the line, and the step summary's list.
  const std::string summary = test::write_temp("gate_summary.md", "");
  const auto gh = test::shell_split("GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=" + summary + " " + test::kBin +
                                    " schedules " + kHang + " --quiet");
  CHECK(gh.status == 1);
  CHECK(gh.err.find("::error file=" + kHang + ",line=14,col=13,title=impsim schedule search::hook_start_join: as_is: "
                    "a hang is reachable") != std::string::npos);
  CHECK(test::read_file(summary).find("as_is: a hang is reachable") != std::string::npos);
}

TEST_CASE("schedules exits 0 where the scenario accepts what it reaches, and 1 where an expectation fails") {
  const std::string accepted = hang_with("gate_accepted.json", R"("expect_schedules": {"as_is": {"hang": "reachable"}})");
  test::impsim_says("schedules " + accepted, 0,
                    "gate (--fail-on hang,deadlock,uncaught): passed; reachable and accepted by the scenario: hang");
  test::impsim_says("schedules " + kHang + " --fail-on deadlock,uncaught", 0, "gate (--fail-on deadlock,uncaught): passed");
  test::impsim_says("schedules " + kHang + " --fail-on none", 0, "gate (--fail-on none): passed");
  // "never" fails on any schedule that reaches it, whatever --fail-on says.
  const std::string never = hang_with("gate_never.json", R"("expect_schedules": {"as_is": {"hang": "never"}})");
  const auto n = test::impsim_says("schedules " + never + " --fail-on none", 1,
                                   "FAILED as_is: expected no hang in any schedule; a hang reached: 1 of 1");
  CHECK(n.out.find(never + ":1:") == std::string::npos);  // at its entry's line, not the file's top
  // "reachable" fails when the search found none; "classes" bounds the classes.
  const std::string missing =
      hang_with("gate_missing.json", R"("expect_schedules": {"as_is": {"deadlock": "reachable", "classes": {">=": 2}}})");
  const auto m = test::impsim_says("schedules " + missing, 1,
                                   "FAILED as_is: expected a _DeadlockError to be reachable; the search found none "
                                   "(exhaustive within 2 preemptions: 7 schedules, every one within the bound)");
  CHECK(m.out.find("FAILED as_is: expected outcome classes >= 2, found 1") != std::string::npos);
  const std::string exact = hang_with("gate_exact.json", R"("expect_schedules": {"as_is": {"hang": "reachable", "classes": 1}})");
  test::impsim_says("schedules " + exact, 0, "passed");
  // allow_error accepts an uncaught exception, not a hang or a _DeadlockError.
  const std::string cross = test::read_file(kCross);
  const std::string allowing =
      test::write_temp("gate_allow_error.json", cross.substr(0, cross.rfind('}')) + ", \"allow_error\": true}\n");
  test::impsim_says("schedules " + allowing + " --variant before", 1, "before: a _DeadlockError is reachable");
}

TEST_CASE("the scenario reader refuses a bad expect_schedules, naming the place") {
  test::impsim_says("validate " + hang_with("gate_bad1.json", R"("expect_schedules": {"as_is": {"hang": "sometimes"}})"),
                    2, "at /expect_schedules/as_is/hang: expected \"reachable\" or \"never\", found \"sometimes\"");
  test::impsim_says("validate " + hang_with("gate_bad2.json", R"("expect_schedules": {"as_is": {"hangs": "never"}})"),
                    2, "unknown key \"hangs\"");
  test::impsim_says("validate " + hang_with("gate_bad3.json", R"("expect_schedules": {"as_si": {"hang": "never"}})"), 2,
                    "unknown variant \"as_si\"");
  test::impsim_says("validate " + hang_with("gate_bad4.json", R"("expect_schedules": {"as_is": {}})"), 2,
                    "expected at least one of");
  test::impsim_says(
      "validate " + hang_with("gate_bad5.json", R"("expect_schedules": {"as_is": {"classes": {"ratio_to": "as_is", "<=": 2}}})"),
      2, "a bound, not a ratio");
  std::string seed = test::read_file(test::kSource + "/scenarios/seed_incident.json");
  const std::string unthreaded = test::write_temp(
      "gate_unthreaded.json", seed.substr(0, seed.rfind('}')) + ", \"expect_schedules\": {\"before\": {\"hang\": \"never\"}}}\n");
  test::impsim_says("validate " + unthreaded, 2, "\"expect_schedules\" is for a scenario with \"threads\"");
}

TEST_CASE("compare gates each design's search as schedules does") {
  const auto c = test::impsim_says("compare " + kCross + " --variants before,after", 1,
                                   "gate (--fail-on hang,deadlock,uncaught): 2 failures");
  CHECK(c.out.find("after: a _DeadlockError is reachable") != std::string::npos);
  const auto j = nlohmann::json::parse(test::impsim("compare " + kCross + " --variants before,after --format json").out);
  CHECK(j["exit_status"] == 1);
  CHECK(j["gate"]["failures"].size() == 2);
  test::impsim_says("compare " + kCross + " --variants before,after --fail-on hang,uncaught", 0, "passed");
  const auto md = test::impsim("compare " + kCross + " --variants before,after --format markdown");
  CHECK(md.out.find("\n- " ) != std::string::npos);
}

TEST_CASE("a merge of shards gates the whole search as the unsplit one does, at the same lines") {
  const std::string dir = test::scratch_subdir("gate_shards");
  for (int i = 1; i <= 2; ++i)
    CHECK(test::impsim("schedules " + kHang + " --shard " + std::to_string(i) + "/2 --format json -o " + dir + "/s" +
                       std::to_string(i) + ".json")
              .status <= 1);
  const auto whole = test::impsim("schedules " + kHang + " --format json");
  const auto merged = test::impsim("schedules --merge " + dir + "/s1.json " + dir + "/s2.json --format json");
  CHECK(whole.status == 1);
  CHECK(merged.status == 1);
  CHECK(merged.out == whole.out);
  const auto text = test::impsim("schedules --merge " + dir + "/s1.json " + dir + "/s2.json");
  CHECK(text.out.find(kHang + ":14:13: as_is: a hang is reachable") != std::string::npos);
  CHECK(test::impsim("schedules --merge " + dir + "/s1.json " + dir + "/s2.json --fail-on none").status == 0);
  // An accepting scenario's shards carry what it accepts.
  const std::string accepted = hang_with("gate_shard_ok.json", R"("expect_schedules": {"as_is": {"hang": "reachable"}})");
  for (int i = 1; i <= 2; ++i)
    CHECK(test::impsim("schedules " + accepted + " --shard " + std::to_string(i) + "/2 --format json -o " + dir + "/a" +
                       std::to_string(i) + ".json")
              .status == 0);
  CHECK(test::impsim("schedules --merge " + dir + "/a1.json " + dir + "/a2.json").status == 0);
  // A shard that says otherwise than its sibling is refused.
  std::string doc = test::read_file(dir + "/a2.json");
  const size_t at = doc.find("\"hang\": \"reachable\"");
  REQUIRE(at != std::string::npos);
  doc.replace(at, 19, "\"hang\": \"never\"");
  const std::string forged = test::write_temp("gate_forged_shard.json", doc);
  test::impsim_says("schedules --merge " + dir + "/a1.json " + forged, 2, "expect_schedules is");
}

TEST_CASE("run's failure for a hang names the step the first waiting thread hung in") {
  // Without allow_error, hook_start_join's run hangs in main's import of y
  // (/program/1): the failure's line is that step's.
  std::string text = test::read_file(kHang);
  const std::string allow_error = ",\n \"allow_error\": true";
  const size_t allow = text.find(allow_error);
  REQUIRE(allow != std::string::npos);
  text.erase(allow, allow_error.size());
  const std::string hangs = test::write_temp("gate_run_hang.json", text);
  const auto r = test::shell_split(test::kBin + " run " + hangs + " --quiet");
  CHECK(r.status == 1);
  const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(text.find("{\"import\": \"y\"}")), '\n'));
  CHECK(r.err.starts_with(hangs + ":" + std::to_string(line) + ":"));
  CHECK(r.err.find("as_is: hangs: thread main waits for thread t to finish (join)") != std::string::npos);
  // trace and explore follow the same schedule: the same status, and under
  // GitHub Actions the same annotation, titled as a hang, at that line.
  const std::string page = test::scratch_subdir("gate_run_hang") + "/page.html";
  for (const std::string& cmd : std::vector<std::string>{"run", "trace", "trace --format chrome", "explore -o " + page}) {
    CAPTURE(cmd);
    const auto gh = test::shell_split("GITHUB_ACTIONS=true " + test::kBin + " " + cmd + " " + hangs);
    CHECK(gh.status == 1);
    CHECK(gh.err.find("::error file=" + hangs + ",line=" + std::to_string(line) +
                      ",col=") != std::string::npos);
    CHECK(gh.err.find(",title=impsim hang::") != std::string::npos);
  }
  // allow_error accepts the hang as it accepts an exception.
  CHECK(test::impsim("trace " + kHang).status == 0);
}

TEST_CASE("a gate that passed on searches that did not cover every schedule says so") {
  test::impsim_says("schedules " + kHang + " --max-schedules 3 --fail-on none", 0,
                    "gate (--fail-on none): passed (within what 1 of 1 search ran: each says its coverage)\n");
  const auto j = nlohmann::json::parse(test::impsim("schedules " + kHang + " --max-schedules 3 --fail-on none --format json").out);
  CHECK(j["gate"]["incomplete_searches"] == 1);
  const auto whole = test::impsim_says("schedules " + kHang + " --fail-on none", 0, "gate (--fail-on none): passed\n");
  CHECK(whole.out.find("within what") == std::string::npos);
}

TEST_CASE("schedules --format markdown: a heading, a table of outcomes per design, and the gate in Markdown") {
  const auto md = test::impsim("schedules " + kHang + " --format markdown");
  CAPTURE(md.out);
  CHECK(md.status == 1);  // the same status as text
  CHECK(md.out.starts_with("### impsim schedules: hook_start_join\n"));
  CHECK(md.out.find("| # | schedules | outcome | replay with `--schedule` | preemptions |\n") != std::string::npos);
  CHECK(md.out.find("\n| 1 | 7 | ") != std::string::npos);
  CHECK(md.out.find("a hang is reachable") != std::string::npos);
  // Not the text report under another name.
  CHECK(md.out.find("replay with --schedule") == std::string::npos);
  // A name that would be Markdown structure is escaped.
  std::string text = test::read_file(kHang);
  const std::string name_key = "\"name\": \"hook_start_join\"";
  REQUIRE(text.find(name_key) != std::string::npos);
  text.replace(text.find(name_key), name_key.size(), "\"name\": \"<img src=x> [a](http://e) | cell\"");
  const std::string hostile = test::write_temp("md_hostile.json", text);
  const auto h = test::impsim("schedules " + hostile + " --format markdown --fail-on none");
  CAPTURE(h.out);
  CHECK(h.out.find("<img") == std::string::npos);
  CHECK(h.out.starts_with("### impsim schedules: &lt;img src=x> [a\\](http\\://e) | cell\n"));
  // Two files: a heading each.
  const auto two = test::impsim("schedules " + kHang + " " + kCross + " --format markdown --fail-on none");
  size_t headings = 0;
  for (size_t at = two.out.find("### impsim schedules: "); at != std::string::npos;
       at = two.out.find("### impsim schedules: ", at + 1))
    ++headings;
  CHECK(headings == 2);
}

TEST_CASE("the report folds designs that reach a finding alike into one line, while annotations and JSON keep one each") {
  // hook_start_join: every design of the hook hangs on the same schedule.
  const auto c = test::impsim("compare " + kHang + " --variants as_is,call_next,skip_self");
  CAPTURE(c.out);
  CHECK(c.status == 1);
  CHECK(c.out.find("gate (--fail-on hang,deadlock,uncaught): 3 failures\n  " + kHang +
                   ":14:13: as_is, call_next and skip_self: a hang is reachable in each: 1 of 1 outcome class, 7 of 7 "
                   "schedules; replay one with --schedule 0.0. A scenario that documents it accepts it with "
                   "\"expect_schedules\": {\"as_is\": {\"hang\": \"reachable\"}, \"call_next\": {\"hang\": "
                   "\"reachable\"}, \"skip_self\": {\"hang\": \"reachable\"}}\n") != std::string::npos);
  const auto j =
      nlohmann::json::parse(test::impsim("compare " + kHang + " --variants as_is,call_next,skip_self --format json").out);
  CHECK(j["gate"]["failures"].size() == 3);
  const auto gh = test::shell_split("GITHUB_ACTIONS=true " + test::kBin + " compare " + kHang +
                                    " --variants as_is,call_next,skip_self --quiet");
  size_t annotations = 0;
  for (size_t at = gh.err.find("::error file="); at != std::string::npos; at = gh.err.find("::error file=", at + 1))
    ++annotations;
  CHECK(annotations == 3);
  // Designs whose tallies differ stay on lines of their own; those alike fold.
  const auto sets = test::impsim("compare " + test::kSource +
                                 "/tests/data/threads/guard_sets.json --variants as_is,guard_thread_set,guard_global_set");
  CAPTURE(sets.out);
  CHECK(sets.out.find(": as_is: an uncaught exception is reachable: 1 of 2 outcome classes, 494 of 1,047 schedules") !=
        std::string::npos);
  CHECK(sets.out.find(": guard_thread_set and guard_global_set: an uncaught exception is reachable in each: 1 of 2 "
                      "outcome classes, 418 of 927 schedules") != std::string::npos);
}
