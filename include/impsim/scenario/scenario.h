// A scenario as written in the file (format v1, docs/scenario-format.md):
// plain structs holding text, exactly what the reader validated. Names are
// still strings here; model.h turns them into interned state.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "impsim/scenario/axes.h"
#include "impsim/scenario/expectations.h"
#include "impsim/scenario/hook_language.h"
#include "impsim/scenario/schedule_expectations.h"
#include "impsim/scenario/variant.h"

namespace impsim {

// An integer field that may read a parameter ("$k"), or a parameter with
// one constant applied ("$N-1", "$N+1", "$k*2"): what a sweep of N copies
// needs to say "install once, then N-1 more times" without a second,
// dependent parameter that a --set of one would silently desynchronise.
struct IntField {
  int64_t value = 0;
  std::string param;    // empty when a literal
  char op = 0;          // 0 (the parameter as it is), '+', '-' or '*'
  int64_t operand = 0;  // the constant applied by op
  std::string pointer;  // where it was written, for error messages
  std::string text() const { return "$" + param + (op ? op + std::to_string(operand) : std::string()); }
};

// One byte: the compiled step (model.h) holds it among its bools.
enum class StepKind : uint8_t {
  Import,
  FindSpec,
  ImportModule,  // importlib.import_module(NAME): _gcd_import, straight to _find_and_load
  Enable,
  Disable,
  Guard,
  Block,
  Call,
  // threading: Thread(target=...).start() and .join() of a scenario's thread
  Start,
  Join,
  // `for i in range(1, N + 1):` over a block of steps (N is its `repeat`)
  Do,
  // PEP 810 (CPython 3.15): `lazy import NAME [as BIND]` at module level,
  // the expression NAME (a dotted read: the first use resolves),
  // sys.set_lazy_imports / sys.set_lazy_imports_filter (lazy_imports.h),
  // `lazy from NAME import X [as Y], ...`, `__lazy_modules__ = [...]`, and
  // `globals()[NAME].resolve()`
  LazyImport,
  Use,
  SetLazyImports,
  SetLazyFilter,
  LazyFrom,
  SetLazyModules,
  Resolve,
  // sys.meta_path and sys.modules edits (hook_language.h, read_hooks.cc)
  Install,
  Uninstall,
  Insert,
  Append,
  Remove,
  Unload,
  New,    // a module body's `ID = Hook()`: a new object of ID's hook, which ID names from then on
  Reload  // importlib.reload(sys.modules[NAME])
};

inline bool is_meta_path_step_kind(StepKind k) { return k >= StepKind::Install; }

// What only some kinds of step use: enable's and guard's arguments,
// block's names, repeat and nest, the sys.meta_path steps'. Apart from
// Step, as most steps have none of it: a 50,000-module tree's 25,000
// one-import bodies took 296 bytes a step with these inline, 112 without.
struct StepDetail {
  // enable and guard: the scope; nullopt is Python's None (global).
  std::optional<std::vector<std::string>> scope;
  std::vector<std::string> block;  // block: names to add; enable: blocked_modules
  std::optional<IntField> repeat;
  std::optional<IntField> nest;
  // install, uninstall, insert, append, remove: the finder object's id,
  // and for "ID#k" the k-th object a `new` step made for ID (0: the
  // object the id names when the step runs, the newest; kIteration:
  // "ID#{i}", the iteration of the `do` block the step is in).
  std::string finder;
  int64_t instance = 0;
  static constexpr int64_t kIteration = -1;
  std::vector<std::string> unload;  // unload: the names
  int64_t at = 0;                   // insert: the index (Python's list.insert rules)
  bool guard_enable = true;
  bool has_blocked_modules = false;  // enable: blocked_modules was passed (null: None)
  bool all_copies = false;           // remove: "copies": "all"
  bool submodules = false;           // unload: their submodules too
  bool same_class = false;           // new: "same_class": true
  std::string thread;                // start, join: the thread's name
  std::string bind_as;               // lazy_import: "as" (empty: the name's first part)
  bool lazy_all = false;             // set_lazy_imports: "all" (else "normal")
  // set_lazy_imports_filter: the names its filter answers False for, which
  // stay eager; nullopt: the filter is cleared (None)
  std::optional<std::vector<std::string>> filter_eager;
  // lazy_from: each name imported and the name it binds ("as", else itself)
  std::vector<std::pair<std::string, std::string>> from_names;
};

struct Step {
  std::string pointer;     // JSON pointer of this step, e.g. "/program/0/body/1"
  // import, find_spec, call, reload: the module name ("{i}" in a do block's
  // steps); install: a name the hook claims from then on, or empty
  std::string target;
  std::vector<Step> body;  // guard, call and do
  int label = -1;          // index into Scenario::labels
  StepKind kind = StepKind::Import;
  bool optional = false;

  // The step's detail; a step that has none reads the defaults.
  const StepDetail& detail() const { return detail_ ? *detail_ : kNoDetail; }
  // The detail to write into, made on first use. Copied first when another
  // step shares it (copying a Step shares its detail), so a Step keeps the
  // meaning of a value.
  StepDetail& mutable_detail();

 private:
  static const StepDetail kNoDetail;
  std::shared_ptr<StepDetail> detail_;
};

// A thread of the scenario: `threading.Thread(target=program)`, run when a
// `start` step starts it (the program is thread "main").
struct ThreadText {
  std::string name;
  std::string pointer;  // "/threads/NAME"
  std::vector<Step> program;
};

struct TreeEntry {
  std::string name;
  bool package = false;
  std::vector<Step> body;
};

struct Sweep {
  std::string param;
  std::vector<int64_t> values;
  std::string title;
};

struct ReportRow {
  std::string counter;  // "lookups" or "probe.lookups"
  std::string title;
};

struct Expectation {
  Variant variant;
  std::string counter;
  // One value, or one per sweep value; nullopt entries are not checked
  // unless budgets[i] holds a budget (expectations.h) instead. Exact at any
  // size: the fast engine's counts pass 2^64, and --bless writes them.
  std::vector<std::optional<Count>> values;
  std::string pointer;
  std::vector<std::optional<Budget>> budgets;  // empty, or as long as values
  bool listed = false;  // written as a list (one entry per sweep value): entries are pointer + "/i"
  // The budget at sweep index i, if that entry is one.
  const Budget* budget_at(size_t i) const { return i < budgets.size() && budgets[i] ? &*budgets[i] : nullptr; }
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  std::map<std::string, int64_t> params;
  std::vector<std::string> param_order;
  std::optional<Sweep> sweep;
  std::vector<std::string> preloaded;
  IntField filler;
  std::vector<std::string> torch_modules;
  std::vector<TreeEntry> tree;
  std::vector<std::string> blocked{"tvm_ffi"};
  std::vector<Step> program;
  std::vector<ThreadText> threads;  // impsim extension: threads besides "main", in the file's order
  std::vector<Variant> variants{Variant::Before, Variant::After};
  std::vector<ReportRow> report;
  std::vector<Expectation> expect;
  std::vector<std::string> labels;        // label names, by index
  std::optional<Revision> revision;       // impsim extension: the finder revision (default b52ce17)
  std::optional<CPython> cpython;         // impsim extension: the CPython version (default 3.11)
  bool allow_error = false;               // impsim extension: an uncaught error is the expected end
  std::optional<bool> expect_equivalent;  // impsim extension
  // impsim extension: variant -> "identical" | "differs" against the first
  // variant, one per sweep value (or one for all).
  struct OutcomeExpectation {
    Variant variant;
    std::vector<std::string> verdicts;
    std::string pointer;
  };
  std::vector<OutcomeExpectation> expect_outcome;
  // impsim extension, threaded scenarios: what a search of each design's
  // schedules may find (schedule_expectations.h).
  std::vector<ScheduleExpectation> expect_schedules;
  HooksText hooks;  // impsim extension: finder objects and hooks as data
  bool lazy = false;  // a PEP 810 step is used: the run reports its "lazy" counts, on CPython 3.15 only
  // The text parse_scenario_file read: a file is read once (a FIFO or a pipe
  // has nothing to give a second time), and --bless and the GitHub
  // annotations work from this. Shared: a sweep copies the scenario.
  std::shared_ptr<const std::string> source;
};

// Calls `f` on each of `steps` and, depth first, on the steps of its body.
// A template, not a std::function: it visits every step of every tree
// body, and on a 50,000-module tree an indirect call per step cost 9 M
// instructions for checks that compare a step's kind.
template <class Visit>
void each_step(const std::vector<Step>& steps, const Visit& f) {
  for (const Step& s : steps) {
    f(s);
    each_step(s.body, f);
  }
}

// A hook scenario in which Paddle's finder takes no part (HooksText::proxy_used):
// its counters are all zero there and its designs all run alike.
inline bool hook_only(const Scenario& sc) { return sc.hooks.used && !sc.hooks.proxy_used; }

// The rows a sweep table, a chart or a blessed `expect` show: the
// scenario's `report`; when it names none, lookups, or in a hook scenario
// without P (where lookups is always 0) searches, finder_calls:ID per
// finder object and max_depth.
std::vector<ReportRow> report_rows(const Scenario& sc);

// The counters `sc` can name in "report", "expect" and --counters (a hook
// scenario's with its finder ids), for "did you mean" when one is misspelt.
std::vector<std::string> counter_names(const Scenario& sc);

// The counters a hook scenario may name besides is_counter_name's:
// searches, finder_calls, finder_calls:ID, lookup_depth.
bool is_hook_counter_name(const Scenario& sc, const std::string& name);

// What an error about an unknown counter lists as expected: counter_list(),
// plus, in a hook scenario, the hook counters with this scenario's finder ids.
std::string counter_list(const Scenario& sc);

// Why variant `v` cannot run on `sc` (a hook design on a scenario without
// hooks; ":HOOK" naming no hook of it; a design of Paddle's finder on a
// hook scenario it takes no part in), or nullopt.
std::optional<std::string> hook_variant_problem(const Scenario& sc, const Variant& v);

}  // namespace impsim
