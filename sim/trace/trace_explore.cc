// `impsim explore`: one self-contained HTML page that steps through a run
// event by event (sim/trace/explore_page.html is the page; this writer
// fills in its data). Each event is a row: its kind, its arguments and what
// changed in the interpreter since the row before (meta_path copies,
// sys.modules, the cache, the finder's state, the counters). The page
// rebuilds the state at any row from those changes.
//
// Folding: every subtree (an import, ask, lookup, guard, body or step with
// everything inside it) is interned by its content, children by their ids,
// as the DOT writer does. A subtree identical to one whose rows are still on
// the page becomes a single fold row pointing at that first occurrence,
// carrying the subtree's total change. Past --max-bytes of rows a variant is
// cut; the page says where and how many events are not shown, and the
// totals it prints are the engine's for the whole run.
//
// A hook scenario's rows carry sys.meta_path as the list of finder objects
// (a string of FinderIds), the object each ask is made of, its hook
// counters (searches, finder calls in total and per object, the _find_spec
// nesting) and the state of the hooks' reentrancy guards; the page draws
// those in place of the proxy's copies, scope and cache. A Paddle page's
// data is as before, byte for byte.
//
// A threaded run's rows are its threads' events in the order they ran: a
// "T" row says which thread runs from there on (the page keeps a call
// stack per thread), a "w" row opens a lock wait and a "W" row ends it; a
// hang leaves its waits open at the end, and each variant's totals say how
// the threads ended and what the hang's threads wait for. The page's
// thread code sits between the template's threads markers, which a page
// without threads leaves out, so that page keeps its bytes; repeated
// subtrees are not folded (a subtree's rows may interleave with another
// thread's).
//
// A hook's own lock (HookClass::lock) is a "k" row where an object acquires
// or releases it; a wait for it a "w" row of kind "hook". A scenario with
// hook locks keeps the template's locks parts (between its locks markers),
// and its threads parts too, threads or not: a run without threads that
// acquires a Lock its main thread holds already hangs, and its page shows
// that hang as a threaded page does, on thread main.
//
// A lazy scenario's (PEP 810) statements and reads are rows of their own,
// so that a reader sees where a statement was and where its search ran: a
// "y" row where a statement binds a lazy object and asks no finder, and a
// "z" row where the search it put off runs (a read resolves the lazy
// object, a missing attribute listed in sys.lazy_modules is imported, or
// the filter made the statement eager), closed by a "Z" row once that
// import has returned or raised; the import's rows nest under the "z" row,
// inside the step whose read caused them. Each row carries its kind, the
// module and the sentence the text trace writes for it
// (trace_detail::lazy_event_text), which the page shows as the row's why;
// the kinds' labels come with the data. The page's code for them sits
// between the template's lazy markers, left out of a page without lazy
// rows.
#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

#include "explore_page.h"  // generated: kExplorePage, the page template
#include "impsim/base/errors.h"
#include "impsim/base/escape.h"
#include "impsim/base/plural.h"
#include "impsim/base/text.h"
#include "impsim/run/outcome_words.h"
#include "impsim/trace/trace_formats.h"

namespace impsim {
namespace {

using namespace trace_detail;

// Everything the page shows beside the call stack, as of one event.
struct State {
  int64_t copies = 0;
  uint64_t modules = 0, torch = 0, cache = 0;
  int global = 1;
  int scope = -1, blocked = -1, resolving = -1, torch_names = -1, cache_names = -1;  // string ids
  // asks, suppressed, lookups, toggles, walks, comparisons (kIncKeys), max_depth
  uint64_t counters[7] = {0, 0, 0, 0, 0, 0, 0};
  // Hook scenarios only (unchanged, so never written, in a Paddle one):
  int meta_path = -1, guards = -1;                            // string ids: FinderIds "4,4,0,1,2"; the guards' state
  uint64_t searches = 0, finder_calls = 0, search_depth = 0;  // search_depth: the deepest _find_spec nesting so far
  std::vector<uint64_t> by_object;                            // finder calls per FinderId
};

// The delta keys, in the page's order: set fields, then the six increments.
constexpr const char* kSetKeys[] = {"c", "m", "t", "h", "g", "s", "k", "v", "x", "y"};
constexpr const char* kIncKeys[] = {"q", "u", "n", "o", "w", "p"};

// Appends what changed from a to b: `{"k":v,...}`, or `0` for nothing.
// By hand, as the page reads it: each event detailed makes one.
void append_delta(std::string& d, const State& a, const State& b) {
  const size_t start = d.size();
  d.append("{", 1);
  auto add = [&](std::string_view key, auto v) {
    // `,"key":v` made on the stack, appended at once (keys are a few letters).
    char item[64];
    size_t n = 0;
    if (d.size() != start + 1) item[n++] = ',';
    item[n++] = '"';
    key.copy(item + n, key.size());
    n += key.size();
    item[n++] = '"';
    item[n++] = ':';
    const fmt::format_int digits(v);
    std::memcpy(item + n, digits.data(), digits.size());
    d.append(item, n + digits.size());
  };
  const int64_t sa[] = {a.copies, (int64_t)a.modules, (int64_t)a.torch, (int64_t)a.cache, a.global,
                        a.scope,  a.blocked,          a.resolving,      a.torch_names,    a.cache_names};
  const int64_t sb[] = {b.copies, (int64_t)b.modules, (int64_t)b.torch, (int64_t)b.cache, b.global,
                        b.scope,  b.blocked,          b.resolving,      b.torch_names,    b.cache_names};
  for (size_t i = 0; i < 10; ++i)
    if (sa[i] != sb[i]) add(kSetKeys[i], sb[i]);
  for (size_t i = 0; i < 6; ++i)
    if (a.counters[i] != b.counters[i]) add(kIncKeys[i], b.counters[i] - a.counters[i]);
  if (a.counters[6] != b.counters[6]) add("d", b.counters[6]);
  // Hook scenarios: f, r set; e, j and "@<FinderId>" increments; z set.
  if (a.meta_path != b.meta_path) add("f", b.meta_path);
  if (a.guards != b.guards) add("r", b.guards);
  if (a.searches != b.searches) add("e", b.searches - a.searches);
  if (a.finder_calls != b.finder_calls) add("j", b.finder_calls - a.finder_calls);
  if (a.search_depth != b.search_depth) add("z", b.search_depth);
  for (size_t i = 0; i < b.by_object.size(); ++i) {
    const uint64_t before = i < a.by_object.size() ? a.by_object[i] : 0;
    if (b.by_object[i] != before) add("@" + std::to_string(i), b.by_object[i] - before);
  }
  if (d.size() == start + 1) {
    d.back() = '0';
    return;
  }
  d.append("}", 1);
}

std::string delta_text(const State& a, const State& b) {
  std::string d;
  append_delta(d, a, b);
  return d;
}

struct Frame {
  size_t first_row;
  State before;     // the state before its first row
  std::string key;  // its rows, children as "#id"
  uint64_t events = 1;
};

struct VariantData {
  std::string name;
  std::string rows;  // the JSON rows, comma separated
  std::string totals;
  std::string cut;  // empty, or what was left out and where
  uint64_t events = 0, rows_count = 0;
};

class ExploreWriter : public TraceWriter {
 public:
  ExploreWriter(std::ostream& out, const TraceOptions& o) : out_(out), max_bytes_(o.max_bytes), fold_(o.fold) {}

  void begin(const Scenario& sc, const Model& model, const std::vector<Variant>&) override {
    threaded_ = !model.threads.empty();
    if (threaded_) fold_ = false;
    locks_ = std::any_of(model.hooks.hooks.begin(), model.hooks.hooks.end(),
                         [](const HookClass& h) { return h.lock.kind != HookLockKind::None; });
    name_ = sc.name.empty() ? sc.file : sc.name;
    description_ = sc.description;
    params_ = params_text(model.params);
    for (size_t i = 0; i < model.labels.size(); ++i) labels_.push_back(model.labels[i]);
    hooks_ = model.hooks.used;
  }

  void begin_variant(const Model& model, Variant v, size_t) override {
    model_ = &model;
    torch_ids_.clear();
    for (NameId n = 0; n < static_cast<NameId>(model.names.size()); ++n)
      if (model.names.is_torch(n)) torch_ids_.push_back(n);
    variants_.emplace_back();
    variants_.back().name = variant_name(v);
    rows_.clear();
    row_starts_.clear();
    frames_.clear();
    ask_decided_.clear();
    originals_.clear();
    by_row_.clear();
    intern_.clear();
    last_ = State{};
    started_ = false;
    last_scope_.clear();
    last_blocked_.clear();
    last_resolving_text_ = last_torch_text_ = last_cache_text_ = -1;
    last_version_ = last_cache_version_ = UINT64_MAX;
    last_meta_path_.clear();
    last_meta_path_text_ = -1;
    cut_ = false;
    cut_open_ = 0;
    tally_ = {};
    tally = nullptr;
    data_bytes_ = 0;
    omitted_ = 0;
    thread_ = 0;
    others_.clear();
  }

  void end_variant(const Engine& e) override {
    // The page names finder objects by FinderId, one list for every variant:
    // the objects `new` steps made must have the same ids in each.
    const auto& objects = e.finder_objects();
    for (size_t i = 0; i < objects.size(); ++i) {
      if (i == finders_.size()) finders_.push_back(objects[i]);
      if (finders_[i].id != objects[i].id)
        throw UsageError(
            "<explore>",
            fmt::format("explore: the variants make new finder objects in different orders (\"{}\" and "
                        "\"{}\" are both object {}); explore one variant at a time (--variant), or use trace",
                        finders_[i].id, objects[i].id, i));
    }
    VariantData& v = variants_.back();
    // What the tally counted past the cut: a row each, none shown.
    v.events += tally_.events();
    omitted_ += tally_.events();
    const Counters& c = e.counters();
    std::string t;
    for (const CounterInfo& ci : kCounters)
      t += fmt::format("{}\"{}\":\"{}\"", t.empty() ? "" : ",", ci.name, (c.*ci.field).text());
    Outcome o = outcome_of(e);
    if (hooks_) t = hook_totals(e);
    if (threaded_ || locks_) {
      // The threads' names by id (the "T" rows' numbers), how each thread
      // ended, and a hang's waits. A run without threads has main alone.
      std::string names, ended, waits;
      std::vector<std::string> thread_names = e.thread_names(), results = thread_end_texts(e.thread_ends());
      if (thread_names.empty()) thread_names = {"main"};
      if (results.empty())
        results = {e.error() ? "main: " + e.error()->type + ": " + e.error()->message : std::string("main: ok")};
      for (const std::string& n : thread_names)
        names += fmt::format("{}\"{}\"", names.empty() ? "" : ",", json_text(n));
      for (const std::string& r : results) ended += fmt::format("{}\"{}\"", ended.empty() ? "" : ",", json_text(r));
      for (const HangWait& w : e.hang_waits())
        waits += fmt::format("{}\"{}\"", waits.empty() ? "" : ",", json_text(hang_wait_text(w)));
      t += fmt::format(",\"thread_names\":[{}],\"threads\":[{}],\"hang\":[{}]", names, ended, waits);
    }
    v.totals = fmt::format("{{{},\"proxy_copies\":{},\"error\":{},\"limit\":{}}}", t, o.proxy_copies,
                           e.error() ? "\"" + json_text(e.error()->type + ": " + e.error()->message) + "\"" : "null",
                           e.limit() ? "\"" + json_text(e.limit()->limit + ": " + e.limit()->detail) + "\"" : "null");
    if (cut_)
      v.cut = fmt::format(
          "cut at --max-bytes {} after {} {}: {} more {} not shown (from {} on); the totals are "
          "the whole run's",
          grouped(max_bytes_), grouped(v.rows_count), plural(v.rows_count, "row", "rows"), grouped(omitted_),
          plural(omitted_, "event", "events"), cut_where_);
    v.rows = std::move(rows_);
    rows_.clear();
  }

  void end() override {
    std::string data = "{";
    data += fmt::format("\"scenario\":\"{}\",\"description\":\"{}\",\"params\":\"{}\",", json_text(name_),
                        json_text(description_), json_text(params_));
    data += "\"labels\":[";
    for (size_t i = 0; i < labels_.size(); ++i) data += fmt::format("{}\"{}\"", i ? "," : "", json_text(labels_[i]));
    data += "],\"names\":[";
    for (size_t i = 0; i < names_.size(); ++i) data += fmt::format("{}\"{}\"", i ? "," : "", json_text(names_[i]));
    data += "],\"strings\":[";
    for (size_t i = 0; i < strings_.size(); ++i) data += fmt::format("{}\"{}\"", i ? "," : "", json_text(strings_[i]));
    data += "],\"reasons\":{";
    for (int r = 0; r <= static_cast<int>(FindReason::ProxiedCaller); ++r)
      data += fmt::format("{}\"{}\":\"{}\"", r ? "," : "", reason_key(FindReason(r)),
                          json_text(reason_text(FindReason(r))));
    for (int r = 0; r <= static_cast<int>(HookReason::Claimed); ++r)
      data += fmt::format(",\"{}\":\"{}\"", hook_reason_key(HookReason(r)), json_text(hook_reason_text(HookReason(r))));
    data += "},\"calls\":{";
    for (int c = 0; c <= static_cast<int>(HookCall::CallNext); ++c)
      data += fmt::format("{}\"{}\":\"{}\"", c ? "," : "", hook_call_key(HookCall(c)),
                          json_text(hook_call_text(HookCall(c), "{0}", "{1}")));
    data += "},\"guards\":{";
    for (int a = 0; a <= static_cast<int>(GuardAction::DisableAbsent); ++a)
      data += fmt::format("{}\"{}\":[\"{}\",\"{}\"]", a ? "," : "", guard_action_key(GuardAction(a)),
                          json_text(guard_action_text(GuardAction(a))), json_text(guard_exit_text(GuardAction(a))));
    data += "},\"sites\":{";
    for (int s = 0; s <= static_cast<int>(GuardSite::Loader); ++s)
      data += fmt::format("{}\"{}\":\"{}\"", s ? "," : "", guard_site_key(GuardSite(s)),
                          json_text(guard_site_text(GuardSite(s))));
    data += "},";
    if (lazy_) {
      data += "\"lazy\":{";
      for (int w = 0; w <= static_cast<int>(LazyEvent::Cycle); ++w)
        data += fmt::format("{}\"{}\":\"{}\"", w ? "," : "", lazy_event_key(LazyEvent(w)),
                            json_text(lazy_event_label(LazyEvent(w))));
      data += "},";
    }
    if (threaded_ || locks_) data += "\"threaded\":true,";
    const size_t finders_at = data.size();
    if (hooks_) {
      // The finder objects by FinderId: their ids, which are hooks, and which
      // are counted one by one (all but P, whose calls are its asks).
      data += "\"finders\":[";
      for (size_t i = 0; i < finders_.size(); ++i) {
        const FinderObject& f = finders_[i];
        data += fmt::format("{}[\"{}\",{},{}]", i ? "," : "", json_text(f.id), f.cls == FinderClass::Hook ? 1 : 0,
                            f.cls == FinderClass::Proxy ? 0 : 1);
      }
      data += "],";
    }
    // What is never cut (every finder object, each variant's totals, which
    // list them) grows with the objects `new` steps make: past --max-bytes
    // the page is not written (exit 3) rather than written past its bound.
    uint64_t uncut = data.size() - finders_at;
    for (const VariantData& v : variants_) uncut += v.totals.size();
    if (max_bytes_ != 0 && uncut > max_bytes_)
      throw ModelLimitError("max-bytes", "/finders",
                            fmt::format("the page's data that is never cut (its {} finder objects and each variant's "
                                        "totals, which list them) is {} bytes; the limit is {} (--max-bytes)",
                                        finders_.size(), uncut, max_bytes_));
    data += "\"variants\":[";
    for (size_t i = 0; i < variants_.size(); ++i) {
      const VariantData& v = variants_[i];
      data += fmt::format("{}{{\"name\":\"{}\",\"totals\":{},\"cut\":\"{}\",\"events\":{},\"rows\":[\n{}]}}",
                          i ? ",\n" : "", v.name, v.totals, json_text(v.cut), v.events, v.rows);
    }
    data += "]}";
    // The data is a script of the page: script_json keeps every string in
    // it (a description holding "<!--<script>" or "</script>") from ending
    // the element or merging it with the viewer's script after it.
    const std::string safe = script_json(data);
    std::string template_page(kExplorePage);
    if (!locks_) template_page = without(template_page, "/*locks:*/", "/*:locks*/");
    if (!locks_ && !threaded_) template_page = without(template_page, "/*threads:*/", "/*:threads*/");
    if (!lazy_) template_page = without(template_page, "/*lazy:*/", "/*:lazy*/");
    std::string_view page = template_page;
    const std::string_view marker = "/*IMPSIM_DATA*/null";
    size_t at = page.find(marker);
    out_ << page.substr(0, at) << safe << page.substr(at + marker.size());
  }

  void step_begin(const Engine& e, const CStep& s) override {
    follow(e);
    if (cut_) return open(e, {});  // past --max-bytes: counted, not formatted
    open(e, row(FMT_COMPILE("\"s\",\"{}\",\"{}\",{}"), json_text(*s.pointer), json_text(step_text(*model_, s)),
                s.label >= 0 ? s.label : -1));
  }
  void step_end(const Engine& e, const CStep&, const char* result) override {
    follow(e);
    if (cut_) return close(e, {});  // past --max-bytes: counted, not formatted
    close(e, row(FMT_COMPILE("\"S\",\"{}\""), json_text(result)));
  }
  void import_begin(const Engine& e, NameId name) override {
    follow(e);
    if (cut_) return open(e, {});
    open(e, row(FMT_COMPILE("\"i\",{}"), name_id(name)));
  }
  void import_end(const Engine& e, NameId, bool ok) override {
    follow(e);
    if (cut_) return close(e, {});
    close(e, row(FMT_COMPILE("\"I\",{}"), ok ? 1 : 0));
  }
  void ask_begin(const Engine& e, NameId name, FinderClass k, FinderId finder, int64_t index,
                 const MetaPath& walked) override {
    follow(e);
    if (cut_) return open(e, {});  // past --max-bytes: counted, not formatted
    // Hook scenarios: the object's id, and the length of the list the loop
    // walks. An ask the page must not draw at its index of sys.meta_path
    // (trace_detail::ask_note) carries the length and the note in both.
    const std::string note = ask_note(e, walked, index, finder);
    const std::string tail = note.empty() ? "" : fmt::format(FMT_COMPILE(",\"{}\""), json_text(note));
    if (hooks_) {
      ask_decided_.push_back(false);
      open(e, row(FMT_COMPILE("\"a\",{},\"{}\",{},{}{}"), name_id(name), json_text(finder_id(e, finder)), index,
                  walked.size(), tail));
    } else if (note.empty()) {
      open(e, row(FMT_COMPILE("\"a\",{},\"{}\",{}"), name_id(name), finder_name(k), index));
    } else {
      open(e, row(FMT_COMPILE("\"a\",{},\"{}\",{},{}{}"), name_id(name), finder_name(k), index, walked.size(), tail));
    }
  }
  void decide(const Engine& e, NameId, FindReason r) override {
    follow(e);
    if (cut_) return leaf(e, {});
    leaf(e, row(FMT_COMPILE("\"r\",\"{}\""), reason_key(r)));
  }
  // A hook's decision is its ask's "r" row, as P's; one made in a direct
  // call (its ask has decided already) is a "d" row naming the object.
  void hook_decide(const Engine& e, FinderId f, NameId name, HookReason r) override {
    follow(e);
    if (cut_) return leaf(e, {});
    if (!ask_decided_.empty() && !ask_decided_.back()) {
      ask_decided_.back() = true;
      return leaf(e, row(FMT_COMPILE("\"r\",\"{}\""), hook_reason_key(r)));
    }
    leaf(e, row(FMT_COMPILE("\"d\",\"{}\",{},\"{}\""), json_text(finder_id(e, f)), name_id(name), hook_reason_key(r)));
  }
  // What a hook's action asks: a "c" row (the caller, the call, the name, the object called).
  void hook_call(const Engine& e, FinderId caller, NameId name, HookCall c, FinderId called) override {
    follow(e);
    if (cut_) return leaf(e, {});
    leaf(e, row(FMT_COMPILE("\"c\",\"{}\",\"{}\",{},\"{}\""), json_text(finder_id(e, caller)), hook_call_key(c),
                name_id(name), json_text(finder_id(e, called))));
  }
  void ask_end(const Engine& e, NameId, FinderClass, AskAnswer a) override {
    follow(e);
    if (hooks_ && !ask_decided_.empty()) ask_decided_.pop_back();
    if (cut_) return close(e, {});  // past --max-bytes: counted, not formatted
    close(e, row(FMT_COMPILE("\"A\",\"{}\""), a == AskAnswer::Spec         ? "spec"
                                              : a == AskAnswer::Suppressed ? "suppressed"
                                              : a == AskAnswer::Raised     ? "raised"
                                                                           : "none"));
  }
  void lookup_begin(const Engine& e, NameId name, uint64_t depth, uint8_t mark) override {
    follow(e);
    if (cut_) return open(e, {});  // past --max-bytes: counted, not formatted
    open(e,
         row(FMT_COMPILE("\"l\",{},{},\"{}\""), name_id(name), depth, mark == kMarkDisabled ? "disabled" : "enabled"));
  }
  void lookup_end(const Engine& e, NameId, uint64_t, bool found) override {
    follow(e);
    if (cut_) return close(e, {});  // past --max-bytes: counted, not formatted
    close(e, row(FMT_COMPILE("\"L\",{}"), found ? 1 : 0));
  }
  void toggle(const Engine& e, bool enable, uint64_t walked, int64_t) override {
    follow(e);
    if (cut_) return leaf(e, {});  // past --max-bytes: counted, not formatted
    leaf(e, row(FMT_COMPILE("\"t\",{},{}"), enable ? 1 : 0, walked));
  }
  void guard_begin(const Engine& e, GuardSite site, bool enable, GuardAction a) override {
    follow(e);
    if (cut_) return open(e, {});  // past --max-bytes: counted, not formatted
    open(e, row(FMT_COMPILE("\"g\",\"{}\",{},\"{}\""), guard_site_key(site), enable ? 1 : 0, guard_action_key(a)));
  }
  void guard_end(const Engine& e, GuardSite, GuardAction) override {
    follow(e);
    close(e, "\"G\"");
  }
  void body_begin(const Engine& e, NameId m, BodyKind kind) override {
    follow(e);
    if (cut_) return open(e, {});  // past --max-bytes: counted, not formatted
    // 0 a module body, 1 a call, 2 a loader's create_module
    open(e, row(FMT_COMPILE("\"b\",{},{}"), name_id(m), static_cast<int>(kind)));
  }
  void body_end(const Engine& e, NameId, BodyKind) override {
    follow(e);
    close(e, "\"B\"");
  }
  // A lazy statement's "y" row, or the "z" row that opens around the import
  // a read (or the filter) runs now: its kind, the module, its why.
  void lazy(const Engine& e, LazyEvent what, NameId name, const std::string& read) override {
    follow(e);
    lazy_ = true;
    const bool opens = what != LazyEvent::Bound && what != LazyEvent::Cycle;
    if (cut_) return opens ? open(e, {}) : leaf(e, {});  // past --max-bytes: counted, not formatted
    const std::string_view body = row(FMT_COMPILE("\"{}\",\"{}\",{},\"{}\""), opens ? "z" : "y", lazy_event_key(what),
                                      name_id(name), json_text(lazy_event_text(e, what, name, read)));
    if (opens)
      open(e, body);
    else
      leaf(e, body);
  }
  void lazy_end(const Engine& e, LazyEvent) override {
    follow(e);
    close(e, "\"Z\"");
  }

  // A lock wait: a "w" row (what for: "global", "module" or "join"; the
  // module's name id or -1; the thread holding it or joined; where the
  // global lock is taken; a hook lock's wait adds the lock's name), its end
  // a "W" row.
  void wait_begin(const Engine& e, const ThreadWait& w) override {
    follow(e);
    if (cut_) return open(e, {});
    open(e, row(FMT_COMPILE("\"w\",\"{}\",{},{},\"{}\"{}"), wait_key(w),
                w.kind == WaitKind::ModuleLock ? name_id(w.module) : -1, w.on, w.site,
                w.kind == WaitKind::HookLock ? ",\"" + json_text(e.hook_lock_text(w.lock)) + "\"" : ""));
  }
  // A hook object acquires or releases its own lock: a "k" row (the object,
  // 1 for acquire, the name, the lock, and, where the lock is not taken in
  // find_spec, the site: "install", with -1 for the name, or "after_exec").
  void hook_lock(const Engine& e, FinderId f, NameId name, bool acquire, HookLockSite site) override {
    follow(e);
    if (cut_) return leaf(e, {});
    leaf(e, row(FMT_COMPILE("\"k\",\"{}\",{},{},\"{}\"{}"), json_text(finder_id(e, f)), acquire ? 1 : 0,
                name == kNoName ? -1 : name_id(name), json_text(e.hook_lock_name(f)),
                site == HookLockSite::FindSpec ? "" : fmt::format(FMT_COMPILE(",\"{}\""), hook_lock_site_key(site))));
  }
  void wait_end(const Engine& e, const ThreadWait&) override {
    follow(e);
    close(e, "\"W\"");
  }
  // A cycle _ModuleLock.acquire found: a "D" row (1 when _lock_unlock_module
  // swallows it, the holder it would have waited for, the cycle's words).
  void deadlock(const Engine& e, const std::vector<ThreadWait>& cycle, bool swallowed) override {
    follow(e);
    if (cut_) return leaf(e, {});
    leaf(e, row(FMT_COMPILE("\"D\",{},{},\"{}\""), swallowed ? 1 : 0, cycle.empty() ? -1 : cycle.front().on,
                json_text(deadlock_text(e, cycle, swallowed))));
  }

 private:
  // A threaded run: the thread whose events come next gets a "T" row, and
  // its own open frames back.
  struct ThreadFrames {
    std::vector<Frame> frames;
    std::vector<bool> ask_decided;
    uint64_t cut_open = 0;
  };
  void follow(const Engine& e) {
    if (!e.threaded_run() || e.running_thread() == thread_) return;
    others_[thread_] = ThreadFrames{std::move(frames_), std::move(ask_decided_), cut_open_};
    thread_ = e.running_thread();
    ThreadFrames& next = others_[thread_];
    frames_ = std::move(next.frames);
    ask_decided_ = std::move(next.ask_decided);
    cut_open_ = next.cut_open;
    emit(e, row(FMT_COMPILE("\"T\",{}"), thread_), nullptr);
  }

  // The page for a run without threads (or hook locks, or lazy rows): the
  // template without those parts (each between its markers), byte for byte
  // the page as it was before them.
  static std::string without(std::string_view page, std::string_view open, std::string_view close) {
    std::string out;
    size_t at = 0;
    for (size_t from; (from = page.find(open, at)) != std::string_view::npos;) {
      const size_t to = page.find(close, from);
      if (to == std::string_view::npos) break;
      out += page.substr(at, from - at);
      at = to + close.size();
      // A part on lines of its own goes with its last line's end.
      if ((from == 0 || page[from - 1] == '\n') && at < page.size() && page[at] == '\n') ++at;
    }
    out += page.substr(at);
    return out;
  }

  int name_id(NameId n) {
    auto [it, fresh] = name_index_.emplace(n, static_cast<int>(names_.size()));
    if (fresh) {
      names_.push_back(model_->names.text(n));
      data_bytes_ += names_.back().size() + 3;
    }
    return it->second;
  }
  int string_id(const std::string& s) {
    auto [it, fresh] = string_index_.emplace(s, static_cast<int>(strings_.size()));
    if (fresh) {
      strings_.push_back(s);
      data_bytes_ += s.size() + 3;
    }
    return it->second;
  }
  std::string names_text(const std::vector<NameId>& ids) {
    std::string s;
    size_t shown = 0;
    for (NameId n : ids) {
      if (shown == 12) {
        s += fmt::format(", +{} more", grouped(ids.size() - shown));
        break;
      }
      s += (s.empty() ? "" : ", ") + model_->names.text(n);
      ++shown;
    }
    return s;
  }
  // string_id(set_text(members)), remembered: a guard's scope comes back
  // at every toggle, and its text is sorted names.
  int set_id(const std::vector<NameId>& members) {
    auto it = set_ids_.find(members);
    if (it != set_ids_.end()) return it->second;
    const int id = string_id(set_text(members));
    set_ids_.emplace(members, id);
    return id;
  }
  std::string set_text(const std::vector<NameId>& members) {
    std::vector<std::string> names;
    for (NameId n : members) names.push_back(model_->names.text(n));
    std::sort(names.begin(), names.end());
    std::string s;
    for (auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return "{" + s + "}";
  }

  State snapshot(const Engine& e) {
    State s;
    const FinderState& f = e.finder();
    s.copies = e.copies();
    s.modules = e.sys_modules().size();
    s.torch = e.sys_modules().torch_count();
    s.cache = e.torch_cache().order().size();
    s.global = f.globally_enabled ? 1 : 0;
    // Set texts are remade only when the set changed (set ids are reused).
    const std::vector<NameId>& scope = e.sets().members(f.scope);
    if (scope != last_scope_ || last_scope_text_ < 0) {
      last_scope_ = scope;
      last_scope_text_ = set_id(scope);
    }
    s.scope = last_scope_text_;
    const std::vector<NameId>& blocked = e.sets().members(f.blocked);
    if (blocked != last_blocked_ || last_blocked_text_ < 0) {
      last_blocked_ = blocked;
      last_blocked_text_ = set_id(blocked);
    }
    s.blocked = last_blocked_text_;
    const std::vector<NameId>& resolving = e.resolving_names();
    if (resolving != last_resolving_ || last_resolving_text_ < 0) {
      last_resolving_ = resolving;
      last_resolving_text_ = string_id(names_text(last_resolving_));
    }
    s.resolving = last_resolving_text_;
    if (e.sys_modules().version() != last_version_) {
      last_version_ = e.sys_modules().version();
      std::vector<NameId> torch;
      if (s.torch > 0)
        for (NameId n : torch_ids_)
          if (e.sys_modules().contains(n)) torch.push_back(n);
      last_torch_text_ = string_id(names_text(torch));
    }
    s.torch_names = last_torch_text_;
    if (e.torch_cache().version() != last_cache_version_) {
      last_cache_version_ = e.torch_cache().version();
      last_cache_text_ = string_id(names_text(e.torch_cache().order()));
    }
    s.cache_names = last_cache_text_;
    const Counters& c = e.counters();
    const Count* in_order[7] = {&c.asks, &c.suppressed, &c.lookups, &c.toggles, &c.walks, &c.comparisons, &c.max_depth};
    for (size_t i = 0; i < 7; ++i) s.counters[i] = in_order[i]->u64();
    if (hooks_) hook_snapshot(e, s);
    return s;
  }

  // sys.meta_path, the hook counters and the guards, remade as text only when changed.
  void hook_snapshot(const Engine& e, State& s) {
    std::vector<FinderId> meta_path = e.meta_path().list();
    if (meta_path != last_meta_path_ || last_meta_path_text_ < 0) {
      last_meta_path_ = std::move(meta_path);
      std::string ids;
      for (FinderId f : last_meta_path_) ids += fmt::format("{}{}", ids.empty() ? "" : ",", f);
      last_meta_path_text_ = string_id(ids);
    }
    s.meta_path = last_meta_path_text_;
    s.guards = string_id(guards_text(e));
    const HookCounters& h = e.hook_counters();
    s.searches = h.searches.u64();
    s.finder_calls = h.finder_calls.u64();
    s.search_depth = h.max_depth.u64();
    for (const Count& c : h.by_object) s.by_object.push_back(c.u64());
  }

  // What the hooks' reentrancy guards hold now: "global_set {distutils}; wd1: in_progress {a}; vf: flag set".
  std::string guards_text(const Engine& e) {
    std::string s;
    auto part = [&](const std::string& p) { s += (s.empty() ? "" : "; ") + p; };
    if (!e.global_finding().empty()) part("global_set " + set_text(e.global_finding()));
    if (!e.thread_finding().empty()) part("thread_set " + set_text(e.thread_finding()));
    const auto& objects = e.finder_objects();
    for (FinderId f = 0; f < static_cast<FinderId>(objects.size()); ++f) {
      if (objects[static_cast<size_t>(f)].cls != FinderClass::Hook) continue;
      const std::string& id = objects[static_cast<size_t>(f)].id;
      if (!e.object_in_progress(f).empty()) part(id + ": in_progress " + set_text(e.object_in_progress(f)));
      if (e.object_flag(f)) part(id + ": flag set");
    }
    return s;
  }

  // The totals of a hook scenario: its counters as `impsim run --json` names them.
  std::string hook_totals(const Engine& e) {
    const Counters& c = e.counters();
    const HookCounters& h = e.hook_counters();
    std::string t =
        fmt::format("\"searches\":\"{}\",\"finder_calls\":\"{}\",\"max_depth\":\"{}\",\"lookup_depth\":\"{}\"",
                    h.searches.text(), h.finder_calls.text(), h.max_depth.text(), c.max_depth.text());
    for (const CounterInfo& ci : kCounters)
      if (std::string_view(ci.name) != "max_depth") t += fmt::format(",\"{}\":\"{}\"", ci.name, (c.*ci.field).text());
    std::string by;
    for (const auto& [id, n] : finder_calls_by_object(e))
      by += fmt::format("{}\"{}\":\"{}\"", by.empty() ? "" : ",", json_text(id), n.text());
    return t + ",\"finder_calls_by_object\":{" + by + "},\"meta_path\":\"" + json_text(meta_path_text(e, -1)) + "\"";
  }

  // A row's body, formatted in place: valid until the next call.
  template <class S, class... Args>
  std::string_view row(const S& format, const Args&... args) {
    body_.clear();
    fmt::format_to(fmt::appender(body_), format, args...);
    return {body_.data(), body_.size()};
  }

  // Appends one row (to the page, and to *key_out); returns false once the
  // variant is cut.
  bool emit(const Engine& e, std::string_view body, std::string* key_out) {
    VariantData& v = variants_.back();
    ++v.events;
    if (!started_) {
      started_ = true;
      last_ = State{};
      last_.scope = last_.blocked = last_.resolving = last_.torch_names = last_.cache_names = -2;
      if (hooks_) last_.meta_path = last_.guards = -2;
    }
    if (cut_) {
      ++omitted_;
      return false;
    }
    // The rows and the names and strings they brought (all of a variant's
    // page data that grows with its events), and kEventBytes per event:
    // folding keeps a repetitive run's rows small, but each event it folds
    // was still snapshot and interned, and explore's time is bounded as its
    // page is (past the cut an event is only counted, and the run goes on
    // at about the speed of an untraced one).
    if (max_bytes_ != 0 && rows_.size() + data_bytes_ + kEventBytes * v.events > max_bytes_) {
      cut_ = true;
      tally = &tally_;  // the engine may count what comes next itself (TraceTally)
      ++omitted_;
      const CStep* s = e.current_step();
      cut_where_ = s ? "step " + *s->pointer : "the start";
      return false;
    }
    State now = snapshot(e);
    row_starts_.push_back(rows_.size());
    if (!rows_.empty()) rows_.append(",\n", 2);
    const size_t row_at = rows_.size();
    rows_.append("[", 1);
    rows_.append(body);
    rows_.append(",", 1);
    append_delta(rows_, last_, now);
    rows_.append("]", 1);
    if (key_out) key_out->append(rows_, row_at);
    ++v.rows_count;
    last_ = std::move(now);
    return true;
  }

  // Past the cut an event is only counted (as emit would), and a frame it
  // opens only counted open (cut_open_): nothing past the cut reads one.
  void count_cut() {
    ++variants_.back().events;
    ++omitted_;
  }

  void leaf(const Engine& e, std::string_view body) {
    if (cut_) return count_cut();
    if (frames_.empty()) {
      emit(e, body, nullptr);
      return;
    }
    Frame& parent = frames_.back();
    parent.events += 1;
    if (emit(e, body, &parent.key)) parent.key += '\n';
  }

  void open(const Engine& e, std::string_view body) {
    if (cut_) {
      count_cut();
      ++cut_open_;
      return;
    }
    State before = last_;
    size_t first = row_starts_.size();
    std::string key;
    const bool shown = emit(e, body, &key);
    if (shown) key += '\n';
    frames_.push_back(Frame{first, std::move(before), std::move(key), 1});
    if (!shown) frames_.back().first_row = SIZE_MAX;
  }

  void close(const Engine& e, std::string_view body) {
    if (cut_ && cut_open_ != 0) {
      count_cut();
      --cut_open_;
      return;
    }
    // The row closes the frame's key (a frame past the cut has none).
    const bool shown = emit(e, body, &frames_.back().key);
    Frame f = std::move(frames_.back());
    frames_.pop_back();
    f.events += 1;
    if (!frames_.empty()) frames_.back().events += f.events;
    if (!shown || f.first_row == SIZE_MAX || cut_) return;
    auto [it, fresh] = intern_.emplace(std::move(f.key), static_cast<int>(intern_.size()));
    const int id = it->second;
    if (!frames_.empty()) frames_.back().key += fmt::format(FMT_COMPILE("#{}\n"), id);
    if (static_cast<size_t>(id) >= originals_.size()) originals_.resize(static_cast<size_t>(id) + 1, -1);
    const size_t rows = row_starts_.size() - f.first_row;
    int64_t& original = originals_[static_cast<size_t>(id)];
    if (original < 0) {
      original = static_cast<int64_t>(f.first_row);
      by_row_.emplace(f.first_row, id);
      return;
    }
    if (!fold_ || rows < kMinFold) return;
    // Fold: the rows go, one row stands for them.
    VariantData& v = variants_.back();
    const size_t cut_at = row_starts_[f.first_row];
    rows_.resize(cut_at);  // row_starts_ point at the separator before a row
    row_starts_.resize(f.first_row);
    v.rows_count -= rows;
    for (auto r = by_row_.lower_bound(f.first_row); r != by_row_.end();) {
      originals_[static_cast<size_t>(r->second)] = -1;
      r = by_row_.erase(r);
    }
    State now = last_;
    std::string row_f = fmt::format(FMT_COMPILE("[\"F\",{},{},{}]"), original, f.events, delta_text(f.before, now));
    row_starts_.push_back(rows_.size());
    rows_ += (rows_.empty() ? "" : ",\n") + row_f;
    ++v.rows_count;
  }

  static constexpr size_t kMinFold = 6;
  // What an event detailed counts against --max-bytes besides its row: at
  // the default, a run that folds into few rows is detailed for about
  // 500,000 events (some 0.1 s), then counted. One byte, as it was, let a
  // run be detailed for 2 million (0.45 s), longer than the rest of a
  // 50-million-event run takes.
  static constexpr uint64_t kEventBytes = 4;

  std::ostream& out_;
  uint64_t max_bytes_;
  bool fold_;
  const Model* model_ = nullptr;
  std::string name_, description_, params_;
  std::vector<std::string> labels_;
  std::vector<VariantData> variants_;
  std::vector<std::string> names_, strings_;
  std::unordered_map<NameId, int> name_index_;
  std::unordered_map<std::string, int> string_index_;
  std::map<std::vector<NameId>, int> set_ids_;  // set_id's memory
  std::vector<NameId> torch_ids_;

  std::string rows_;
  fmt::memory_buffer body_;         // row's buffer
  std::vector<size_t> row_starts_;  // byte offset of each row in rows_
  std::vector<Frame> frames_;
  std::unordered_map<std::string, int> intern_;
  std::vector<int64_t> originals_;     // by subtree id: its first row still on the page, or -1
  std::multimap<size_t, int> by_row_;  // first row -> subtree id, to forget folded originals
  State last_;
  bool started_ = false, cut_ = false;
  TraceTally tally_;         // the events past the cut the engine counted
  uint64_t cut_open_ = 0;    // frames opened past the cut still open (this thread's)
  uint64_t data_bytes_ = 0;  // names and strings this variant added to the page
  uint64_t omitted_ = 0;
  std::string cut_where_;
  std::vector<NameId> last_scope_, last_blocked_;
  int last_scope_text_ = -1, last_blocked_text_ = -1, last_torch_text_ = -1, last_cache_text_ = -1;
  std::vector<NameId> last_resolving_;
  int last_resolving_text_ = -1;
  uint64_t last_version_ = UINT64_MAX, last_cache_version_ = UINT64_MAX;
  bool hooks_ = false;
  std::vector<bool> ask_decided_;  // hook scenarios: per open ask, whether its decision row is written
  std::vector<FinderId> last_meta_path_;
  std::vector<FinderObject> finders_;  // every variant's finder objects, by FinderId
  int last_meta_path_text_ = -1;
  bool threaded_ = false;
  bool locks_ = false;                      // a hook has a lock of its own
  bool lazy_ = false;                       // a lazy statement or read was heard
  int32_t thread_ = 0;                      // whose rows come now
  std::map<int32_t, ThreadFrames> others_;  // the other threads' open frames
};

}  // namespace

std::unique_ptr<TraceWriter> make_explore_writer(std::ostream& out, const TraceOptions& o) {
  return std::make_unique<ExploreWriter>(out, o);
}

}  // namespace impsim
