// A scenario file's top level: one function per key, each reading its
// value into the Scenario, and one table (kTopKeys) that says which keys
// exist, which are required and in what order they are read (a key may
// rely on the ones read before it: `sweep` on `params`, `expect` on
// `variants`, `sweep` and the labels of `tree` and `program`). Adding a key
// is one function plus one entry. Steps: read_steps.cc; file bytes:
// read_file.cc.
#include "impsim/reader/read_scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "impsim/base/plural.h"
#include "impsim/base/unicode_names.h"
#include "impsim/scenario/counters.h"
#include "impsim/scenario/names.h"
#include "impsim/scenario/variant.h"
#include "read_hooks.h"
#include "reader.h"

namespace impsim {

namespace {

using nlohmann::json;
using reading::Reader;

void read_impsim(Reader& r, Scenario&, const json& v) {
  if (!v.is_number_integer() || v.get<int64_t>() != 1)
    r.fail("/impsim", fmt::format("this impsim reads scenario format 1; found {}", reading::quoted(v)));
}

void read_schema(Reader& r, Scenario&, const json& v) { r.string(v, "/$schema", "a schema address"); }

void read_name(Reader& r, Scenario& sc, const json& v) { sc.name = r.string(v, "/name", "a name"); }

void read_description(Reader& r, Scenario& sc, const json& v) {
  sc.description = r.string(v, "/description", "a description");
}

void read_params(Reader& r, Scenario& sc, const json& v) {
  const json& p = r.object(v, "/params", "the parameters");
  for (auto& [k, x] : p.items()) {
    std::string ptr = "/params/" + pointer_token(k);
    if (!is_dotted_name(k) || k.find('.') != std::string::npos)
      r.fail(ptr, fmt::format("a parameter name must be an identifier, found \"{}\"", k));
    sc.params[k] = r.integer(x, ptr, "a parameter value", INT64_MIN);
    sc.param_order.push_back(k);
  }
}

void read_sweep(Reader& r, Scenario& sc, const json& v) {
  const InputLimits& limits = r.limits();
  const json& s = r.object(v, "/sweep", "the sweep");
  r.expect_keys(s, "/sweep", {"param", "values", "title"}, "the sweep");
  Sweep sw;
  if (!s.contains("param")) r.fail("/sweep", "the sweep needs \"param\"");
  sw.param = r.string(s["param"], "/sweep/param", "the swept parameter's name");
  if (!sc.params.count(sw.param))
    r.fail("/sweep/param", fmt::format("the sweep names parameter \"{}\", which \"params\" does not define", sw.param));
  if (!s.contains("values")) r.fail("/sweep", "the sweep needs \"values\"");
  r.array(s["values"], "/sweep/values", "the swept values");
  if (s["values"].empty()) r.fail("/sweep/values", "the sweep needs at least one value");
  // Every value is a run of every variant, each kept for the report.
  if (s["values"].size() > limits.max_sweep_values)
    throw InputLimitError("max-sweep-values", r.file(), r.src().position_of("/sweep/values"), "/sweep/values",
                          fmt::format("the sweep has {} values; the limit is {} (--max-sweep-values)",
                                      s["values"].size(), limits.max_sweep_values));
  for (size_t i = 0; i < s["values"].size(); ++i)
    sw.values.push_back(r.integer(s["values"][i], "/sweep/values/" + std::to_string(i), "a swept value", INT64_MIN));
  sw.title = s.contains("title") ? r.string(s["title"], "/sweep/title", "a title") : sw.param;
  sc.sweep = sw;
}

void read_sys_modules(Reader& r, Scenario& sc, const json& v) {
  const json& m = r.object(v, "/sys_modules", "the starting sys.modules");
  r.expect_keys(m, "/sys_modules", {"preloaded", "filler", "torch"}, "sys_modules");
  if (m.contains("preloaded"))
    sc.preloaded = r.names(m["preloaded"], "/sys_modules/preloaded", "the preloaded module names");
  if (m.contains("filler")) sc.filler = r.int_field(m["filler"], "/sys_modules/filler", "the filler count");
  if (m.contains("torch")) sc.torch_modules = r.names(m["torch"], "/sys_modules/torch", "the real torch module names");
  std::set<std::string> seen;
  for (size_t i = 0; i < sc.preloaded.size(); ++i) {
    std::string ptr = "/sys_modules/preloaded/" + std::to_string(i);
    if (is_torch_name(sc.preloaded[i]))
      r.fail(ptr, fmt::format("\"{}\" is a torch name; real torch modules go in /sys_modules/torch", sc.preloaded[i]));
    if (!seen.insert(sc.preloaded[i]).second) r.fail(ptr, fmt::format("\"{}\" is listed twice", sc.preloaded[i]));
  }
  for (size_t i = 0; i < sc.torch_modules.size(); ++i) {
    std::string ptr = "/sys_modules/torch/" + std::to_string(i);
    if (!is_torch_name(sc.torch_modules[i]))
      r.fail(ptr, fmt::format("expected a torch name (\"torch\" or \"torch.*\"), found \"{}\"", sc.torch_modules[i]));
    if (!seen.insert(sc.torch_modules[i]).second)
      r.fail(ptr, fmt::format("\"{}\" is listed twice", sc.torch_modules[i]));
  }
}

void read_tree(Reader& r, Scenario& sc, const json& tree) {
  const InputLimits& limits = r.limits();
  const json& t = r.object(tree, "/tree", "the package tree");
  if (t.size() > limits.max_tree_entries)
    throw InputLimitError("max-tree-entries", r.file(), r.src().position_of("/tree"), "/tree",
                          fmt::format("the tree has {} entries; the limit is {} (--max-tree-entries)", t.size(),
                                      limits.max_tree_entries));
  // normalised name -> (is a package, the key that gave it); sized up
  // front, as growing these tables was a visible part of load time.
  std::unordered_map<std::string, std::pair<bool, const std::string*>> packages;
  packages.reserve(t.size());
  sc.tree.reserve(t.size());
  std::vector<std::string> pointers;
  pointers.reserve(t.size());
  for (auto& [k, v] : t.items()) {
    std::string ptr = "/tree/" + pointer_token(k);
    if (reading::characters(k) > limits.max_name_length) r.too_long(ptr, "a tree key", reading::characters(k));
    std::optional<std::string> name = python_module_name(k);
    if (!name) r.fail(ptr, fmt::format("a tree key must be a Python dotted module name, found \"{}\"", k));
    auto [entry, fresh] = packages.try_emplace(*name, false, &k);
    if (!fresh)
      r.fail(ptr, fmt::format("{} and {} are the same module, \"{}\", once normalised as Python "
                              "normalises identifiers (NFKC)",
                              reading::ascii_quoted(*entry->second.second), reading::ascii_quoted(k), *name));
    if (name->starts_with("_impsim_filler_"))
      r.fail(ptr, "names starting with _impsim_filler_ are reserved for filler modules");
    r.object(v, ptr, "a tree entry {\"package\": bool, \"body\": [steps]}");
    r.expect_keys(v, ptr, {"package", "body"}, "a tree entry");
    TreeEntry e;
    e.name = *name;
    pointers.push_back(ptr);
    if (v.contains("package")) e.package = r.boolean(v["package"], ptr + "/package", "\"package\"");
    if (v.contains("body")) e.body = r.steps(v["body"], ptr + "/body");
    entry->second.first = e.package;
    sc.tree.push_back(std::move(e));
  }
  for (size_t i = 0; i < sc.tree.size(); ++i) {
    const TreeEntry& e = sc.tree[i];
    auto dot = e.name.rfind('.');
    if (dot == std::string::npos) continue;
    std::string parent = e.name.substr(0, dot);
    auto it = packages.find(parent);
    const std::string& ptr = pointers[i];
    if (it == packages.end())
      r.fail(ptr, fmt::format("\"{}\" needs its parent \"{}\" in the tree (as a package)", e.name, parent));
    if (!it->second.first)
      r.fail(ptr, fmt::format("\"{}\" is inside \"{}\", which is not a package; give \"{}\" \"package\": true", e.name,
                              parent, parent));
  }
}

void read_blocked(Reader& r, Scenario& sc, const json& v) {
  sc.blocked = r.names(v, "/blocked", "the blocked module names");
}

void read_program(Reader& r, Scenario& sc, const json& v) { sc.program = r.steps(v, "/program"); }

// Simulated threads: each name an ASCII identifier (it names the thread in
// schedules, reports and traces), "main" being the program's.
constexpr size_t kMaxThreads = 16;

bool is_thread_name(std::string_view s) {
  if (s.empty() || s.size() > 64 || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

void read_threads(Reader& r, Scenario& sc, const json& v) {
  r.object(v, "/threads", "thread name -> the steps the thread runs");
  if (v.size() + 1 > kMaxThreads)
    r.fail("/threads",
           fmt::format("{} threads and the main one; impsim simulates at most {} threads (each schedule search "
                       "grows exponentially with them)",
                       v.size(), kMaxThreads));
  for (auto& [name, steps] : v.items()) {
    const std::string ptr = "/threads/" + pointer_token(name);
    if (name == "main") r.fail(ptr, "\"main\" is the program's own thread; name the others anything else");
    if (!is_thread_name(name))
      r.fail(ptr, fmt::format("a thread's name is letters, digits and \"_\" (up to 64, not starting with a digit), "
                              "found \"{}\"",
                              name));
    // A thread's steps are its target function's: no lazy import there.
    ++r.function_depth_;
    r.function_what_ = "the target function of thread \"" + name + "\"";
    sc.threads.push_back(ThreadText{name, ptr, r.steps(steps, ptr)});
    --r.function_depth_;
  }
}

// Every start and join, a step or a hook's action, names a declared thread.
void check_thread_refs(Reader& r, const Scenario& sc) {
  std::vector<std::string> names;
  for (const ThreadText& t : sc.threads) names.push_back(t.name);
  auto check_name = [&](const std::string& pointer, const std::string& name, bool start) {
    if (std::find(names.begin(), names.end(), name) != names.end()) return;
    const char* kind = start ? "start" : "join";
    if (name == "main")
      r.fail(pointer + "/" + kind, fmt::format("the main thread is running already: it cannot be {}ed", kind));
    r.fail(pointer + "/" + kind, fmt::format("unknown thread \"{}\"{}; {}", name, did_you_mean_note(name, names, '"'),
                                             names.empty() ? std::string("declare it under \"threads\"")
                                                           : "expected one of: " + name_list(names)));
  };
  auto check = [&](const Step& s) {
    if (s.kind == StepKind::Start || s.kind == StepKind::Join)
      check_name(s.pointer, s.detail().thread, s.kind == StepKind::Start);
  };
  each_step(sc.program, check);
  for (const ThreadText& t : sc.threads) each_step(t.program, check);
  for (const TreeEntry& e : sc.tree) each_step(e.body, check);
  for (const HookText& h : sc.hooks.hooks)
    for (const HookActionText& a : h.actions)
      if (a.kind == ActionKind::Start || a.kind == ActionKind::Join)
        check_name(a.pointer, a.target, a.kind == ActionKind::Start);
}

void read_variants(Reader& r, Scenario& sc, const json& v) {
  r.array(v, "/variants", "the variants to run");
  if (v.empty()) r.fail("/variants", "name at least one variant");
  sc.variants.clear();
  std::set<std::string> seen;  // a look-up, not a scan: hook fixes can name any number of hooks
  for (size_t i = 0; i < v.size(); ++i) {
    std::string ptr = "/variants/" + std::to_string(i);
    std::string name = r.string(v[i], ptr, "a variant");
    const std::optional<Variant> variant = parse_variant(name);
    if (!variant)
      r.fail(ptr, fmt::format("unknown variant \"{}\"{}; expected one of: {}", name, nearest_variant_note(name, '"'),
                              variant_list()));
    if (!seen.insert(name).second) r.fail(ptr, fmt::format("variant \"{}\" is listed twice", name));
    sc.variants.push_back(*variant);
  }
}

// The variant `name` spells, if `sc` runs it: `expect` and `expect_outcome`
// are keyed by the names `variants` lists.
std::optional<Variant> scenario_variant(const Scenario& sc, const std::string& name) {
  std::optional<Variant> v = parse_variant(name);
  if (v && std::find(sc.variants.begin(), sc.variants.end(), *v) == sc.variants.end()) return std::nullopt;
  return v;
}

// "probe.lookups" or "lookups", in `report` or `expect`.
void check_counter(const Reader& r, const Scenario& sc, const std::string& c, const std::string& ptr) {
  auto dot = c.find('.');
  std::string counter = dot == std::string::npos ? c : c.substr(dot + 1);
  if (dot != std::string::npos && !r.labels_.count(c.substr(0, dot)))
    r.fail(ptr, fmt::format("\"{}\" names label \"{}\", which no step has{}", c, c.substr(0, dot),
                            did_you_mean_note(c.substr(0, dot), r.label_order_, '"')));
  if (!is_counter_name(counter) && !is_hook_counter_name(sc, counter))
    r.fail(ptr, fmt::format("unknown counter \"{}\"{}; expected {}, optionally after \"LABEL.\"", counter,
                            did_you_mean_note(counter, counter_names(sc), '"'), counter_list(sc)));
}

void read_report(Reader& r, Scenario& sc, const json& v) {
  r.array(v, "/report", "the report rows");
  for (size_t i = 0; i < v.size(); ++i) {
    std::string ptr = "/report/" + std::to_string(i);
    const json& row = r.object(v[i], ptr, "a report row {\"counter\", \"title\"}");
    r.expect_keys(row, ptr, {"counter", "title"}, "a report row");
    if (!row.contains("counter")) r.fail(ptr, "a report row needs \"counter\"");
    ReportRow rr;
    rr.counter = r.string(row["counter"], ptr + "/counter", "a counter name");
    check_counter(r, sc, rr.counter, ptr + "/counter");
    rr.title = row.contains("title") ? r.string(row["title"], ptr + "/title", "a title") : rr.counter;
    sc.report.push_back(rr);
  }
}

// An exact expected count, of any size: nlohmann reads an integer past
// 2^64 as a double, so its digits are taken from the text, where they are
// exact (the fast engine's counts pass 2^64 and --bless writes them).
Count expected_count(Reader& r, const json& v, const std::string& ptr) {
  if (v.is_number_unsigned()) return Count(v.get<uint64_t>());
  if (v.is_number_float()) {
    const std::string& text = r.src().text();
    size_t at = r.src().offset_of(ptr);
    size_t end = text.find_first_of(",]} \t\r\n", at);
    std::string_view token = std::string_view(text).substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (std::optional<Count> n = Count::from_digits(token)) return *n;
    if (token.starts_with('-') && Count::from_digits(token.substr(1)))
      r.fail(ptr, fmt::format("expected an expected count >= 0, found {}", token));
  }
  return Count(static_cast<uint64_t>(r.integer(v, ptr, "an expected count", 0)));
}

// parse_budget's refusals, at the key for an unknown key and at the value
// otherwise.
std::function<void(const std::string&, const std::string&, BudgetFault)> budget_fault(const Reader& r) {
  return [&r](const std::string& at, const std::string& msg, BudgetFault fault) {
    if (fault == BudgetFault::AtKey) r.fail_at_key(at, msg);
    r.fail(at, msg);
  };
}

void read_expect(Reader& r, Scenario& sc, const json& v) {
  const json& ex = r.object(v, "/expect", "the expectations (variant -> counter -> value)");
  for (auto& [name, counters] : ex.items()) {
    std::string vptr = "/expect/" + pointer_token(name);
    const std::optional<Variant> variant = scenario_variant(sc, name);
    if (!variant)
      r.fail(vptr, fmt::format("expectations for variant \"{}\", which this scenario does not run{}", name,
                               did_you_mean_note(name, variant_names(sc.variants), '"')));
    r.object(counters, vptr, "counter -> expected value");
    for (auto& [counter, value] : counters.items()) {
      std::string ptr = vptr + "/" + pointer_token(counter);
      check_counter(r, sc, counter, ptr);
      Expectation e{*variant, counter, {}, ptr, {}};
      size_t want = sc.sweep ? sc.sweep->values.size() : 1;
      // A budget ({"<=": 20}): one object for every sweep value, or one entry of the list.
      auto budget = [&](const json& b, const std::string& p) {
        return parse_budget(b, p, sc.variants, budget_fault(r));
      };
      if (value.is_object()) {
        e.values.push_back(std::nullopt);
        e.budgets.push_back(budget(value, ptr));
      } else if (value.is_array()) {
        if (value.size() != want)
          r.fail(ptr, fmt::format("expected {} {}, one per sweep value, found {}", want,
                                  plural(want, "value", "values"), value.size()));
        e.budgets.resize(value.size());
        e.listed = true;
        for (size_t i = 0; i < value.size(); ++i) {
          if (value[i].is_null()) {
            e.values.push_back(std::nullopt);
          } else if (value[i].is_object()) {
            e.values.push_back(std::nullopt);
            e.budgets[i] = budget(value[i], ptr + "/" + std::to_string(i));
          } else {
            e.values.push_back(expected_count(r, value[i], ptr + "/" + std::to_string(i)));
          }
        }
      } else {
        if (sc.sweep) r.fail(ptr, fmt::format("the scenario sweeps {} values: expected a list of {}", want, want));
        e.values.push_back(expected_count(r, value, ptr));
      }
      sc.expect.push_back(std::move(e));
    }
  }
}

// The hook language's keys (read_hooks.cc): read together, with their
// cross-references, once the program and variants are read (read_hooks,
// from the loop below, before "report" needs the hook counters' names).
void read_by_hook_language(Reader&, Scenario&, const json&) {}

// A key whose value names one of a fixed set (`what`: "finder revision"):
// the one named, or a refusal listing them all, with the nearest.
template <class T>
T read_one_of(Reader& r, const json& v, const std::string& ptr, const std::string& what,
              std::optional<T> (*parse)(const std::string&), const std::vector<std::string>& names,
              const std::string& list) {
  const std::string name = r.string(v, ptr, "the " + what);
  const std::optional<T> named = parse(name);
  if (!named)
    r.fail(ptr, fmt::format("unknown {} \"{}\"{}; expected one of: {}", what, name, did_you_mean_note(name, names, '"'),
                            list));
  return *named;
}

void read_revision(Reader& r, Scenario& sc, const json& v) {
  sc.revision = read_one_of(r, v, "/revision", "finder revision", parse_revision, revision_names(), revision_list());
}

void read_cpython(Reader& r, Scenario& sc, const json& v) {
  sc.cpython = read_one_of(r, v, "/cpython", "CPython version", parse_cpython, cpython_names(),
                           cpython_list() + "; or a release X.Y.P of one of them (3.13.5, 3.15.0rc1)");
}

void read_allow_error(Reader& r, Scenario& sc, const json& v) {
  sc.allow_error = r.boolean(v, "/allow_error", "\"allow_error\"");
}

void read_expect_outcome(Reader& r, Scenario& sc, const json& v) {
  const json& eo =
      r.object(v, "/expect_outcome", "variant -> \"identical\" or \"differs\" (against the first variant)");
  size_t want = sc.sweep ? sc.sweep->values.size() : 1;
  for (auto& [name, value] : eo.items()) {
    std::string ptr = "/expect_outcome/" + pointer_token(name);
    const std::optional<Variant> variant = scenario_variant(sc, name);
    if (!variant)
      r.fail(ptr, fmt::format("an outcome verdict for variant \"{}\", which this scenario does not run", name));
    if (*variant == sc.variants.front())
      r.fail(ptr, fmt::format("\"{}\" is the first variant, the one the others are compared with", name));
    Scenario::OutcomeExpectation e{*variant, {}, ptr};
    auto verdict = [&](const json& x_json, const std::string& p) {
      std::string x = r.string(x_json, p, "a verdict");
      if (x != "identical" && x != "differs")
        r.fail(p, fmt::format("expected \"identical\" or \"differs\", found \"{}\"", x));
      return x;
    };
    if (value.is_array()) {
      if (value.size() != want)
        r.fail(ptr, fmt::format("expected {} {}, one per sweep value, found {}", want,
                                plural(want, "verdict", "verdicts"), value.size()));
      for (size_t i = 0; i < value.size(); ++i) e.verdicts.push_back(verdict(value[i], ptr + "/" + std::to_string(i)));
    } else {
      e.verdicts.push_back(verdict(value, ptr));
    }
    sc.expect_outcome.push_back(std::move(e));
  }
}

void read_expect_equivalent(Reader& r, Scenario& sc, const json& v) {
  sc.expect_equivalent = r.boolean(v, "/expect_equivalent", "\"expect_equivalent\"");
}

// expect_schedules: variant -> {"hang"|"deadlock"|"uncaught": "reachable" |
// "never", "classes": N or a budget}. Only a threaded scenario has
// schedules to search.
void read_expect_schedules(Reader& r, Scenario& sc, const json& v) {
  const json& es = r.object(v, "/expect_schedules",
                            "variant -> what a search of its schedules may find ({\"hang\": \"reachable\"})");
  if (sc.threads.empty())
    r.fail("/expect_schedules",
           "\"expect_schedules\" is for a scenario with \"threads\": this one has one schedule, which `impsim run` "
           "runs; use \"expect\" and \"allow_error\" there");
  for (auto& [name, value] : es.items()) {
    const std::string ptr = "/expect_schedules/" + pointer_token(name);
    // Any design: `compare` searches every design's schedules, not only
    // those "variants" lists.
    const std::optional<Variant> variant = parse_variant(name);
    if (!variant)
      r.fail(ptr, fmt::format("unknown variant \"{}\"{}; expected one of: {}", name, nearest_variant_note(name, '"'),
                              variant_list()));
    const json& e = r.object(value, ptr, "what a search of this variant's schedules may find");
    r.expect_keys(e, ptr, {"hang", "deadlock", "uncaught", "classes"}, "a schedule expectation");
    if (e.empty())
      r.fail(ptr, "expected at least one of \"hang\", \"deadlock\", \"uncaught\" (\"reachable\" or \"never\") or "
                  "\"classes\"");
    ScheduleExpectation x{*variant, ptr, {}, {}, std::nullopt, {}};
    for (Finding f : kFindings) {
      const char* key = finding_name(f);
      if (!e.contains(key)) continue;
      const std::string p = ptr + "/" + key;
      const std::string reach = r.string(e[key], p, "\"reachable\" or \"never\"");
      const std::optional<ReachExpected> said = parse_reach(reach);
      if (!said) r.fail(p, fmt::format("expected \"reachable\" or \"never\", found \"{}\"", reach));
      x.findings[static_cast<size_t>(f)] = *said;
      x.pointers[static_cast<size_t>(f)] = p;
    }
    if (e.contains("classes")) {
      const std::string p = ptr + "/classes";
      const json& c = e["classes"];
      if (c.is_object()) {
        if (c.contains("ratio_to"))
          r.fail(p + "/ratio_to", "the outcome classes of a search are a count of their own: a bound, not a ratio");
        x.classes = parse_budget(c, p, sc.variants, budget_fault(r));
      } else {
        const int64_t n = r.integer(c, p, "a number of outcome classes, or bounds such as {\"<=\": 3}", 1);
        x.classes = Budget{{Bound{"==", Fraction{static_cast<uint64_t>(n), 1}}}, std::nullopt};
      }
      x.classes_pointer = p;
    }
    sc.expect_schedules.push_back(std::move(x));
  }
}

struct TopKey {
  std::string_view key;
  void (*read)(Reader&, Scenario&, const json&);  // reads the value into the scenario read so far
  const char* missing = nullptr;                  // the message when the key is absent; nullptr: optional
};

// In the order they are read.
constexpr std::array kTopKeys = {
    TopKey{"impsim", read_impsim, "missing \"impsim\": the format version, 1"},
    TopKey{"$schema", read_schema},
    TopKey{"name", read_name},
    TopKey{"description", read_description},
    TopKey{"params", read_params},
    TopKey{"sweep", read_sweep},
    TopKey{"sys_modules", read_sys_modules},
    TopKey{"tree", read_tree, "missing \"tree\": the package tree PathFinder can find (may be {})"},
    TopKey{"blocked", read_blocked},
    TopKey{"program", read_program, "missing \"program\": the top-level steps"},
    TopKey{"threads", read_threads},
    TopKey{"variants", read_variants},
    TopKey{"hooks", read_by_hook_language},
    TopKey{"finders", read_by_hook_language},
    TopKey{"meta_path", read_by_hook_language},
    TopKey{"builtin", read_by_hook_language},
    TopKey{"real", read_by_hook_language},  // tools/check/crosscheck --zoo's; impsim reads nothing in it
    TopKey{"report", read_report},
    TopKey{"expect", read_expect},
    TopKey{"revision", read_revision},
    TopKey{"cpython", read_cpython},
    TopKey{"allow_error", read_allow_error},
    TopKey{"expect_outcome", read_expect_outcome},
    TopKey{"expect_equivalent", read_expect_equivalent},
    TopKey{"expect_schedules", read_expect_schedules},
};

constexpr std::array<std::string_view, kTopKeys.size()> top_key_names() {
  std::array<std::string_view, kTopKeys.size()> out{};
  for (size_t i = 0; i < kTopKeys.size(); ++i) out[i] = kTopKeys[i].key;
  return out;
}

}  // namespace

namespace reading {

Scenario read_top_keys(Reader& r, const json& root, TopKeySource* own) {
  const std::string& file = r.file();
  r.object(root, "", "a scenario");
  static constexpr auto kKeyNames = top_key_names();
  r.expect_keys(root, "", kKeyNames.data(), kKeyNames.data() + kKeyNames.size(), "a scenario");
  Scenario sc;
  sc.file = file;
  auto given = [&](std::string_view key) { return (own && own->has(key)) || root.contains(key); };
  for (const TopKey& k : kTopKeys) {
    if (k.key == "report") read_hooks(r, root, sc, given("variants"));
    if (own && own->has(k.key))
      own->read(k.key, r, sc);
    else if (root.contains(k.key))
      k.read(r, sc, root[std::string(k.key)]);
    else if (k.missing)
      r.fail("", k.missing);
  }
  if (sc.name.empty()) {
    sc.name = file;
    if (auto slash = sc.name.rfind('/'); slash != std::string::npos) sc.name = sc.name.substr(slash + 1);
    if (sc.name.ends_with(".json")) sc.name.resize(sc.name.size() - 5);
  }
  sc.labels = r.label_order_;
  sc.lazy = r.lazy_used_;
  for (const HookText& h : sc.hooks.hooks)
    for (const HookActionText& a : h.actions) sc.lazy = sc.lazy || a.kind == ActionKind::Use;
  check_thread_refs(r, sc);
  for (auto& [param, ptr] : r.param_refs_)
    if (!sc.params.count(param))
      r.fail(ptr, fmt::format("\"${}\" names a parameter that \"params\" does not define", param));
  return sc;
}

}  // namespace reading

Scenario parse_scenario_dom(const std::string& text, const std::string& file, const InputLimits& limits) {
  if (text.size() > limits.max_file_bytes)
    throw InputLimitError("max-file-bytes", file, {}, "",
                          fmt::format("the file is {} bytes; the limit is {} bytes (--max-file-bytes)", text.size(),
                                      limits.max_file_bytes));
  JsonSource src(text);
  std::optional<JsonScanProblem> problem = src.scan(limits.max_json_depth);
  if (problem && problem->not_utf8) throw InputError(file, src.position_at(problem->offset), "", problem->message);
  if (problem && problem->too_deep)
    throw InputLimitError("max-json-depth", file, src.position_at(problem->offset), problem->pointer,
                          problem->message + " (--max-json-depth)");
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line 3, column 5: ...".
    if (auto at = what.find(": "); at != std::string::npos) what = what.substr(at + 2);
    throw InputError(file, src.position_at(e.byte == 0 ? 0 : e.byte - 1), "", "invalid JSON: " + what);
  } catch (const json::exception& e) {
    // Not a syntax error but a value nlohmann cannot hold, such as a number
    // too large for a double (out_of_range.406 "number overflow parsing
    // '1E400'"): point at the text it quotes, if it can be found.
    std::string what = e.what();
    if (auto at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    size_t offset = 0;
    if (auto q = what.find('\''); q != std::string::npos)
      if (auto q2 = what.find('\'', q + 1); q2 != std::string::npos)
        if (auto found = text.find(what.substr(q + 1, q2 - q - 1)); found != std::string::npos) offset = found;
    throw InputError(file, src.position_at(offset), "", "invalid JSON: " + what);
  }
  if (problem) throw InputError(file, src.position_at(problem->offset), problem->pointer, problem->message);

  Reader r(src, file, limits);
  return reading::read_top_keys(r, root, nullptr);
}

// The event reader takes the common case; anything it does not take on
// itself (a problem, an escape, a step kind it leaves to the DOM reader's
// code) is read again here, so that every message is the DOM reader's.
Scenario parse_scenario(const std::string& text, const std::string& file, const InputLimits& limits) {
  if (std::optional<Scenario> sc = parse_scenario_events(text, file, limits)) return std::move(*sc);
  return parse_scenario_dom(text, file, limits);
}

}  // namespace impsim
