// Fuzz harnesses for shard documents and --schedule strings
// (fuzz/shards_harness.h).
#include "shards_harness.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "impsim/base/errors.h"
#include "impsim/engine/engine.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/report/schedules_report.h"
#include "impsim/run/schedules.h"

namespace impsim::fuzz {

namespace {

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz: %s\n", what.c_str());
  std::abort();
}

void check_terminal_text(const std::string& text) {
  for (unsigned char c : text)
    if ((c < 0x20 && c != '\n') || c == 0x7F) broken("a merged text report holds a control byte\n" + text);
}

const char* kCrossImport = R"({"impsim": 1,
  "tree": {"a": {"body": [{"import": "b"}]}, "b": {"body": [{"import": "a"}]}},
  "threads": {"w": [{"import": "b"}]},
  "program": [{"start": "w"}, {"import": "a"}, {"join": "w"}]})";

// tests/data/threads/hook_lock.json: a hook holding a class lock across
// its re-entry, a second object installed by a thread; a hang some
// schedules reach.
const char* kHookLock = R"({"impsim": 1, "tree": {"a": {}},
  "hooks": {"locked": {"claims": {"names": ["a"]}, "find_spec": [{"reenter": "find_spec"}], "guard": "flag",
                       "lock": {"type": "Lock", "per": "class"}}},
  "finders": {"f1": {"hook": "locked"}, "f2": {"hook": "locked"}},
  "meta_path": ["f1", "BuiltinImporter", "FrozenImporter", "PathFinder"],
  "threads": {"w": [{"install": "f2"}]},
  "program": [{"start": "w"}, {"import": "a"}, {"join": "w"}]})";

}  // namespace

Verdict run_shards_input(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<MergedSchedules> merged;
  try {
    merged = merge_shard_files({{"fuzz.json", text}}, 256);
  } catch (const InputError&) {
    return Verdict::Invalid;
  }
  for (const MergedSchedules& m : merged)
    for (const DesignSearch& t : m.searches) {
      uint64_t total = 0;
      for (const OutcomeClass& c : t.search.outcomes) total += c.schedules;
      if (total != t.search.schedules) broken("a merged search whose outcomes do not add up to its total");
      check_terminal_text(schedules_text(m.name, m.searches));
      if (!nlohmann::json::accept(schedules_json(m.name, m.file, m.searches, nullptr).dump()))
        broken("a merged JSON report that does not parse");
    }
  return Verdict::Ran;
}

Verdict run_schedule_input(const uint8_t* data, size_t size) {
  const std::string schedule(reinterpret_cast<const char*>(data), size);
  if (schedule.empty()) return Verdict::Invalid;  // the default schedule: nothing to check
  Verdict verdict = Verdict::Invalid;
  for (const char* json : {kCrossImport, kHookLock}) {
    const Scenario sc = parse_scenario(json, "threads.json");
    RunOptions options;
    options.variants = {sc.hooks.used ? "as_is" : "before"};
    options.schedule = schedule;
    options.limits.max_events = 5000;
    const std::optional<std::string> problem = schedule_problem(sc, options);
    // What the check says against what a replay does: a schedule it takes
    // is followed choice for choice to the run's last choice.
    Model model = compile_model(sc, {});
    Engine engine(model, *parse_variant(options.variants[0]), options.limits);
    engine.set_schedule(schedule);
    engine.run();
    if (!problem && engine.bad_schedule()) broken("a schedule the check took could not be followed: " + schedule);
    if (problem && problem->find("--schedule") != 0 && problem->find("not a schedule") != 0)
      broken("a refusal that does not say what it refuses: " + *problem);
    if (!problem) verdict = Verdict::Ran;
  }
  return verdict;
}

}  // namespace impsim::fuzz
