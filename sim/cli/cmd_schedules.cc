// `impsim schedules FILE...`: every outcome a threaded scenario's threads
// can reach, searched schedule by schedule.
#include <fmt/format.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <utility>

#include "impsim/base/number.h"
#include "impsim/report/schedules_report.h"
#include "impsim/run/schedules.h"
#include "scenario_command.h"
#include "search_flags.h"
#include "usage_errors.h"

namespace impsim::cli {

namespace {

// --merge: the shards' documents read back, checked and merged
// (report/schedules_report.h), each scenario's report written.
int merge_shards_of(Sink& sink, const std::vector<std::string>& files, const InputLimits& limits,
                    const FailOn& fail_on) {
  std::vector<ShardFile> read;
  for (const std::string& f : files) read.push_back({f == "-" ? "<stdin>" : f, read_scenario_file(f, limits)});
  int status = 0;
  for (const MergedSchedules& m : merge_shard_files(read, limits.max_json_depth)) {
    const ScheduleGate gate = gate_schedules(m.gate, search_pointers(m.searches), fail_on);
    status = std::max(status, schedules_exit_status(search_pointers(m.searches), gate));
    if (sink.format == Format::Json) {
      // Each representative's points, from the shards of its own search.
      PointsOf kept = [&](const DesignSearch& t, const std::string& schedule) {
        const auto& points = m.points[static_cast<size_t>(&t - m.searches.data())];
        auto it = points.find(schedule);
        return it == points.end() ? nlohmann::ordered_json() : it->second;
      };
      sink.json(schedules_json(m.name, m.file, m.searches, kept, nullptr, &gate, &m.gate));
    } else {
      sink.text(sink.format == Format::Markdown
                    ? schedules_markdown(m.name, m.searches) + schedule_gate_text(gate, true)
                    : schedules_text(m.name, m.searches) + schedule_gate_text(gate));
    }
    sink.failures(m.name, gate.failures);
  }
  return status;
}

// --shard I/N: both numbers as every integer flag reads them.
std::pair<uint32_t, uint32_t> parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  std::string why;
  const std::optional<uint32_t> n =
      slash == std::string::npos ? std::nullopt : parse_integer_as<uint32_t>(text.substr(slash + 1), 1, kMaxShards, &why);
  const std::optional<uint32_t> i =
      n ? parse_integer_as<uint32_t>(text.substr(0, slash), 1, *n, &why) : std::nullopt;
  if (!i)
    throw UsageError("<command line>",
                     fmt::format("--shard {}: {}expected I/N with 1 <= I <= N <= {}, such as 2/4", text,
                                 why.empty() ? "" : why.substr(0, why.find("; expected")) + "; ", kMaxShards));
  return {*i - 1, *n};
}

}  // namespace

Action add_schedules(CLI::App& app) {
  struct State : ScenarioCommand {
    using ScenarioCommand::ScenarioCommand;
    SearchFlags search;
    bool points = false;
    std::string shard;  // "I/N"
    bool merge = false;
  };
  auto st = std::make_shared<State>(
      app, "schedules",
      "Search a threaded scenario's schedules: every outcome its threads reach under CPython's import locks");
  CLI::App* cmd = st->cmd;
  st->search.add(cmd);
  cmd->add_flag("--points", st->points,
                "With --format json: each outcome's schedule written out point by point (thread, point, module), "
                "as tools/check/crosscheck --threads forces it on real threads");
  cmd->add_option("--shard", st->shard,
                  "Search part I of N (1 <= I <= N) only, for a batch runner (a CI matrix, GNU parallel, array "
                  "jobs); --format json, and --merge the N outputs");
  cmd->add_flag("--merge", st->merge,
                "The files are shard outputs (`--shard I/N --format json`, a file each or JSON lines): print the "
                "search they make together, as one unsplit run would");
  st->add_shared({.format_help = "text, json or markdown"});
  cmd->footer(
      "Each outcome is listed with how many schedules reached it and one schedule, with the fewest preemptions, "
      "that reaches it again. A search that finds no hang or _DeadlockError says how far it looked.\n\n"
      "Exit status 1 when a search reaches a hang, a _DeadlockError or an uncaught exception that the scenario does "
      "not accept (\"expect_schedules\": {\"DESIGN\": {\"hang\": \"reachable\"}}; --fail-on chooses the kinds), or "
      "when an expect_schedules entry fails.\n\n"
      "Examples:\n"
      "  impsim schedules tests/data/threads/cross_import.json\n"
      "  impsim schedules tests/data/threads/cross_import.json --preemption-bound 3 --cpython 3.9\n"
      "  impsim schedules tests/data/threads/cross_import.json --search pct --seed 7 --max-schedules 500\n"
      "  impsim schedules tests/data/threads/hook_start_join.json --fail-on deadlock   # a hang does not fail\n"
      "  impsim schedules tests/data/threads/two_waiters.json --shard 2/3 --format json -o s2.json   # one part of 3\n"
      "  impsim schedules --merge s1.json s2.json s3.json\n");
  return action_of(st, [st](Sink& sink) -> int {
    uint32_t shard = 0, shards = 1;
    const int refused = guarded(
        "<command line>",
        [&] {
          if (!st->shard.empty()) {
            std::tie(shard, shards) = parse_shard(st->shard);
            if (sink.format != Format::Json)
              throw UsageError("<command line>", "--shard writes a part of a search, for --merge: add --format json");
          }
          if (st->merge && !st->shard.empty())
            throw UsageError("<command line>", "--merge reads shards; it takes no --shard");
          return 0;
        },
        &sink);
    if (refused) {
      sink.finish(refused);
      return refused;
    }
    if (st->merge) {
      // Not a scenario command's loop: the sink's documents are written here.
      const int status = guarded(
          st->files.empty() ? "<command line>" : st->files.front(),
          [&] { return merge_shards_of(sink, st->files, st->input, st->search.fail_on_kinds()); }, &sink);
      sink.finish(status);
      return status;
    }
    return st->for_each_scenario(
        sink, nullptr, [&](const std::string&, Scenario& sc, const RunOptions& options, Progress&) {
          SearchOptions search = st->search.options();
          search.shard = shard;
          search.shards = shards;
          const std::vector<DesignSearch> found = search_scenario_schedules(sc, options, search);
          std::optional<ShardIdentity> identity;
          if (!st->shard.empty()) identity = shard_identity(sc.source ? *sc.source : std::string(), options, search);
          PointsOf points;
          if (st->points)
            points = [&](const DesignSearch& t, const std::string& schedule) {
              return points_json(schedule_points(*t.model, t.variant, options, schedule));
            };
          const GateScenario gated = gate_scenario(sc);
          const ScheduleGate gate = gate_schedules(gated, search_pointers(found), st->search.fail_on_kinds());
          if (sink.format == Format::Json)
            sink.json(schedules_json(sc.name, sc.file, found, points, identity ? &*identity : nullptr, &gate, &gated));
          else
            sink.text(sink.format == Format::Markdown
                          ? schedules_markdown(sc.name, found) + schedule_gate_text(gate, true)
                          : schedules_text(sc.name, found) + schedule_gate_text(gate));
          sink.failures(sc.name, gate.failures);
          return schedules_exit_status(search_pointers(found), gate);
        });
  });
}

}  // namespace impsim::cli
