// `impsim trace`: one scenario run per variant with a TraceSink attached,
// written as an indented text log, a Chrome Trace Event file, a Graphviz
// lookup tree or `python -X importtime` lines. Every format is
// byte-deterministic: no wall-clock time, no addresses.
//
// The simulated clock (chrome and importtime) is the cost model's: one tick
// per name a sys.modules walk examines (the `comparisons` counter) and one
// per find_spec call of any finder in sys.meta_path.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "impsim/engine/engine.h"
#include "impsim/run/run.h"
#include "impsim/scenario/scenario.h"

namespace impsim {

enum class TraceFormat { Text, Chrome, Dot, ImportTime, Explore };
std::optional<TraceFormat> parse_trace_format(const std::string& s);

struct TraceOptions {
  TraceFormat format = TraceFormat::Text;
  // text and importtime: lines per variant; chrome: events per variant;
  // dot: the events each variant's tree is drawn from; 0: no limit. Unset:
  // 2,000 lines of text, 200,000 chrome events or importtime lines,
  // 1,000,000 dot events. Past it a trace only counts (TraceTally).
  std::optional<uint64_t> max_lines;
  uint64_t max_nodes = 300;        // dot: nodes per variant before subtrees are collapsed
  bool fold = true;                // explore: fold repeated identical subtrees
  uint64_t max_bytes = 2'000'000;  // explore: bytes of event rows per variant before the page is cut; 0: no limit
};

// The simulated clock every timed format shares.
struct SimClock {
  uint64_t now = 0;
  void ask() { now += 1; }
  void walk(uint64_t names) { now += names; }
};

// A TraceSink that also hears where each variant's run starts and ends.
class TraceWriter : public TraceSink {
 public:
  virtual void begin(const Scenario& /*sc*/, const Model& /*model*/, const std::vector<Variant>& /*variants*/) {}
  virtual void begin_variant(const Model& /*model*/, Variant /*v*/, size_t /*index*/) {}
  virtual void end_variant(const Engine& /*engine*/) {}
  virtual void end() {}
};

std::unique_ptr<TraceWriter> make_text_writer(std::ostream& out, const TraceOptions& o);
std::unique_ptr<TraceWriter> make_chrome_writer(std::ostream& out, const TraceOptions& o);
std::unique_ptr<TraceWriter> make_dot_writer(std::ostream& out, const TraceOptions& o);
std::unique_ptr<TraceWriter> make_importtime_writer(std::ostream& out, const TraceOptions& o);
// `impsim explore`: the self-contained HTML page (sim/trace/trace_explore.cc).
std::unique_ptr<TraceWriter> make_explore_writer(std::ostream& out, const TraceOptions& o);

// A trace shows a run; it does not judge it: the scenario's expectations
// are not part of its status (run, compare and sweep check them).
struct TraceResult {
  int status = 0;                // 0, 1 (an uncaught exception the scenario does not allow), 3 (a limit)
  std::vector<VariantRun> runs;  // one per variant, as traced (--stats)
  // Indices in `runs` of the runs that make the status: stopped by a limit,
  // or raised what the scenario does not allow. A trace does not word them
  // as failures: the command does, as it does for every command (failures.h).
  std::vector<size_t> failed;
  std::vector<VariantRun> failed_runs() const;  // those runs, in order
};

// Compiles the scenario for `options.overrides` (the scenario's defaults
// otherwise; a sweep is not run, its parameter keeps its default) and runs
// each variant with the format's writer. Throws InputError for a bad
// --set/--variant, ModelLimitError past a model limit.
TraceResult write_trace(std::ostream& out, const Scenario& sc, const RunOptions& options, const TraceOptions& topt);

// Shared by the writers: how a step, a meta_path and a parameter set read.
namespace trace_detail {
// "[P P | Builtin Frozen Path]"; with `at` >= 0 the entry at that index is
// starred: "[P *P | Builtin Frozen Path]". Past 8 copies: "[P x12 | ...]".
std::string meta_path_text(int64_t copies, int64_t at = -1);
// Hook scenarios: the live list of finder objects by id, the entry at `at` starred.
std::string meta_path_text(const Engine& e, int64_t at);
// The same for any list of finder objects (a 3.14 snapshot).
std::string meta_path_text(const Engine& e, const MetaPath& list, int64_t at);
// Whether the finder an ask read still stands at its index of the list the
// loop walks (TraceSink::ask_begin): not when another thread changed
// sys.meta_path while this one waited for the global import lock.
bool ask_stands(const MetaPath& walked, int64_t index, FinderId finder);
// The list an ask walks, as the scenario represents it, its entry starred
// where the asked finder stands, then a note when the reader would
// otherwise be misled: " (read at i=2 before ...)" where it does not
// stand, " (a snapshot: sys.meta_path is now [...])" where the loop walks
// 3.14's copy and the list has changed since.
std::string ask_list_text(const Engine& e, const MetaPath& walked, int64_t index, FinderId finder);
// Why the list an ask names is not where its finder stands, or is not
// sys.meta_path: the note ask_list_text appends, without its " (...)";
// empty when there is nothing to say.
std::string ask_note(const Engine& e, const MetaPath& walked, int64_t index, FinderId finder);
// The method _find_spec calls on a finder object: "find_module" for a
// legacy hook ("api": "find_module", through _find_spec_legacy), else "find_spec".
const char* finder_method(const Engine& e, FinderId f);
// sys.meta_path now, as the scenario represents it: the list of objects
// (hook scenarios) or `copies` copies of P before the interpreter's three.
std::string meta_path_now(const Engine& e, int64_t copies, int64_t at = -1);
// Hook scenarios: find_spec calls per finder object, for every hook object
// and any other object the engine counted a call of, in FinderId order.
std::vector<std::pair<std::string, Count>> finder_calls_by_object(const Engine& e);
// "9 searches, 10 finder calls (dh 10), deepest _find_spec nesting 3".
std::string hook_totals_text(const Engine& e);
// "import pkg", "find_spec('pkg.missing')", "with use_torch_proxy_guard(...)".
std::string step_text(const Model& model, const CStep& step);
const char* finder_name(FinderClass k);
// Why P answered: a short key ("not-torch") and the sentence the text trace
// and the explorer show ("not a torch name").
const char* reason_key(FindReason r);
const char* reason_text(FindReason r);
// A guard: where it is ("loader"), what its entry did ("noop-global") and why.
const char* guard_site_key(GuardSite s);
const char* guard_site_text(GuardSite s);
const char* guard_action_key(GuardAction a);
const char* guard_action_text(GuardAction a);
// What its exit does.
const char* guard_exit_text(GuardAction a);
// A hook object's decision (HookReason), and what a hook's action asks
// (HookCall, with the name asked and, for a direct call, the object).
const char* hook_reason_key(HookReason r);
const char* hook_reason_text(HookReason r);
const char* hook_call_key(HookCall c);
// `called`: the object a direct call asks, by id ("" for the others).
std::string hook_call_text(HookCall c, const std::string& name, const std::string& called);
// Where a hook's lock is taken, after the lock's name: "('a')" in
// find_spec, "(install)", "(after exec_module('a'))"; and its key
// ("find_spec", "install", "after_exec").
std::string hook_lock_where(HookLockSite s, const std::string& name);
const char* hook_lock_site_key(HookLockSite s);
// What a PEP 810 statement or read did (TraceSink::lazy): "no search now:
// pkg is bound to a lazy object, ...", "resolved here, at the first read
// of `pkg` (in m): ...". The text trace writes it as a line, the explorer
// as a lazy row's why; unescaped, as the other texts here.
std::string lazy_event_text(const Engine& e, LazyEvent what, NameId name, const std::string& read);
// A lazy event's key ("bound", "eager", "resolve", "attribute") and what
// the explorer's rows call it ("statement bound", "resolution").
const char* lazy_event_key(LazyEvent w);
const char* lazy_event_label(LazyEvent w);
// The id of a finder object ("" for kNoFinder).
std::string finder_id(const Engine& e, FinderId f);
// A threaded run: a thread's name ("main" first; the scenario's names
// otherwise, unescaped), and what a waiting thread waits for: "waits for
// _ModuleLock('a'), held by main".
std::string thread_name(const Engine& e, int32_t thread);
std::string wait_text(const Engine& e, const ThreadWait& w);
// Which lock a wait is for ("global", "module", "join"), and the words of its end.
const char* wait_key(const ThreadWait& w);
std::string woken_text(const Engine& e, const ThreadWait& w);
// A cycle _ModuleLock.acquire found (TraceSink::deadlock), from the running
// thread round: "_DeadlockError (deadlock detected by _ModuleLock('b')):
// main would wait for _ModuleLock('b'), held by w; w waits for
// _ModuleLock('a'), held by main".
std::string deadlock_text(const Engine& e, const std::vector<ThreadWait>& cycle, bool swallowed);
}  // namespace trace_detail

}  // namespace impsim
