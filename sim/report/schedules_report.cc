// The `schedules` report (include/impsim/report/schedules_report.h): text,
// JSON, and shard documents read back and merged.
#include "impsim/report/schedules_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <sstream>

#include "impsim/base/errors.h"
#include "impsim/base/escape.h"
#include "impsim/base/json_scan.h"
#include "impsim/base/number.h"
#include "impsim/base/plural.h"
#include "impsim/base/sha256.h"
#include "impsim/base/version.h"
#include "impsim/report/threaded_outcome_text.h"
#include "impsim/scenario/names.h"

namespace impsim {

using nlohmann::ordered_json;

std::string ShardIdentity::digest() const {
  return sha256_hex(scenario_sha256 + "\n" + impsim + "\n" + options.dump());
}

ShardIdentity shard_identity(const std::string& scenario_text, const RunOptions& run, const SearchOptions& search) {
  ShardIdentity id;
  id.scenario_sha256 = sha256_hex(scenario_text);
  id.impsim = impsim_version();
  id.shard = search.shard + 1;
  ordered_json& o = id.options;
  o["variants"] = run.variants;
  o["set"] = ordered_json::object();
  for (const auto& [k, v] : run.overrides) o["set"][k] = v;
  o["revision"] = run.revision ? ordered_json(revision_name(*run.revision)) : ordered_json();
  o["cpython"] = run.cpython ? ordered_json(cpython_name(*run.cpython)) : ordered_json();
  const EngineLimits& l = run.limits;
  const ModelLimits& m = run.model_limits;
  o["limits"] = {{"max_events", l.max_events ? ordered_json(*l.max_events) : ordered_json()},
                 {"max_work", l.max_work ? ordered_json(*l.max_work) : ordered_json()},
                 {"max_lookup_depth", l.max_lookup_depth},
                 {"max_body_depth", l.max_body_depth},
                 {"max_guard_depth", l.max_guard_depth},
                 {"max_steps", l.max_steps},
                 {"max_objects", l.max_objects},
                 {"max_meta_path", l.max_meta_path},
                 {"max_repeat", m.max_repeat},
                 {"max_nest", m.max_nest},
                 {"max_filler", m.max_filler},
                 {"max_scope_names", m.max_scope_names}};
  o["search"] = search_kind_name(search.kind);
  o["preemption_bound"] = search.preemption_bound;
  o["seed"] = search.seed;
  o["pct_depth"] = search.pct_depth;
  o["max_schedules"] = search.max_schedules;
  o["shards"] = search.shards;
  return id;
}

namespace {

std::string search_params_text(const Params& params) {
  std::string out;
  for (const auto& [k, v] : params) out += fmt::format("{}{}={}", out.empty() ? "" : ", ", k, v);
  return out;
}

bool any_outcome(const ScheduleSearch& s, const std::function<bool(const ThreadedOutcome&)>& is) {
  return std::any_of(s.outcomes.begin(), s.outcomes.end(), [&](const OutcomeClass& c) { return is(c.outcome); });
}

const char* ended_name(ThreadEnd::How how) {
  switch (how) {
    case ThreadEnd::How::Returned:
      return "ok";
    case ThreadEnd::How::Raised:
      return "raised";
    case ThreadEnd::How::Waiting:
      return "waiting";
    case ThreadEnd::How::NeverStarted:
      return "never_started";
  }
  return "ok";
}

const char* wait_name(HangWait::Kind kind) {
  switch (kind) {
    case HangWait::Kind::GlobalLock:
      return "global_lock";
    case HangWait::Kind::ModuleLock:
      return "module_lock";
    case HangWait::Kind::HookLock:
      return "hook_lock";
    case HangWait::Kind::Join:
      return "join";
  }
  return "global_lock";
}

// A wait's keys name what each thread is to it: a lock's holder is
// "held_by", a joined thread "joins"; the module or the hook's lock only
// where the wait is for one.
ordered_json hang_wait_json(const HangWait& w) {
  ordered_json j = {{"thread", w.thread}, {"waits_for", wait_name(w.kind)}};
  if (w.kind == HangWait::Kind::ModuleLock) j["module"] = w.lock;
  if (w.kind == HangWait::Kind::HookLock) j["hook_lock"] = w.lock;
  j[w.kind == HangWait::Kind::Join ? "joins" : "held_by"] = w.on;
  return j;
}

// An outcome as data, which --merge reads back (the line beside it is for
// people; the merge checks that it reads as this).
}  // namespace

ordered_json threaded_json(const ThreadedOutcome& o) {
  ordered_json threads = ordered_json::array();
  for (const ThreadEnd& t : o.end.threads) {
    ordered_json e = {{"thread", t.thread}, {"ended", ended_name(t.how)}};
    if (t.how == ThreadEnd::How::Raised) {
      e["type"] = t.type;
      e["message"] = t.message;
    }
    threads.push_back(std::move(e));
  }
  ordered_json j;
  j["threads"] = std::move(threads);
  if (o.end.stopped_at) j["stopped_at"] = *o.end.stopped_at;
  j["hang"] = ordered_json::array();
  for (const HangWait& w : o.end.hang) j["hang"].push_back(hang_wait_json(w));
  j["sys_modules"] = o.end.sys_modules;
  j["marks"] = ordered_json::object();
  for (const auto& [name, mark] : o.end.marks) j["marks"][name] = mark;
  j["proxy_copies"] = o.end.proxy_copies;
  ordered_json counters = {
      {"asks", o.counters.asks.text()}, {"lookups", o.counters.lookups.text()}, {"toggles", o.counters.toggles.text()}};
  if (o.counters.searches) counters["searches"] = o.counters.searches->text();
  j["counters"] = std::move(counters);
  return j;
}


// One design's search, under its header line: the outcomes in text order,
// then what was not found, within `coverage` (search_coverage's).
std::string search_body_text(const ScheduleSearch& s, const std::string& coverage) {
  if (s.error) return "  " + terminal_text(*s.error) + "\n";
  std::string out = fmt::format("  {} {}\n", s.outcomes.size(), plural(s.outcomes.size(), "outcome", "outcomes"));
  const std::vector<size_t> order = classes_by_text(s.outcomes);
  for (size_t i = 0; i < order.size(); ++i) {
    const OutcomeClass& c = s.outcomes[order[i]];
    out += fmt::format("  {}. {} {}, replay with --schedule {} ({} {})\n     {}\n", i + 1, c.schedules,
                       plural(c.schedules, "schedule", "schedules"), c.schedule.empty() ? "''" : c.schedule,
                       c.preemptions, plural(static_cast<uint64_t>(c.preemptions), "preemption", "preemptions"),
                       terminal_text(threaded_outcome_text(c.outcome)));
  }
  const std::string within = " (" + coverage + ")";
  if (!any_outcome(s, [](const ThreadedOutcome& o) { return o.hung(); })) out += "  no hang found" + within + "\n";
  if (!any_outcome(s, [](const ThreadedOutcome& o) { return o.raised("_DeadlockError"); }))
    out += "  no _DeadlockError found" + within + "\n";
  return out;
}

std::string schedules_text(const std::string& name, const std::vector<DesignSearch>& searches) {
  std::string out;
  // A design whose search printed exactly as an earlier one's (P takes no
  // part, or the fix changes nothing on threads) is one line naming it,
  // not the same block again; the JSON keeps each design's own.
  std::vector<std::pair<std::string, Variant>> printed;
  for (const DesignSearch& t : searches) {
    const ScheduleSearch& s = t.search;
    const std::string params = t.params.empty() ? "" : " (" + search_params_text(t.params) + ")";
    const std::string coverage = search_coverage(s);
    const std::string body = search_body_text(s, coverage);
    const std::string key = params + "\n" + coverage + "\n" + body;
    auto same = std::find_if(printed.begin(), printed.end(), [&](const auto& p) { return p.first == key; });
    if (same != printed.end() && !s.error) {
      out += fmt::format("{}, {}{}: the same as {}: {}, the same {} {}\n", terminal_text(name), variant_name(t.variant),
                         params, variant_name(same->second), coverage, s.outcomes.size(),
                         plural(s.outcomes.size(), "outcome", "outcomes"));
      continue;
    }
    out += fmt::format("{}, {}{}: {}\n", terminal_text(name), variant_name(t.variant), params, coverage);
    out += body;
    printed.emplace_back(key, t.variant);
  }
  return out;
}

std::string schedules_markdown(const std::string& name, const std::vector<DesignSearch>& searches) {
  std::string out = fmt::format("### impsim schedules: {}\n", markdown_text(name));
  for (const DesignSearch& t : searches) {
    const ScheduleSearch& s = t.search;
    out += fmt::format("\n**{}**{}: {}\n\n", markdown_text(variant_name(t.variant)),
                       t.params.empty() ? "" : " (" + markdown_text(search_params_text(t.params)) + ")",
                       markdown_text(search_coverage(s)));
    if (s.error) {
      out += markdown_text(*s.error, Markdown::Paragraph) + "\n";
      continue;
    }
    out += "| # | schedules | outcome | replay with `--schedule` | preemptions |\n| ---: | ---: | --- | --- | ---: |\n";
    const std::vector<size_t> order = classes_by_text(s.outcomes);
    for (size_t i = 0; i < order.size(); ++i) {
      const OutcomeClass& c = s.outcomes[order[i]];
      out += fmt::format("| {} | {} | {} | {} | {} |\n", i + 1, c.schedules,
                         markdown_text(threaded_outcome_text(c.outcome), Markdown::Cell),
                         markdown_text(c.schedule.empty() ? "''" : c.schedule, Markdown::CodeCell), c.preemptions);
    }
    const std::string within = fmt::format(" ({})", markdown_text(search_coverage(s)));
    if (!any_outcome(s, [](const ThreadedOutcome& o) { return o.hung(); })) out += "\nno hang found" + within + "\n";
    if (!any_outcome(s, [](const ThreadedOutcome& o) { return o.raised("_DeadlockError"); }))
      out += "\nno _DeadlockError found" + within + "\n";
  }
  return out;
}

ordered_json points_json(const std::vector<PointText>& points) {
  ordered_json out = ordered_json::array();
  for (const PointText& p : points) {
    ordered_json e;
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

ordered_json schedules_json(const std::string& name, const std::string& file, const std::vector<DesignSearch>& searches,
                            const PointsOf& points, const ShardIdentity* shard, const ScheduleGate* gate,
                            const GateScenario* scenario) {
  ordered_json j;
  j["scenario"] = name;
  j["file"] = file;
  if (shard)
    j["shard_of"] = {{"digest", shard->digest()},
                     {"scenario_sha256", shard->scenario_sha256},
                     {"impsim", shard->impsim},
                     {"shard", shard->shard},
                     {"options", shard->options}};
  j["searches"] = ordered_json::array();
  for (const DesignSearch& t : searches) {
    const ScheduleSearch& s = t.search;
    ordered_json e;
    e["variant"] = variant_name(t.variant);
    e["params"] = ordered_json::object();
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
    e["outcomes"] = ordered_json::array();
    for (size_t k : classes_by_text(s.outcomes)) {
      const OutcomeClass& c = s.outcomes[k];
      ordered_json o = {{"outcome", threaded_outcome_text(c.outcome)},
                        {"schedules", c.schedules},
                        {"schedule", c.schedule},
                        {"preemptions", c.preemptions}};
      o["threaded"] = threaded_json(c.outcome);
      if (points)
        if (ordered_json p = points(t, c.schedule); !p.is_null()) o["points"] = std::move(p);
      e["outcomes"].push_back(std::move(o));
    }
    if (gate) {
      const SearchGate& g = gate->searches[static_cast<size_t>(&t - searches.data())];
      if (g.expect) e["expect_schedules"] = expect_schedules_json(*g.expect);
      e["findings"] = search_findings_json(g);
    }
    j["searches"].push_back(std::move(e));
  }
  if (gate) {
    if (scenario) j["allow_error"] = scenario->allow_error;
    if (scenario && shard) {
      // Where the gate's failures point, for a merge that has no scenario.
      ordered_json places = ordered_json::object();
      for (const auto& [pointer, pos] : gate_places(*scenario))
        places[pointer] = {{"line", pos.line}, {"column", pos.column}};
      j["places"] = std::move(places);
    }
    j["gate"] = schedule_gate_json(*gate);
    j["exit_status"] = schedules_exit_status(search_pointers(searches), *gate);
  }
  return j;
}

namespace {

// One document of a shard file, and where it stands in the file: its own
// text (for line and column), the pointer to it in that text (an array's
// element: "/3"), and the lines before that text (JSON lines).
struct ShardDoc {
  std::string file;
  std::shared_ptr<const JsonSource> source;
  std::string at;  // the document's pointer in `source`
  int lines_before = 0;
  ordered_json doc;
};

const char kExpected[] = "expected the output of `impsim schedules --shard I/N --format json`";

// A refusal at `pointer` (in the document), with its line and column;
// `what_is_wanted`: the document is not what a shard looks like (rather
// than a shard of another search).
[[noreturn]] void refuse_at(const ShardDoc& d, SourcePos pos, const std::string& pointer, const std::string& why,
                            bool what_is_wanted) {
  pos.line += d.lines_before;
  throw InputError(d.file, pos, d.at + pointer, what_is_wanted ? fmt::format("{} ({})", why, kExpected) : why);
}
[[noreturn]] void refuse(const ShardDoc& d, const std::string& pointer, const std::string& why,
                         bool what_is_wanted = true) {
  refuse_at(d, d.source->position_of(d.at + pointer), pointer, why, what_is_wanted);
}
// A refusal of the key `pointer` ends in (an unknown key), placed at the key.
[[noreturn]] void refuse_key(const ShardDoc& d, const std::string& pointer, const std::string& why) {
  refuse_at(d, d.source->key_position_of(d.at + pointer), pointer, why, true);
}

std::string key_pointer(const std::string& base, const std::string& key) { return base + "/" + pointer_token(key); }

// Only these keys, each once (the scan refused repeats).
void only_keys(const ShardDoc& d, const ordered_json& obj, const std::string& at, std::initializer_list<const char*> keys) {
  for (const auto& [k, _] : obj.items())
    if (std::none_of(keys.begin(), keys.end(), [&](const char* allowed) { return k == allowed; }))
      refuse_key(d, key_pointer(at, k), fmt::format("an unknown key \"{}\"", k));
}

const ordered_json& member(const ShardDoc& d, const ordered_json& obj, const std::string& at, const char* key) {
  if (!obj.contains(key)) refuse(d, at, fmt::format("no \"{}\"", key));
  return obj.at(key);
}

std::string text_field(const ShardDoc& d, const ordered_json& obj, const std::string& at, const char* key) {
  const ordered_json& v = member(d, obj, at, key);
  if (!v.is_string()) refuse(d, key_pointer(at, key), fmt::format("\"{}\" is not a string", key));
  return v.get<std::string>();
}

bool bool_field(const ShardDoc& d, const ordered_json& obj, const std::string& at, const char* key) {
  const ordered_json& v = member(d, obj, at, key);
  if (!v.is_boolean()) refuse(d, key_pointer(at, key), fmt::format("\"{}\" is not true or false", key));
  return v.get<bool>();
}

__int128 integer_field(const ShardDoc& d, const ordered_json& obj, const std::string& at, const char* key,
                       __int128 min, __int128 max) {
  std::string why;
  const std::optional<__int128> v = json_integer(member(d, obj, at, key), min, max, &why);
  if (!v) refuse(d, key_pointer(at, key), fmt::format("\"{}\": {}", key, why));
  return *v;
}

const ordered_json& object_field(const ShardDoc& d, const ordered_json& obj, const std::string& at, const char* key) {
  const ordered_json& v = member(d, obj, at, key);
  if (!v.is_object()) refuse(d, key_pointer(at, key), fmt::format("\"{}\" is not an object", key));
  return v;
}

const ordered_json& array_field(const ShardDoc& d, const ordered_json& obj, const std::string& at, const char* key) {
  const ordered_json& v = member(d, obj, at, key);
  if (!v.is_array()) refuse(d, key_pointer(at, key), fmt::format("\"{}\" is not a list", key));
  return v;
}

bool is_hex_digest(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A search's identity, as the document states it.
struct DocIdentity {
  ShardIdentity id;
  uint32_t shards = 1;
};

DocIdentity read_identity(const ShardDoc& d) {
  const ordered_json& doc = d.doc;
  if (!doc.contains("shard_of"))
    refuse(d, "", "no \"shard_of\": a shard document says what it is a shard of (`impsim schedules --format json` "
                  "without --shard writes a whole search, which needs no merging)");
  const std::string at = "/shard_of";
  const ordered_json& s = object_field(d, doc, "", "shard_of");
  only_keys(d, s, at, {"digest", "scenario_sha256", "impsim", "shard", "options"});
  DocIdentity out;
  out.id.scenario_sha256 = text_field(d, s, at, "scenario_sha256");
  if (!is_hex_digest(out.id.scenario_sha256))
    refuse(d, at + "/scenario_sha256", "\"scenario_sha256\" is not a SHA-256 digest (64 lowercase hex digits)");
  out.id.impsim = text_field(d, s, at, "impsim");
  out.id.options = object_field(d, s, at, "options");
  out.shards = static_cast<uint32_t>(integer_field(d, out.id.options, at + "/options", "shards", 1, kMaxShards));
  out.id.shard = static_cast<uint32_t>(integer_field(d, s, at, "shard", 1, out.shards));
  if (text_field(d, s, at, "digest") != out.id.digest())
    refuse(d, at + "/digest",
           "the digest does not match the document's scenario_sha256, impsim and options: the document was changed "
           "after impsim wrote it");
  return out;
}

// The first key of `a` and `b` whose values differ (recursively), as a
// pointer under `at`; nullopt when they are equal.
std::optional<std::string> first_difference(const ordered_json& a, const ordered_json& b, const std::string& at) {
  if (a == b) return std::nullopt;
  if (a.is_object() && b.is_object()) {
    for (const auto& [k, v] : a.items()) {
      if (!b.contains(k)) return key_pointer(at, k);
      if (auto d = first_difference(v, b.at(k), key_pointer(at, k))) return d;
    }
    for (const auto& [k, _] : b.items())
      if (!a.contains(k)) return key_pointer(at, k);
  }
  return at;
}

std::string short_text(const ordered_json& v) {
  std::string s = v.dump();
  return s.size() <= 40 ? s : s.substr(0, 32) + "...";
}

// One search of a shard document, checked against the document's identity.
struct ReadSearch {
  DesignSearch search;
  std::map<std::string, ordered_json> points;  // schedule -> points
  std::optional<ScheduleExpectation> expect;   // the scenario's expect_schedules entry for the design
  ordered_json expect_as_written;              // the same, as the shard wrote it (null: none)
};

// A thread's number in a schedule: a scenario has at most 16 threads.
constexpr int kMaxThreadNumber = 15;

void check_points(const ShardDoc& d, const ordered_json& points, const std::string& at) {
  if (!points.is_array()) refuse(d, at, "\"points\" is not a list");
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string p = at + "/" + std::to_string(i);
    if (!points[i].is_object()) refuse(d, p, "a point that is not an object");
    only_keys(d, points[i], p, {"thread", "point", "site", "module", "target", "pointer"});
    for (const auto& [k, v] : points[i].items())
      if (!v.is_string()) refuse(d, key_pointer(p, k), fmt::format("\"{}\" is not a string", k));
  }
}

std::vector<std::string> texts_field(const ShardDoc& d, const ordered_json& obj, const std::string& at,
                                     const char* key) {
  const ordered_json& list = array_field(d, obj, at, key);
  std::vector<std::string> out;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) refuse(d, key_pointer(at, key) + "/" + std::to_string(i), "an item that is not a string");
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

Count count_field(const ShardDoc& d, const ordered_json& obj, const std::string& at, const char* key) {
  const std::optional<Count> n = Count::from_digits(text_field(d, obj, at, key));
  if (!n) refuse(d, key_pointer(at, key), fmt::format("\"{}\" is not a count (decimal digits)", key));
  return *n;
}

// A hang's waits as hang_wait_json writes them.
std::vector<HangWait> read_hang(const ShardDoc& d, const ordered_json& j, const std::string& at) {
  const ordered_json& list = array_field(d, j, at, "hang");
  std::vector<HangWait> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string w = at + "/hang/" + std::to_string(i);
    if (list[i].is_string())
      refuse(d, w,
             "a wait as a sentence, as impsim wrote shards before a hang's waits were data; search the shards again "
             "with this impsim",
             false);
    if (!list[i].is_object()) refuse(d, w, "a wait that is not an object");
    HangWait h;
    h.thread = text_field(d, list[i], w, "thread");
    const std::string kind = text_field(d, list[i], w, "waits_for");
    const HangWait::Kind kinds[] = {HangWait::Kind::GlobalLock, HangWait::Kind::ModuleLock, HangWait::Kind::HookLock,
                                    HangWait::Kind::Join};
    const auto k = std::find_if(std::begin(kinds), std::end(kinds), [&](HangWait::Kind x) { return kind == wait_name(x); });
    if (k == std::end(kinds))
      refuse(d, w + "/waits_for",
             fmt::format("an unknown wait \"{}\" (global_lock, module_lock, hook_lock or join)", kind));
    h.kind = *k;
    switch (h.kind) {
      case HangWait::Kind::GlobalLock:
        only_keys(d, list[i], w, {"thread", "waits_for", "held_by"});
        break;
      case HangWait::Kind::ModuleLock:
        only_keys(d, list[i], w, {"thread", "waits_for", "module", "held_by"});
        h.lock = text_field(d, list[i], w, "module");
        break;
      case HangWait::Kind::HookLock:
        only_keys(d, list[i], w, {"thread", "waits_for", "hook_lock", "held_by"});
        h.lock = text_field(d, list[i], w, "hook_lock");
        break;
      case HangWait::Kind::Join:
        only_keys(d, list[i], w, {"thread", "waits_for", "joins"});
        break;
    }
    h.on = text_field(d, list[i], w, h.kind == HangWait::Kind::Join ? "joins" : "held_by");
    out.push_back(std::move(h));
  }
  return out;
}

// An outcome as threaded_json writes it.
ThreadedOutcome read_threaded(const ShardDoc& d, const ordered_json& j, const std::string& at) {
  if (!j.is_object()) refuse(d, at, "\"threaded\" is not an object");
  only_keys(d, j, at, {"threads", "stopped_at", "hang", "sys_modules", "marks", "proxy_copies", "counters"});
  ThreadedOutcome o;
  const ordered_json& threads = array_field(d, j, at, "threads");
  for (size_t i = 0; i < threads.size(); ++i) {
    const std::string t = at + "/threads/" + std::to_string(i);
    if (!threads[i].is_object()) refuse(d, t, "a thread that is not an object");
    only_keys(d, threads[i], t, {"thread", "ended", "type", "message"});
    ThreadEnd e;
    e.thread = text_field(d, threads[i], t, "thread");
    const std::string ended = text_field(d, threads[i], t, "ended");
    const ThreadEnd::How hows[] = {ThreadEnd::How::Returned, ThreadEnd::How::Raised, ThreadEnd::How::Waiting,
                                   ThreadEnd::How::NeverStarted};
    const auto how = std::find_if(std::begin(hows), std::end(hows), [&](ThreadEnd::How h) { return ended == ended_name(h); });
    if (how == std::end(hows))
      refuse(d, t + "/ended", fmt::format("an unknown end \"{}\" (ok, raised, waiting or never_started)", ended));
    e.how = *how;
    if (e.how == ThreadEnd::How::Raised) {
      e.type = text_field(d, threads[i], t, "type");
      e.message = text_field(d, threads[i], t, "message");
    } else if (threads[i].contains("type") || threads[i].contains("message")) {
      refuse(d, t, "a \"type\" or \"message\" of a thread that raised nothing");
    }
    o.end.threads.push_back(std::move(e));
  }
  if (j.contains("stopped_at")) o.end.stopped_at = text_field(d, j, at, "stopped_at");
  o.end.hang = read_hang(d, j, at);
  // A wait names threads of this outcome, and its waiter is one still waiting:
  // a wait a run cannot have written is a shard that lies.
  auto thread_named = [&](const std::string& name) -> const ThreadEnd* {
    for (const ThreadEnd& e : o.end.threads)
      if (e.thread == name) return &e;
    return nullptr;
  };
  for (size_t i = 0; i < o.end.hang.size(); ++i) {
    const HangWait& w = o.end.hang[i];
    const std::string p = at + "/hang/" + std::to_string(i);
    const ThreadEnd* waiter = thread_named(w.thread);
    if (!waiter || waiter->how != ThreadEnd::How::Waiting)
      refuse(d, p + "/thread", "a wait of a thread that \"threads\" does not list as waiting");
    if (!thread_named(w.on))
      refuse(d, p + (w.kind == HangWait::Kind::Join ? "/joins" : "/held_by"),
             "a wait on a thread that \"threads\" does not list");
  }
  o.end.sys_modules = texts_field(d, j, at, "sys_modules");
  if (!std::is_sorted(o.end.sys_modules.begin(), o.end.sys_modules.end()))
    refuse(d, at + "/sys_modules", "\"sys_modules\" is not sorted");
  const ordered_json& marks = object_field(d, j, at, "marks");
  for (const auto& [name, _] : marks.items()) o.end.marks[name] = text_field(d, marks, at + "/marks", name.c_str());
  o.end.proxy_copies = static_cast<int64_t>(integer_field(d, j, at, "proxy_copies", INT64_MIN, INT64_MAX));
  const std::string c = at + "/counters";
  const ordered_json& counters = object_field(d, j, at, "counters");
  only_keys(d, counters, c, {"asks", "lookups", "toggles", "searches"});
  o.counters.asks = count_field(d, counters, c, "asks");
  o.counters.lookups = count_field(d, counters, c, "lookups");
  o.counters.toggles = count_field(d, counters, c, "toggles");
  if (counters.contains("searches")) o.counters.searches = count_field(d, counters, c, "searches");
  return o;
}

ReadSearch read_search(const ShardDoc& d, const ordered_json& e, const std::string& at, const DocIdentity& id) {
  if (!e.is_object()) refuse(d, at, "a search that is not an object");
  only_keys(d, e, at,
            {"variant", "params", "search", "preemption_bound", "seed", "pct_depth", "max_schedules", "shard", "shards",
             "schedules", "complete", "shrink_runs", "error", "outcomes", "expect_schedules", "findings"});
  ReadSearch out;
  DesignSearch& t = out.search;
  const std::string variant = text_field(d, e, at, "variant");
  const std::optional<Variant> v = parse_variant(variant);
  if (!v) refuse(d, at + "/variant", fmt::format("an unknown variant \"{}\"", variant));
  t.variant = *v;
  const ordered_json& params = object_field(d, e, at, "params");
  for (const auto& [k, value] : params.items()) {
    // Printed in the report: a name a scenario could have, as the reader checks it.
    if (!is_dotted_name(k) || k.find('.') != std::string::npos)
      refuse(d, key_pointer(at + "/params", k), "a parameter name that is not one");
    t.params[k] = static_cast<int64_t>(integer_field(d, params, at + "/params", k.c_str(), INT64_MIN, INT64_MAX));
  }
  SearchOptions& o = t.search.options;
  const std::string kind = text_field(d, e, at, "search");
  if (kind != "exhaustive" && kind != "random" && kind != "pct")
    refuse(d, at + "/search", fmt::format("an unknown search \"{}\" (exhaustive, random or pct)", kind));
  o.kind = kind == "random" ? SearchKind::Random : kind == "pct" ? SearchKind::Pct : SearchKind::Exhaustive;
  if (o.kind == SearchKind::Exhaustive)
    o.preemption_bound = static_cast<int>(integer_field(d, e, at, "preemption_bound", 0, kMaxPreemptionBound));
  else
    o.seed = static_cast<uint64_t>(integer_field(d, e, at, "seed", 0, UINT64_MAX));
  if (o.kind == SearchKind::Pct) o.pct_depth = static_cast<int>(integer_field(d, e, at, "pct_depth", 1, kMaxPctDepth));
  o.max_schedules = static_cast<uint64_t>(integer_field(d, e, at, "max_schedules", 1, kMaxSchedules));
  o.shards = e.contains("shards") ? static_cast<uint32_t>(integer_field(d, e, at, "shards", 2, kMaxShards)) : 1;
  o.shard = e.contains("shard") ? static_cast<uint32_t>(integer_field(d, e, at, "shard", 1, o.shards)) - 1 : 0;
  if (e.contains("shard") != e.contains("shards")) refuse(d, at, "\"shard\" and \"shards\" come together");
  // The search is the one the document's identity says it searched.
  const ordered_json& opt = id.id.options;
  auto same = [&](const char* key, const ordered_json& value) {
    if (!opt.contains(key) || opt.at(key) != value)
      refuse(d, key_pointer(at, key),
             fmt::format("\"{}\" is {}, but the document's shard_of options say {}", key, short_text(value),
                         opt.contains(key) ? short_text(opt.at(key)) : std::string("nothing")));
  };
  same("search", kind);
  if (o.kind == SearchKind::Exhaustive) same("preemption_bound", o.preemption_bound);
  if (o.kind != SearchKind::Exhaustive) same("seed", o.seed);
  if (o.kind == SearchKind::Pct) same("pct_depth", o.pct_depth);
  same("max_schedules", o.max_schedules);
  same("shards", o.shards);
  if (o.shard + 1 != id.id.shard)
    refuse(d, at + "/shard", fmt::format("\"shard\" is {}, but the document's shard_of says {}", o.shard + 1, id.id.shard));
  ScheduleSearch& s = t.search;
  s.schedules = static_cast<uint64_t>(integer_field(d, e, at, "schedules", 0, o.max_schedules));
  s.complete = bool_field(d, e, at, "complete");
  if (s.complete && o.kind != SearchKind::Exhaustive)
    refuse(d, at + "/complete", "\"complete\" is true for a sampled search, which never covers every schedule");
  s.shrink_runs = static_cast<uint64_t>(integer_field(d, e, at, "shrink_runs", 0, UINT64_MAX));
  if (e.contains("error")) s.error = text_field(d, e, at, "error");
  if (e.contains("expect_schedules")) {
    // What the scenario accepts of this design, which the merge gates on: as
    // strictly checked as the scenario reader checks it.
    const std::string p = at + "/expect_schedules";
    const ordered_json& x = object_field(d, e, at, "expect_schedules");
    only_keys(d, x, p, {"hang", "deadlock", "uncaught", "classes"});
    ScheduleExpectation expect{t.variant, "/expect_schedules/" + pointer_token(variant_name(t.variant)), {}, {},
                               std::nullopt, {}};
    for (Finding f : kFindings) {
      const char* key = finding_name(f);
      if (!x.contains(key)) continue;
      const std::optional<ReachExpected> said = parse_reach(text_field(d, x, p, key));
      if (!said) refuse(d, key_pointer(p, key), fmt::format("\"{}\" is not \"reachable\" or \"never\"", key));
      expect.findings[static_cast<size_t>(f)] = *said;
      expect.pointers[static_cast<size_t>(f)] = expect.pointer + "/" + key;
    }
    if (x.contains("classes")) {
      expect.classes = parse_budget(nlohmann::json::parse(x.at("classes").dump()), p + "/classes", {},
                                    [&](const std::string& where, const std::string& why, BudgetFault fault) {
                                      if (fault == BudgetFault::AtKey) refuse_key(d, where, why);
                                      refuse(d, where, why);
                                    });
      expect.classes_pointer = expect.pointer + "/classes";
    }
    out.expect = std::move(expect);
    out.expect_as_written = x;
  }
  const ordered_json& outcomes = array_field(d, e, at, "outcomes");
  __int128 total = 0;
  std::set<ThreadedOutcome> seen;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const std::string p = at + "/outcomes/" + std::to_string(i);
    const ordered_json& c = outcomes[i];
    if (!c.is_object()) refuse(d, p, "an outcome that is not an object");
    only_keys(d, c, p, {"outcome", "threaded", "schedules", "schedule", "preemptions", "points"});
    OutcomeClass oc;
    const std::string line = text_field(d, c, p, "outcome");
    if (line.empty()) refuse(d, p + "/outcome", "an empty outcome");
    if (!c.contains("threaded"))
      refuse(d, p,
             "no \"threaded\": an outcome only as a line, as impsim wrote shards before outcomes were data; search "
             "the shards again with this impsim",
             false);
    oc.outcome = read_threaded(d, c.at("threaded"), p + "/threaded");
    if (threaded_outcome_text(oc.outcome) != line)
      refuse(d, p + "/outcome", "\"outcome\" is not the line its \"threaded\" outcome reads as");
    if (!seen.insert(oc.outcome).second) refuse(d, p + "/outcome", "an outcome listed twice in one search");
    oc.schedules = static_cast<uint64_t>(integer_field(d, c, p, "schedules", 1, o.max_schedules));
    total += oc.schedules;
    oc.schedule = text_field(d, c, p, "schedule");
    std::string why;
    const std::optional<std::vector<PyThreadId>> ids = Scheduler::parse_schedule(oc.schedule, &why);
    if (!ids) refuse(d, p + "/schedule", "\"schedule\": " + why);
    for (size_t k = 0; k < ids->size(); ++k)
      if ((*ids)[k] > kMaxThreadNumber)
        refuse(d, p + "/schedule",
               fmt::format("\"schedule\": choice {} is thread {}; a scenario has threads 0 to {}", k + 1, (*ids)[k],
                           kMaxThreadNumber));
    const __int128 most = o.kind == SearchKind::Exhaustive ? std::min<__int128>(o.preemption_bound, ids->size())
                                                           : static_cast<__int128>(ids->size());
    oc.preemptions = static_cast<int>(integer_field(d, c, p, "preemptions", 0, most));
    if (c.contains("points")) {
      check_points(d, c.at("points"), p + "/points");
      out.points[oc.schedule] = c.at("points");
    }
    s.outcomes.push_back(std::move(oc));
  }
  if (total != static_cast<__int128>(s.schedules))
    refuse(d, at + "/schedules",
           fmt::format("\"schedules\" is {}, but the outcomes' schedules add up to {}", s.schedules,
                       static_cast<uint64_t>(total)));
  return out;
}

// The documents of one shard file: one JSON document, an array of them,
// or JSON lines; each scanned for depth, UTF-8 and repeated keys first.
std::vector<ShardDoc> shard_documents(const std::string& file, const std::string& text, int max_json_depth) {
  std::vector<ShardDoc> docs;
  auto scanned = [&](std::shared_ptr<const JsonSource> source, int lines_before) {
    if (const std::optional<JsonScanProblem> p = source->scan(max_json_depth)) {
      SourcePos pos = source->position_at(p->offset);
      pos.line += lines_before;
      if (p->too_deep)
        throw InputLimitError("max-json-depth", file, pos, p->pointer,
                              fmt::format("JSON nested deeper than {} levels (--max-json-depth)", max_json_depth));
      throw InputError(file, pos, p->pointer, p->message);
    }
  };
  auto add = [&](const std::shared_ptr<const JsonSource>& source, int lines_before, ordered_json j) {
    if (j.is_array()) {
      for (size_t i = 0; i < j.size(); ++i)
        docs.push_back(ShardDoc{file, source, "/" + std::to_string(i), lines_before, std::move(j[i])});
    } else {
      docs.push_back(ShardDoc{file, source, "", lines_before, std::move(j)});
    }
  };
  if (ordered_json::accept(text)) {
    auto source = std::make_shared<const JsonSource>(text);
    scanned(source, 0);
    add(source, 0, ordered_json::parse(text));
    return docs;
  }
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto source = std::make_shared<const JsonSource>(line);
    scanned(source, n - 1);
    if (!ordered_json::accept(line))
      throw InputError(file, {n, 1}, "", fmt::format("not a JSON document, nor JSON lines ({})", kExpected));
    add(source, n - 1, ordered_json::parse(line));
  }
  if (docs.empty()) throw InputError(file, kNoPosition, "", fmt::format("no document ({})", kExpected));
  return docs;
}

// One search's shards, as they are read.
struct ShardGroup {
  std::string file;
  Variant variant;
  Params params;
  std::vector<ScheduleSearch> shards;
  std::vector<bool> seen;
  std::map<std::string, ordered_json> points;
  std::optional<ScheduleExpectation> expect;  // as the first shard read says it
  ordered_json expect_as_written;
};

// What the documents of one scenario file share: their identity, and where
// the first of them was read.
struct FileIdentity {
  std::string name;
  DocIdentity id;
  std::string where;  // the document it was first read from
  bool allow_error = false;
  std::map<std::string, SourcePos> places;
};

}  // namespace

std::vector<MergedSchedules> merge_shard_files(const std::vector<ShardFile>& files, int max_json_depth) {
  std::vector<ShardGroup> groups;
  std::map<std::string, FileIdentity> identities;  // by scenario file
  std::vector<std::string> order;                  // scenario files, as first seen
  for (const auto& [f, text] : files)
    for (const ShardDoc& d : shard_documents(f, text, max_json_depth)) {
      if (!d.doc.is_object()) refuse(d, "", "a document that is not an object");
      only_keys(d, d.doc, "",
                {"scenario", "file", "shard_of", "searches", "allow_error", "places", "gate", "exit_status"});
      const std::string name = text_field(d, d.doc, "", "scenario");
      const std::string scenario_file = text_field(d, d.doc, "", "file");
      const DocIdentity id = read_identity(d);
      const bool allow_error = d.doc.contains("allow_error") && bool_field(d, d.doc, "", "allow_error");
      std::map<std::string, SourcePos> places;
      if (d.doc.contains("places")) {
        // Only ever printed beside a failure: checked to be a line and a column.
        for (const auto& [pointer, pos] : object_field(d, d.doc, "", "places").items()) {
          const std::string at = key_pointer("/places", pointer);
          if (!pos.is_object()) refuse(d, at, "a place that is not {\"line\", \"column\"}");
          only_keys(d, pos, at, {"line", "column"});
          places[pointer] = SourcePos{static_cast<int>(integer_field(d, pos, at, "line", 1, INT32_MAX)),
                                      static_cast<int>(integer_field(d, pos, at, "column", 1, INT32_MAX))};
        }
      }
      auto [known, fresh] = identities.try_emplace(scenario_file, FileIdentity{name, id, f, allow_error, places});
      if (fresh) {
        order.push_back(scenario_file);
      } else {
        // One search of one scenario: everything but the shard's number.
        const DocIdentity& first = known->second.id;
        const std::string these = fmt::format("shard {}/{} of {}", id.id.shard, id.shards, scenario_file);
        const std::string that = fmt::format("shard {}/{} in {}", first.id.shard, first.shards, known->second.where);
        const char* why = "shards of one search come from one scenario file, one impsim and the same options";
        if (id.id.scenario_sha256 != first.id.scenario_sha256)
          refuse(d, "/shard_of/scenario_sha256",
                 fmt::format("{} was made from other content (sha256 {}...) than {} (sha256 {}...): {}", these,
                             id.id.scenario_sha256.substr(0, 12), that, first.id.scenario_sha256.substr(0, 12), why), false);
        if (id.id.impsim != first.id.impsim)
          refuse(d, "/shard_of/impsim",
                 fmt::format("{} was made by impsim {}, {} by impsim {}: {}", these, short_text(id.id.impsim), that,
                             short_text(first.id.impsim), why), false);
        if (const auto field = first_difference(id.id.options, first.id.options, "")) {
          const ordered_json::json_pointer ptr(*field);
          auto shown = [&](const ordered_json& o) { return o.contains(ptr) ? short_text(o.at(ptr)) : "nothing"; };
          refuse(d, "/shard_of/options" + *field,
                 fmt::format("{} was searched with options{} {}, {} with {}: {}", these, *field,
                             shown(id.id.options), that, shown(first.id.options), why), false);
        }
        if (name != known->second.name)
          refuse(d, "/scenario",
                 fmt::format("{} names the scenario {}, {} names it {}: {}", these, short_text(name), that,
                             short_text(known->second.name), why), false);
        if (allow_error != known->second.allow_error)
          refuse(d, "/allow_error",
                 fmt::format("{} says allow_error {}, {} says {}: {}", these, allow_error, that,
                             known->second.allow_error, why), false);
      }
      const ordered_json& searches = array_field(d, d.doc, "", "searches");
      for (size_t i = 0; i < searches.size(); ++i) {
        const std::string at = "/searches/" + std::to_string(i);
        ReadSearch r = read_search(d, searches[i], at, id);
        auto it = std::find_if(groups.begin(), groups.end(), [&](const ShardGroup& g) {
          return g.file == scenario_file && g.variant == r.search.variant && g.params == r.search.params;
        });
        if (it == groups.end()) {
          groups.push_back(ShardGroup{scenario_file, r.search.variant, r.search.params, {}, std::vector<bool>(id.shards),
                                      {}, r.expect, r.expect_as_written});
          it = groups.end() - 1;
        } else if (r.expect_as_written != it->expect_as_written) {
          refuse(d, at + "/expect_schedules",
                 fmt::format("the {} search's expect_schedules is {} here and {} in another shard: shards of one "
                             "search come from one scenario file",
                             variant_name(r.search.variant), short_text(r.expect_as_written),
                             short_text(it->expect_as_written)),
                 false);
        }
        const uint32_t shard = r.search.search.options.shard;
        if (it->seen[shard])
          refuse(d, at,
                 fmt::format("shard {}/{} of {} ({}) is given twice", shard + 1, id.shards, scenario_file,
                             variant_name(r.search.variant)),
                 false);
        it->seen[shard] = true;
        it->shards.push_back(std::move(r.search.search));
        it->points.merge(r.points);
      }
    }
  if (groups.empty())
    throw InputError(files.empty() ? "<command line>" : files.front().file, kNoPosition, "", "no searches to merge");
  std::vector<MergedSchedules> out;
  for (const std::string& file : order) {
    MergedSchedules m;
    m.name = identities.at(file).name;
    m.file = file;
    m.gate.file = file;
    m.gate.allow_error = identities.at(file).allow_error;
    m.gate.places = identities.at(file).places;
    for (ShardGroup& g : groups) {
      if (g.file != file) continue;
      for (size_t i = 0; i < g.seen.size(); ++i)
        if (!g.seen[i])
          throw InputError(file, kNoPosition, "",
                           fmt::format("shard {}/{} of the {} search{} is missing: merging the others would count "
                                       "part of the schedules as all of them",
                                       i + 1, g.seen.size(), variant_name(g.variant),
                                       g.params.empty() ? "" : " (" + search_params_text(g.params) + ")"));
      m.searches.push_back(DesignSearch{g.variant, g.params, merge_shards(g.shards), nullptr});
      if (g.expect && std::none_of(m.gate.expect.begin(), m.gate.expect.end(),
                                   [&](const ScheduleExpectation& e) { return e.variant == g.variant; }))
        m.gate.expect.push_back(*g.expect);
      m.points.push_back(std::move(g.points));
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace impsim
