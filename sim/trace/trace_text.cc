// `impsim trace --format text`: an indented log a newcomer can follow, one
// line per step, import, finder ask, lookup, toggle and module body. An
// event that opens and closes with nothing in between is written as one
// line ("... -> None").
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "impsim/base/escape.h"
#include "impsim/base/plural.h"
#include "impsim/base/text.h"
#include "impsim/base/text_layout.h"
#include "impsim/run/outcome_words.h"
#include "impsim/trace/trace_formats.h"

namespace impsim {
namespace {

using namespace trace_detail;

class TextWriter : public TraceWriter {
 public:
  TextWriter(std::ostream& out, const TraceOptions& o) : out_(out), max_(o.max_lines.value_or(2000)) {}

  void begin(const Scenario& sc, const Model& model, const std::vector<Variant>&) override {
    // A description runs to hundreds of characters: wrapped, so that the
    // header reads as a paragraph, not one line off the screen.
    out_ << wrap_paragraph(fmt::format("impsim trace of {}{}", terminal_text(sc.name.empty() ? sc.file : sc.name),
                                       sc.description.empty() ? "" : ": " + terminal_text(sc.description)),
                           "# ", "#   ", 100);
    if (!model.params.empty()) out_ << fmt::format("# parameters: {}\n", params_text(model.params));
    if (model.hooks.used) {
      out_ << "# [BuiltinImporter FrozenImporter PathFinder] is sys.meta_path at that moment, each finder object\n"
              "# by its id (an object twice in the list is written twice); the starred entry is the one\n"
              "# _find_spec's loop is asking (i is the loop's index into the list it walks).\n";
      return;
    }
    out_ << "# P is the torch proxy finder. [P P | Builtin Frozen Path] is sys.meta_path at that moment; the\n"
            "# starred entry is the one _find_spec's loop is asking (i is the loop's index into the live list).\n"
            "# A lookup is P resolving a name itself, with P disabled by a guard; every enable and disable\n"
            "# walks all of sys.modules.\n";
  }

  void begin_variant(const Model& model, Variant v, size_t index) override {
    model_ = &model;
    thread_ = kNoThread;
    others_.clear();
    lines_ = omitted_ = 0;
    std::fill(std::begin(omitted_kinds_), std::end(omitted_kinds_), 0);
    tally_ = {};
    tally = nullptr;
    indent_ = 0;
    pending_ = false;
    started_ = false;
    clock_ = {};
    asks_.clear();
    if (index > 0) out_ << "\n";
    const char* what = v == Variant::Before  ? " (the finder as released)"
                       : v == Variant::After ? " (with the reentrancy fix)"
                                             : "";
    out_ << fmt::format("== variant {}{} ==\n", variant_name(v), what);
  }

  void end_variant(const Engine& e) override {
    follow(e);
    flush_pending();
    // What the tally counted past the cut: a line per open and standalone
    // event, and per close that did not follow its open at once.
    omitted_ += tally_.all_opened() + tally_.all_lines() + tally_.closed - tally_.merged;
    for (size_t k = 0; k < TraceTally::kKinds; ++k) omitted_kinds_[k] += tally_.opened[k] + tally_.lines[k];
    clock_.now += tally_.ticks;
    if (omitted_ > 0) {
      std::string kinds;
      static constexpr const char* kShown[] = {"step", "import", "body", "ask", "lookup", "toggle", "guard", "wait"};
      for (size_t k = 0; k < std::size(kShown); ++k)
        if (const uint64_t n = omitted_kinds_[k]; n != 0)
          kinds += fmt::format("{}{} {}{}", kinds.empty() ? "" : ", ", grouped(n), kShown[k], n == 1 ? "" : "s");
      out_ << fmt::format(
          "... cut at --max-lines {}: {} more lines left out ({}); the totals below are the whole run's\n", max_,
          grouped(omitted_), kinds);
    }
    const Counters& c = e.counters();
    auto n = [](const Count& x, const char* one, const char* many) { return grouped(x) + " " + (x == 1 ? one : many); };
    if (e.hooks_used()) {
      out_ << fmt::format("totals: {}; clock {}\n", hook_totals_text(e), n(clock_.now, "tick", "ticks"));
      // P in a hook scenario: its own counters too.
      if (c.asks != 0 || c.toggles != 0)
        out_ << fmt::format("totals of P: {}, {} suppressed, {} (deepest {}), {}, {}, {} compared\n",
                            n(c.asks, "ask", "asks"), grouped(c.suppressed), n(c.lookups, "lookup", "lookups"),
                            c.max_depth, n(c.toggles, "toggle", "toggles"), n(c.walks, "walk", "walks"),
                            n(c.comparisons, "name", "names"));
    } else {
      out_ << fmt::format("totals: {} of P, {} suppressed, {} (deepest {}), {}, {}, {} compared; clock {}\n",
                          n(c.asks, "ask", "asks"), grouped(c.suppressed), n(c.lookups, "lookup", "lookups"),
                          c.max_depth, n(c.toggles, "toggle", "toggles"), n(c.walks, "walk", "walks"),
                          n(c.comparisons, "name", "names"), n(clock_.now, "tick", "ticks"));
    }
    Outcome o = outcome_of(e);
    std::string marks;
    for (auto& [k, v] : o.marks) marks += fmt::format("{}{} {}", marks.empty() ? "" : ", ", terminal_text(k), v);
    if (e.hooks_used())
      out_ << fmt::format("end: sys.meta_path is {}; marked: {}\n", terminal_text(meta_path_text(e, -1)),
                          marks.empty() ? "none" : marks);
    else
      out_ << fmt::format("end: {} {} of P left in sys.meta_path; marked: {}\n", o.proxy_copies,
                          plural(o.proxy_copies, "copy", "copies"), marks.empty() ? "none" : marks);
    // A threaded run: how each thread ended, and a hang's waits (the
    // process would never end: who waits for what, held by whom).
    if (const std::vector<std::string> threads = thread_end_texts(e.thread_ends()); !threads.empty()) {
      std::string t;
      for (const std::string& r : threads) t += (t.empty() ? "" : "; ") + terminal_text(r);
      out_ << fmt::format("threads: {}\n", t);
      for (const HangWait& w : e.hang_waits()) out_ << fmt::format("hang: {}\n", terminal_text(hang_wait_text(w)));
    }
    if (e.error())
      out_ << fmt::format("raised {}: {} (at {})\n", terminal_text(e.error()->type), terminal_text(e.error()->message),
                          terminal_text(e.error()->traceback.empty() ? "?" : e.error()->traceback.back()));
    if (e.limit())
      out_ << fmt::format("stopped: limit {} reached at {}: {}\n", e.limit()->limit,
                          terminal_text(e.limit()->traceback.empty() ? "?" : e.limit()->traceback.back()),
                          terminal_text(e.limit()->detail));
  }

  void step_begin(const Engine& e, const CStep& s) override {
    follow(e);
    if (cut()) {
      start_cut();
      return tally_.open(TraceTally::Step);
    }
    start(e);
    open(TraceTally::Step,
         full() ? std::string()
                : fmt::format("step {}: {}", terminal_text(*s.pointer), terminal_text(step_text(*model_, s))));
  }
  void step_end(const Engine& e, const CStep& s, const char* result) override {
    follow(e);
    if (cut()) return tally_.close();
    close(fmt::format(" -> {}", result), fmt::format("step {} -> {}", terminal_text(*s.pointer), result));
  }

  void import_begin(const Engine& e, NameId name) override {
    follow(e);
    if (cut()) {
      start_cut();
      return tally_.open(TraceTally::Import);
    }
    start(e);
    open(TraceTally::Import,
         full() ? std::string()
                : fmt::format("import {}: not in sys.modules; _find_and_load asks sys.meta_path", text(name)));
  }
  void import_end(const Engine& e, NameId name, bool ok) override {
    follow(e);
    if (cut()) return tally_.close();
    const char* r = ok ? "loaded" : "raised";
    close(fmt::format(" -> {}", r), fmt::format("import {} -> {}", text(name), r));
  }

  void ask_begin(const Engine& e, NameId name, FinderClass k, FinderId finder, int64_t index,
                 const MetaPath& walked) override {
    follow(e);
    if (cut()) {
      start_cut();
      ++tally_.ticks;
      return tally_.open(TraceTally::Ask);
    }
    start(e);
    clock_.ask();
    if (e.hooks_used()) {
      // A list of finder objects: index and length are the walk's.
      std::string who = terminal_text(finder_id(e, finder));
      asks_.push_back(who);
      if (full()) return open(TraceTally::Ask, {});
      open(TraceTally::Ask,
           fmt::format("ask i={} {}: {}.{}('{}')", index, terminal_text(ask_list_text(e, walked, index, finder)), who,
                       finder_method(e, finder), text(name)));
      return;
    }
    if (full()) {
      asks_.emplace_back();
      return open(TraceTally::Ask, {});
    }
    std::string who = k != FinderClass::Proxy ? finder_name(k)
                      : ask_stands(walked, index, finder)
                          ? fmt::format("P (copy {} of {})", index + 1, walked.proxy_copies())
                          : std::string("P");
    asks_.push_back(who);
    open(TraceTally::Ask, fmt::format("ask i={} {}: {}.find_spec('{}')", index, ask_list_text(e, walked, index, finder),
                                      who, text(name)));
  }
  // The suppressed answer already says why (ask_end).
  void decide(const Engine& e, NameId, FindReason r) override {
    follow(e);
    if (cut()) return;
    if (pending_ && r != FindReason::Suppressed && !full()) pending_text_ += fmt::format(" [{}]", reason_text(r));
  }
  // A hook's decision joins its ask's line, as P's does; one made in a
  // direct call, where no ask is open, is a line of its own.
  void hook_decide(const Engine& e, FinderId f, NameId name, HookReason r) override {
    follow(e);
    if (cut()) {
      if (!(tally_.pending && tally_.pending_kind == TraceTally::Ask)) tally_.line(TraceTally::Decision);
      return;
    }
    if (pending_ && pending_kind_ == TraceTally::Ask) {
      if (!full()) pending_text_ += fmt::format(" [{}]", hook_reason_text(r));
      return;
    }
    if (full()) return line(TraceTally::Decision, {});
    line(TraceTally::Decision, fmt::format("{}.{}('{}') [{}]", terminal_text(finder_id(e, f)), finder_method(e, f),
                                           text(name), hook_reason_text(r)));
  }
  void hook_call(const Engine& e, FinderId caller, NameId name, HookCall c, FinderId called) override {
    follow(e);
    if (cut()) return tally_.line(TraceTally::Call);
    line(TraceTally::Call, fmt::format("{} {}", terminal_text(finder_id(e, caller)),
                                       hook_call_text(c, text(name), terminal_text(finder_id(e, called)))));
  }
  void hook_lock(const Engine& e, FinderId f, NameId name, bool acquire, HookLockSite site) override {
    follow(e);
    if (cut()) return tally_.line(TraceTally::Lock);
    line(TraceTally::Lock, fmt::format("{} {} {} {}", terminal_text(finder_id(e, f)), acquire ? "acquires" : "releases",
                                       terminal_text(e.hook_lock_name(f)),
                                       hook_lock_where(site, name == kNoName ? std::string() : text(name))));
  }
  void ask_end(const Engine& e, NameId name, FinderClass, AskAnswer a) override {
    follow(e);
    if (cut()) return tally_.close();
    std::string who = asks_.back();
    asks_.pop_back();
    const char* r = a == AskAnswer::Spec         ? "spec"
                    : a == AskAnswer::Suppressed ? "None (suppressed: the fix sees this name is being resolved)"
                    : a == AskAnswer::Raised     ? "raised"
                                                 : "None";
    if (full()) return close({}, {});
    close(fmt::format(" -> {}", r), fmt::format("{} answers '{}' -> {}", who, text(name), r));
  }

  void lookup_begin(const Engine& e, NameId name, uint64_t depth, uint8_t mark) override {
    follow(e);
    if (cut()) return tally_.open(TraceTally::Lookup);
    const char* why = mark == kMarkDisabled ? "blocked" : "in scope";
    if (full()) return open(TraceTally::Lookup, {});
    open(TraceTally::Lookup, fmt::format("lookup '{}' (depth {}): {}, so P finds the real spec itself, with P disabled",
                                         text(name), depth, why));
  }
  void lookup_end(const Engine& e, NameId name, uint64_t depth, bool found) override {
    follow(e);
    if (cut()) return tally_.close();
    const char* r = found ? "found (its loader is wrapped)" : "not found";
    if (full()) return close({}, {});
    close(fmt::format(" -> {}", r), fmt::format("lookup '{}' (depth {}) -> {}", text(name), depth, r));
  }

  void toggle_begin(const Engine& e, bool) override {
    follow(e);
    if (cut()) return;
    size_before_ = e.sys_modules().size();
    cache_before_ = e.torch_cache().order().size();
  }
  void toggle(const Engine& e, bool enable, uint64_t walked, int64_t copies) override {
    follow(e);
    if (cut()) {
      start_cut();
      tally_.ticks += walked;
      return tally_.line(TraceTally::Toggle);
    }
    start(e);
    clock_.walk(walked);
    if (full()) return line(TraceTally::Toggle, {});
    if (enable)
      line(TraceTally::Toggle,
           fmt::format("enable: walk over {} {} of sys.modules; P inserted at 0 -> {}{}", grouped(walked),
                       plural(walked, "name", "names"), terminal_text(meta_path_now(e, copies)), moved(e, true)));
    else
      line(TraceTally::Toggle,
           fmt::format("disable: walk over {} {} of sys.modules; one P removed -> {}{}", grouped(walked),
                       plural(walked, "name", "names"), terminal_text(meta_path_now(e, copies)), moved(e, false)));
  }

  void guard_begin(const Engine& e, GuardSite site, bool enable, GuardAction a) override {
    follow(e);
    if (cut()) {
      start_cut();
      return tally_.line(TraceTally::Guard);
    }
    start(e);
    if (full()) return line(TraceTally::Guard, {});
    line(TraceTally::Guard, fmt::format("guard: {} (enable={}) {}", guard_site_text(site), enable ? "True" : "False",
                                        guard_action_text(a)));
  }
  void guard_end(const Engine& e, GuardSite site, GuardAction a) override {
    follow(e);
    if (cut()) return tally_.line(TraceTally::Guard);
    if (full()) return line(TraceTally::Guard, {});
    line(TraceTally::Guard, fmt::format("guard exit: {}: {}", guard_site_text(site), guard_exit_text(a)));
  }

  void lazy(const Engine& e, LazyEvent what, NameId name, const std::string& read) override {
    follow(e);
    if (cut()) return tally_.line(TraceTally::Decision);
    start(e);
    if (full()) return line(TraceTally::Decision, {});
    line(TraceTally::Decision, terminal_text(lazy_event_text(e, what, name, read)));
  }
  void body_begin(const Engine& e, NameId m, BodyKind kind) override {
    follow(e);
    if (cut()) {
      start_cut();
      return tally_.open(TraceTally::Body);
    }
    start(e);
    if (full()) return open(TraceTally::Body, {});
    open(TraceTally::Body, kind == BodyKind::Call ? fmt::format("a function of {} runs", text(m))
                           : kind == BodyKind::CreateModule
                               ? fmt::format("the loader's create_module for {} runs ({} is not in "
                                             "sys.modules yet)",
                                             text(m), text(m))
                               : fmt::format("body of {} runs", text(m)));
  }
  void body_end(const Engine& e, NameId m, BodyKind kind) override {
    follow(e);
    if (cut()) return tally_.close();
    if (full()) return close({}, {});
    close(" -> done", kind == BodyKind::Call           ? fmt::format("function of {} returns", text(m))
                      : kind == BodyKind::CreateModule ? fmt::format("create_module for {} returns", text(m))
                                                       : fmt::format("body of {} ends", text(m)));
  }

  // A thread's lock waits, each a line of its own (other threads' lines come between).
  void wait_begin(const Engine& e, const ThreadWait& w) override {
    if (!e.threaded_run()) return;  // a hook lock's hang without threads: the `hangs:` line says it
    follow(e);
    if (cut()) return tally_.line(TraceTally::Wait);
    line(TraceTally::Wait, terminal_text(wait_text(e, w)));
  }
  void wait_end(const Engine& e, const ThreadWait& w) override {
    follow(e);
    if (cut()) return tally_.line(TraceTally::Wait);
    line(TraceTally::Wait, terminal_text(woken_text(e, w)));
  }
  void deadlock(const Engine& e, const std::vector<ThreadWait>& cycle, bool swallowed) override {
    follow(e);
    if (cut()) return tally_.line(TraceTally::Wait);
    line(TraceTally::Wait, terminal_text(deadlock_text(e, cycle, swallowed)));
  }

 private:
  // A module name as the terminal shows it (identifiers, but Unicode ones:
  // a Hangul filler prints as nothing).
  std::string text(NameId n) const { return terminal_text(model_->names.view(n)); }

  // Why a walk's sys.modules shrank or grew: what the toggle moved.
  std::string moved(const Engine& e, bool enable) const {
    const uint64_t after = e.sys_modules().size();
    const size_t cache = e.torch_cache().order().size();
    if (after == size_before_ && cache == cache_before_) return "";
    if (enable)
      return fmt::format("; sys.modules {} -> {} {} (torch modules moved to the cache, which holds {})",
                         grouped(size_before_), grouped(after), plural(after, "name", "names"), grouped(cache));
    return fmt::format("; sys.modules {} -> {} {} (proxy modules cleared, the cache's {} put back)",
                       grouped(size_before_), grouped(after), plural(after, "name", "names"), grouped(cache));
  }

  // Past --max-lines every line is left out, only counted: the callbacks
  // then skip formatting it (a trace stays a small factor of a run's time).
  bool full() const { return max_ != 0 && lines_ >= max_; }
  // From the first event heard past the cut on, every event is counted in
  // tally_, which the engine then fills itself (TraceTally): the open line
  // still pending goes there too, left out as every line from here on.
  bool cut() {
    if (!full()) return false;
    if (!tally) {
      if (pending_) {
        pending_ = false;
        tally_.open(pending_kind_);
      }
      tally = &tally_;
    }
    return true;
  }
  // start() past the cut: its line is left out (and not by kind).
  void start_cut() {
    if (started_) return;
    started_ = true;
    tally_.line(TraceTally::Other);
  }

  // A threaded run: each thread's lines keep their own nesting, and each
  // line says whose it is (a column of thread names). The run's own lines
  // (its start and totals) have none.
  void follow(const Engine& e) {
    const PyThreadId t = e.threaded_run() ? e.running_thread() : kNoThread;
    if (t == thread_) return;
    if (tally) tally_.flush();
    flush_pending();
    if (thread_ != kNoThread) others_[thread_] = {indent_, std::move(asks_)};
    thread_ = t;
    ThreadLines& next = others_[t];
    indent_ = next.indent;
    asks_ = std::move(next.asks);
    if (t != kNoThread) thread_name_ = e.thread_names()[static_cast<size_t>(t)];
  }

  // The state the run starts from, before its first event.
  void start(const Engine& e) {
    if (started_) return;
    started_ = true;
    line(TraceTally::Other,
         fmt::format("start: sys.modules holds {} {}; sys.meta_path is {}", grouped(e.sys_modules().size()),
                     plural(e.sys_modules().size(), "name", "names"), terminal_text(meta_path_now(e, e.copies()))));
  }

  void emit(int indent, const std::string& s, TraceTally::Kind kind, bool counts) {
    if (max_ != 0 && lines_ >= max_) {
      ++omitted_;
      if (counts) ++omitted_kinds_[kind];
      return;
    }
    ++lines_;
    if (thread_ != kNoThread) out_ << fmt::format("{:>6} | ", thread_name_);
    out_ << std::string(static_cast<size_t>(indent) * 2, ' ') << s << "\n";
  }
  void flush_pending() {
    if (!pending_) return;
    pending_ = false;
    emit(pending_indent_, pending_text_, pending_kind_, true);
  }
  void open(TraceTally::Kind kind, std::string s) {
    flush_pending();
    pending_ = true;
    pending_indent_ = indent_;
    pending_text_ = std::move(s);
    pending_kind_ = kind;
    ++indent_;
  }
  void close(const std::string& merged_suffix, const std::string& close_line) {
    --indent_;
    if (pending_) {
      pending_ = false;
      emit(pending_indent_, pending_text_ + merged_suffix, pending_kind_, true);
    } else {
      emit(indent_, close_line, TraceTally::Other, false);
    }
  }
  void line(TraceTally::Kind kind, const std::string& s) {
    flush_pending();
    emit(indent_, s, kind, true);
  }

  std::ostream& out_;
  uint64_t max_;
  const Model* model_ = nullptr;
  uint64_t lines_ = 0, omitted_ = 0;
  uint64_t omitted_kinds_[TraceTally::kKinds] = {};  // of the lines left out before the tally took over
  TraceTally tally_;
  int indent_ = 0;
  bool pending_ = false;
  int pending_indent_ = 0;
  std::string pending_text_;
  TraceTally::Kind pending_kind_ = TraceTally::Other;
  bool started_ = false;
  SimClock clock_;
  std::vector<std::string> asks_;
  struct ThreadLines {
    int indent = 0;
    std::vector<std::string> asks;
  };
  PyThreadId thread_ = kNoThread;  // whose lines are being written (kNoThread: a run without threads)
  std::string thread_name_;
  std::map<PyThreadId, ThreadLines> others_;  // the other threads' nesting, set aside
  uint64_t size_before_ = 0;
  size_t cache_before_ = 0;
};

}  // namespace

std::unique_ptr<TraceWriter> make_text_writer(std::ostream& out, const TraceOptions& o) {
  return std::make_unique<TextWriter>(out, o);
}

}  // namespace impsim
