// `impsim schedules FILE...`: every outcome a threaded scenario's threads
// can reach, searched schedule by schedule.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "impsim/base/escape.h"
#include "impsim/base/plural.h"
#include "impsim/run/schedules.h"
#include "impsim/scenario/names.h"
#include "scenario_command.h"
#include "search_flags.h"
#include "usage_errors.h"

namespace impsim::cli {

namespace {

std::string params_text(const Params& params) {
  std::string out;
  for (const auto& [k, v] : params) out += fmt::format("{}{}={}", out.empty() ? "" : ", ", k, v);
  return out;
}

bool any_outcome_has(const ScheduleSearch& s, std::string_view what) {
  for (const OutcomeClass& c : s.outcomes)
    if (c.outcome.find(what) != std::string::npos) return true;
  return false;
}

std::string search_text(const std::string& name, const std::vector<ThreadSearch>& searches) {
  std::string out;
  for (const ThreadSearch& t : searches) {
    const ScheduleSearch& s = t.search;
    out += fmt::format("{}, {}{}: {}\n", terminal_text(name), variant_name(t.variant),
                       t.params.empty() ? "" : " (" + params_text(t.params) + ")", search_coverage(s));
    if (s.error) {
      out += "  " + terminal_text(*s.error) + "\n";
      continue;
    }
    out += fmt::format("  {} {}\n", s.outcomes.size(), plural(s.outcomes.size(), "outcome", "outcomes"));
    for (size_t i = 0; i < s.outcomes.size(); ++i) {
      const OutcomeClass& c = s.outcomes[i];
      out += fmt::format("  {}. {} {}, replay with --schedule {} ({} {})\n     {}\n", i + 1, c.schedules,
                         plural(c.schedules, "schedule", "schedules"), c.schedule.empty() ? "''" : c.schedule,
                         c.preemptions, plural(static_cast<uint64_t>(c.preemptions), "preemption", "preemptions"),
                         terminal_text(c.outcome));
    }
    const std::string within = fmt::format(" ({})", search_coverage(s));
    if (!any_outcome_has(s, "hang:")) out += "  no hang found" + within + "\n";
    if (!any_outcome_has(s, "_DeadlockError")) out += "  no _DeadlockError found" + within + "\n";
  }
  return out;
}

nlohmann::ordered_json points_json(const std::vector<PointText>& points) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const PointText& p : points) {
    nlohmann::ordered_json e;
    e["thread"] = p.thread;
    e["point"] = p.point;
    if (!p.site.empty()) e["site"] = p.site;
    if (!p.module.empty()) e["module"] = p.module;
    if (!p.target.empty()) e["target"] = p.target;
    if (!p.pointer.empty()) e["pointer"] = p.pointer;
    out.push_back(std::move(e));
  }
  return out;
}

// `points`: each outcome's schedule written out point by point (a JSON
// array), or null where there is none.
using PointsOf = std::function<nlohmann::ordered_json(const ThreadSearch&, const std::string& schedule)>;

nlohmann::ordered_json search_json(const std::string& name, const std::string& file,
                                   const std::vector<ThreadSearch>& searches, const PointsOf& points) {
  nlohmann::ordered_json j;
  j["scenario"] = name;
  j["file"] = file;
  j["searches"] = nlohmann::ordered_json::array();
  for (const ThreadSearch& t : searches) {
    const ScheduleSearch& s = t.search;
    nlohmann::ordered_json e;
    e["variant"] = variant_name(t.variant);
    e["params"] = nlohmann::ordered_json::object();
    for (const auto& [k, v] : t.params) e["params"][k] = v;
    e["search"] = search_kind_name(s.options.kind);
    if (s.options.kind == SearchKind::Exhaustive)
      e["preemption_bound"] = s.options.preemption_bound;
    else
      e["seed"] = s.options.seed;
    if (s.options.kind == SearchKind::Pct) e["pct_depth"] = s.options.pct_depth;
    e["max_schedules"] = s.options.max_schedules;
    if (s.options.shards > 1) {
      e["shard"] = s.options.shard + 1;
      e["shards"] = s.options.shards;
    }
    e["schedules"] = s.schedules;
    e["complete"] = s.complete;
    e["shrink_runs"] = s.shrink_runs;
    if (s.error) e["error"] = *s.error;
    e["outcomes"] = nlohmann::ordered_json::array();
    for (const OutcomeClass& c : s.outcomes) {
      nlohmann::ordered_json o = {
          {"outcome", c.outcome}, {"schedules", c.schedules}, {"schedule", c.schedule}, {"preemptions", c.preemptions}};
      if (points)
        if (nlohmann::ordered_json p = points(t, c.schedule); !p.is_null()) o["points"] = std::move(p);
      e["outcomes"].push_back(std::move(o));
    }
    j["searches"].push_back(std::move(e));
  }
  return j;
}

// What --shard takes, and --merge reads, at most.
constexpr uint32_t kMaxShards = 100000;

// --merge: the shards' JSON documents (a file each, or JSON lines), read
// back into searches and merged as merge_shards merges them. The files
// come from other machines (a CI matrix's artifacts): every field is
// checked, and a shard missing, repeated, or searched with other options
// is refused, never merged into a partial count.
struct ShardGroup {
  std::string name, file;
  ThreadSearch first;
  std::vector<ScheduleSearch> shards;
  std::vector<bool> seen;
  std::map<std::string, nlohmann::ordered_json> points;  // schedule -> its points
};

[[noreturn]] void bad_shard(const std::string& file, const std::string& why) {
  throw InputError(file, kNoPosition, "",
                   why + " (expected the output of `impsim schedules --shard I/N --format json`)");
}

template <class T>
T field(const nlohmann::ordered_json& j, const char* key, const std::string& file) {
  if (!j.is_object() || !j.contains(key)) bad_shard(file, fmt::format("no \"{}\"", key));
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    bad_shard(file, fmt::format("\"{}\" is not what it should be", key));
  }
}

std::vector<nlohmann::ordered_json> shard_documents(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file, kNoPosition, "", "cannot read the file");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<nlohmann::ordered_json> docs;
  auto add = [&](nlohmann::ordered_json j) {
    if (j.is_array())
      for (auto& d : j) docs.push_back(std::move(d));
    else
      docs.push_back(std::move(j));
  };
  try {
    add(nlohmann::ordered_json::parse(text));
    return docs;
  } catch (const nlohmann::json::exception&) {
  }
  std::istringstream lines(text);
  std::string line;
  for (size_t n = 1; std::getline(lines, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      add(nlohmann::ordered_json::parse(line));
    } catch (const nlohmann::json::exception&) {
      throw InputError(file, {static_cast<int>(n), 1}, "", "not a JSON document, nor JSON lines");
    }
  }
  return docs;
}

int merge_shard_files(Sink& sink, const std::vector<std::string>& files) {
  std::vector<ShardGroup> groups;
  for (const std::string& f : files)
    for (const nlohmann::ordered_json& doc : shard_documents(f)) {
      const auto name = field<std::string>(doc, "scenario", f);
      const auto scenario_file = field<std::string>(doc, "file", f);
      const auto& searches = doc.contains("searches") ? doc["searches"] : nlohmann::ordered_json();
      if (!searches.is_array()) bad_shard(f, "no \"searches\" list");
      for (const auto& e : searches) {
        ThreadSearch t{};
        const auto variant = parse_variant(field<std::string>(e, "variant", f));
        if (!variant) bad_shard(f, "an unknown variant");
        t.variant = *variant;
        const auto params = field<nlohmann::ordered_json>(e, "params", f);  // kept: items() refers to it
        if (!params.is_object()) bad_shard(f, "\"params\" is not an object");
        for (const auto& [k, v] : params.items()) {
          // Printed in the report: a name a scenario could have, as the reader checks it.
          if (!is_dotted_name(k) || k.find('.') != std::string::npos) bad_shard(f, "a parameter name that is not one");
          if (!v.is_number_integer()) bad_shard(f, "a parameter that is not an integer");
          t.params[k] = v.get<int64_t>();
        }
        SearchOptions& o = t.search.options;
        const auto kind = field<std::string>(e, "search", f);
        o.kind = kind == "random" ? SearchKind::Random : kind == "pct" ? SearchKind::Pct : SearchKind::Exhaustive;
        if (kind != "random" && kind != "pct" && kind != "exhaustive") bad_shard(f, "an unknown search");
        if (o.kind == SearchKind::Exhaustive)
          o.preemption_bound = field<int>(e, "preemption_bound", f);
        else
          o.seed = field<uint64_t>(e, "seed", f);
        if (o.kind == SearchKind::Pct) o.pct_depth = field<int>(e, "pct_depth", f);
        o.max_schedules = field<uint64_t>(e, "max_schedules", f);
        const auto shards = e.contains("shards") ? field<uint32_t>(e, "shards", f) : 1u;
        const auto shard = e.contains("shard") ? field<uint32_t>(e, "shard", f) : 1u;
        if (shards < 1 || shards > kMaxShards || shard < 1 || shard > shards)
          bad_shard(f, fmt::format("shard {} of {}", shard, shards));
        o.shards = shards;
        o.shard = shard - 1;
        t.search.schedules = field<uint64_t>(e, "schedules", f);
        t.search.complete = field<bool>(e, "complete", f);
        t.search.shrink_runs = field<uint64_t>(e, "shrink_runs", f);
        if (e.contains("error")) t.search.error = field<std::string>(e, "error", f);
        std::map<std::string, nlohmann::ordered_json> points;
        const auto outcomes = field<nlohmann::ordered_json>(e, "outcomes", f);
        if (!outcomes.is_array()) bad_shard(f, "\"outcomes\" is not a list");
        for (const auto& c : outcomes) {
          OutcomeClass oc{field<std::string>(c, "outcome", f), field<uint64_t>(c, "schedules", f),
                          field<std::string>(c, "schedule", f), field<int>(c, "preemptions", f)};
          if (!oc.schedule.empty() && !Scheduler::parse_schedule(oc.schedule))
            bad_shard(f, "an outcome's schedule that is not one");
          if (c.contains("points")) points[oc.schedule] = c["points"];
          t.search.outcomes.push_back(std::move(oc));
        }
        // One search: the same scenario, design, parameters and options, but the shard.
        auto same = [&](const ShardGroup& g) {
          const SearchOptions& a = g.first.search.options;
          return g.file == scenario_file && g.first.variant == t.variant && g.first.params == t.params &&
                 a.kind == o.kind && a.preemption_bound == o.preemption_bound && a.seed == o.seed &&
                 a.pct_depth == o.pct_depth && a.max_schedules == o.max_schedules && a.shards == o.shards;
        };
        auto it = std::find_if(groups.begin(), groups.end(), same);
        if (it == groups.end()) {
          groups.push_back(ShardGroup{name, scenario_file, t, {}, std::vector<bool>(shards, false), {}});
          it = groups.end() - 1;
        }
        if (it->seen[o.shard])
          bad_shard(f, fmt::format("shard {}/{} of {} ({}) is given twice", shard, shards, scenario_file,
                                   variant_name(t.variant)));
        it->seen[o.shard] = true;
        it->shards.push_back(t.search);
        it->points.merge(points);
      }
    }
  if (groups.empty())
    throw InputError(files.empty() ? "<command line>" : files.front(), kNoPosition, "", "no searches to merge");
  // Each scenario's searches, in the order first seen.
  std::vector<std::string> order;
  for (const ShardGroup& g : groups)
    if (std::find(order.begin(), order.end(), g.file) == order.end()) order.push_back(g.file);
  int status = 0;
  for (const std::string& file : order) {
    std::vector<ThreadSearch> merged;
    std::vector<const ShardGroup*> merged_from;  // by merged's index
    std::string name;
    for (ShardGroup& g : groups) {
      if (g.file != file) continue;
      for (size_t i = 0; i < g.seen.size(); ++i)
        if (!g.seen[i])
          throw InputError(file, kNoPosition, "",
                           fmt::format("shard {}/{} of the {} search is missing: merging the others would count "
                                       "part of the schedules as all of them",
                                       i + 1, g.seen.size(), variant_name(g.first.variant)));
      name = g.name;
      merged.push_back(ThreadSearch{g.first.variant, g.first.params, merge_shards(g.shards)});
      merged_from.push_back(&g);
    }
    for (const ThreadSearch& t : merged)
      if (t.search.error) status = 1;
    if (sink.format == Format::Json) {
      // Each representative's points, from the shard of its own search.
      PointsOf kept = [&](const ThreadSearch& t, const std::string& schedule) {
        const auto& points = merged_from[static_cast<size_t>(&t - merged.data())]->points;
        auto it = points.find(schedule);
        return it == points.end() ? nlohmann::ordered_json() : it->second;
      };
      sink.json(search_json(name, file, merged, kept));
    } else {
      sink.text(search_text(name, merged));
    }
  }
  return status;
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
  st->add_shared({.format_help = "text or json"});
  cmd->footer(
      "Each outcome is listed with how many schedules reached it and one schedule, with the fewest preemptions, "
      "that reaches it again. A search that finds no hang or _DeadlockError says how far it looked.\n\n"
      "Examples:\n"
      "  impsim schedules tests/data/threads/cross_import.json\n"
      "  impsim schedules tests/data/threads/cross_import.json --preemption-bound 3 --cpython 3.9\n"
      "  impsim schedules tests/data/threads/cross_import.json --search pct --seed 7 --max-schedules 500\n"
      "  impsim schedules tests/data/threads/two_waiters.json --shard 2/3 --format json -o s2.json   # one part of 3\n"
      "  impsim schedules --merge s1.json s2.json s3.json\n");
  return action_of(st, [st](Sink& sink) -> int {
    uint32_t shard = 0, shards = 1;
    const int refused = guarded(
        "<command line>",
        [&] {
          if (!st->shard.empty()) {
            unsigned i = 0, n = 0;
            char slash = 0, extra = 0;
            if (std::sscanf(st->shard.c_str(), "%u%c%u%c", &i, &slash, &n, &extra) != 3 || slash != '/' || n < 1 ||
                n > kMaxShards || i < 1 || i > n)
              throw UsageError(
                  "<command line>",
                  fmt::format("--shard {}: expected I/N with 1 <= I <= N <= 100000, such as 2/4", st->shard));
            if (sink.format != Format::Json)
              throw UsageError("<command line>", "--shard writes a part of a search, for --merge: add --format json");
            shard = i - 1;
            shards = n;
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
          st->files.empty() ? "<command line>" : st->files.front(), [&] { return merge_shard_files(sink, st->files); },
          &sink);
      sink.finish(status);
      return status;
    }
    return st->for_each_scenario(
        sink, nullptr, [&](const std::string&, Scenario& sc, const RunOptions& options, Progress&) {
          SearchOptions search = st->search.options();
          search.shard = shard;
          search.shards = shards;
          const std::vector<ThreadSearch> found = search_scenario_schedules(sc, options, search);
          PointsOf points;
          if (st->points)
            points = [&](const ThreadSearch& t, const std::string& schedule) {
              Model model = compile_model(sc, t.params, options.model_limits);
              apply_axes(model, options);
              return points_json(schedule_points(model, t.variant, options, schedule));
            };
          if (sink.format == Format::Json)
            sink.json(search_json(sc.name, sc.file, found, points));
          else
            sink.text(search_text(sc.name, found));
          for (const ThreadSearch& t : found)
            if (t.search.error) return 1;
          return 0;
        });
  });
}

}  // namespace impsim::cli
