// `impsim trace --format chrome`: the Trace Event format (a JSON object with
// `traceEvents`), which Perfetto (ui.perfetto.dev) and chrome://tracing
// open. Steps, imports, module bodies, finder asks and lookups are duration
// events (B/E) that nest; each walk of sys.modules is a complete event (X)
// as long as the names it examines. One process per variant. Timestamps are
// the simulated clock's ticks, shown as microseconds.
//
// A threaded run has one track (tid) per Python thread, named after it,
// "main" first; a thread's lock waits are slices of its track ("lock"),
// and a hang ends each waiting thread's track with a "hang" instant that
// says who waits for what, held by whom (its open slices end a tick after
// the last event). Each wait draws an arrow (a flow event) to the thread it
// waits for, and a _DeadlockError is an instant of its own, with one to the
// holder of the lock it would have waited for. A hook's own lock (a
// threading.Lock or RLock around its actions) is an "acquire" and a
// "release" instant of cat "lock" on the thread's track; a run without threads that acquires a Lock its main thread
// holds already ends as a threaded run's hang does, on track 1.
#include <fmt/compile.h>
#include <fmt/format.h>

#include <map>
#include <optional>

#include "impsim/base/escape.h"
#include "impsim/base/text.h"
#include "impsim/run/outcome_words.h"
#include "impsim/trace/trace_formats.h"

namespace impsim {
namespace {

using namespace trace_detail;

class ChromeWriter : public TraceWriter {
 public:
  ChromeWriter(std::ostream& out, const TraceOptions& o) : out_(out), max_(o.max_lines.value_or(200'000)) {}

  void begin(const Scenario& sc, const Model& model, const std::vector<Variant>&) override {
    threaded_ = !model.threads.empty();
    name_ = sc.name.empty() ? sc.file : sc.name;
    params_ = params_text(model.params);
    out_ << "{\"traceEvents\":[\n";
  }

  void begin_variant(const Model& model, Variant v, size_t index) override {
    model_ = &model;
    pid_ = static_cast<int>(index) + 1;
    clock_ = {};
    tally_ = {};
    tally = nullptr;
    events_ = omitted_ = 0;
    open_.clear();
    reasons_.clear();
    hook_reasons_.clear();
    std::string pname = fmt::format("{} {} ({})", name_, variant_name(v), params_);
    raw(fmt::format(R"({{"name":"process_name","ph":"M","pid":{},"tid":1,"args":{{"name":"{}"}}}})", pid_,
                    json_text(pname)));
    raw(fmt::format(R"({{"name":"process_sort_index","ph":"M","pid":{},"tid":1,"args":{{"sort_index":{}}}}})", pid_,
                    pid_));
    // A threaded run: one track per Python thread, "main" first; each
    // other thread's is named when it first runs.
    raw(fmt::format(R"({{"name":"thread_name","ph":"M","pid":{},"tid":1,"args":{{"name":"{}"}}}})", pid_,
                    threaded_ ? "main" : "import system"));
    variant_ = variant_name(v);
    tid_ = 1;
    thread_ = 0;
    tracks_.clear();
    tracks_[0].named = true;
    waiting_.reset();
  }

  void end_variant(const Engine& e) override {
    if (threaded_ || waiting_) {
      end_threads(e);
    } else {
      while (!open_.empty()) close("{}");  // a limit stopped the run mid-way
    }
    // What the tally counted past the cut: a left-out event per open and
    // standalone event (a close's E is left out with its B).
    omitted_ += tally_.all_opened() + tally_.all_lines();
    const Counters& c = e.counters();
    std::string counts;
    if (e.hooks_used()) {
      const HookCounters& h = e.hook_counters();
      std::string by;
      for (const auto& [id, n] : finder_calls_by_object(e))
        by += fmt::format(R"({}"{}":{})", by.empty() ? "" : ",", json_text(id), n);
      counts = fmt::format(R"("searches":{},"finder_calls":{},"finder_calls_by_object":{{{}}},"max_depth":{},)"
                           R"("lookup_depth":{},)",
                           h.searches, h.finder_calls, by, h.max_depth, c.max_depth);
    } else {
      for (const CounterInfo* info : counters_of_groups(kCoreCounters))
        counts += fmt::format(R"("{}":{},)", info->name, c.*info->field);
    }
    // A threaded run: how each thread ended and a hang's waits.
    std::string threads;
    if (threaded_ || !e.hang_waits().empty()) {
      std::string ended, waits;
      for (const std::string& r : thread_end_texts(e.thread_ends()))
        ended += fmt::format("{}\"{}\"", ended.empty() ? "" : ",", json_text(r));
      for (const HangWait& w : e.hang_waits())
        waits += fmt::format("{}\"{}\"", waits.empty() ? "" : ",", json_text(hang_wait_text(w)));
      threads = fmt::format(R"(,"threads":[{}],"hang":[{}])", ended, waits);
    }
    summaries_.push_back(
        fmt::format(R"("{}":{{{}"ticks":{},"events_left_out":{}{}}})", variant_, counts, now(), omitted_, threads));
  }

  void end() override {
    out_ << "\n],\n\"otherData\":{";
    out_ << fmt::format(R"("scenario":"{}","parameters":"{}",)", json_text(name_), json_text(params_));
    out_ << R"("clock":"1 tick (shown as 1 us) per name a sys.modules walk examines and per finder find_spec call",)";
    out_ << fmt::format(R"("max_events_per_variant":{},"variants":{{)", max_);
    for (size_t i = 0; i < summaries_.size(); ++i) out_ << (i ? "," : "") << summaries_[i];
    out_ << "}}}\n";
  }

  void step_begin(const Engine& e, const CStep& s) override {
    follow(e);
    if (full()) return open("step", {}, {});  // past --max-lines: counted, not formatted
    open("step", step_text(*model_, s), fmt::format(FMT_COMPILE(R"({{"step":"{}"}})"), json_text(*s.pointer)));
  }
  void step_end(const Engine& e, const CStep&, const char* result) override {
    follow(e);
    if (unwound()) return;
    if (!open_.back().shown) return close({});  // its B was left out: so is its E
    close(fmt::format(FMT_COMPILE(R"({{"result":"{}"}})"), json_text(result)));
  }
  void import_begin(const Engine& e, NameId name) override {
    follow(e);
    if (full()) return open("import", {}, {});
    open("import", "import " + text(name), fmt::format(FMT_COMPILE(R"({{"module":"{}"}})"), json_text(text(name))));
  }
  void import_end(const Engine& e, NameId, bool ok) override {
    follow(e);
    if (unwound()) return;
    if (!open_.back().shown) return close({});  // its B was left out: so is its E
    close(fmt::format(FMT_COMPILE(R"({{"result":"{}"}})"), ok ? "loaded" : "raised"));
  }
  void ask_begin(const Engine& e, NameId name, FinderClass k, FinderId finder, int64_t index,
                 const MetaPath& walked) override {
    follow(e);
    clock_.ask();
    reasons_.push_back(std::nullopt);
    hook_reasons_.push_back(std::nullopt);
    if (full()) return open("ask", {}, {});
    const bool stands = ask_stands(walked, index, finder);
    const std::string note = ask_note(e, walked, index, finder);
    const std::string note_arg = note.empty() ? "" : fmt::format(FMT_COMPILE(R"(,"note":"{}")"), json_text(note));
    if (e.hooks_used()) {
      // A list of finder objects: the object asked, the loop's index and the length of the list it walks.
      std::string who = finder_id(e, finder);
      open("ask", fmt::format("ask {} {}", who, text(name)),
           fmt::format(FMT_COMPILE(R"({{"name":"{}","finder":"{}","index":{},"len":{},"meta_path":"{}"{}}})"),
                       json_text(text(name)), json_text(who), index, walked.size(),
                       json_text(meta_path_text(e, walked, stands ? index : -1)), note_arg));
      return;
    }
    const int64_t copies = walked.proxy_copies();
    std::string who = k != FinderClass::Proxy ? finder_name(k) : stands ? fmt::format("P{}", index + 1) : "P";
    open("ask", fmt::format("ask {} {}", who, text(name)),
         fmt::format(FMT_COMPILE(R"({{"name":"{}","index":{},"copies":{},"meta_path":"{}"{}}})"), json_text(text(name)),
                     index, copies, meta_path_text(copies, stands ? index : -1), note_arg));
  }
  void decide(const Engine& e, NameId, FindReason r) override {
    follow(e);
    reasons_.back() = r;
  }
  // A hook's decision goes with its ask's end, as P's; one made in a direct
  // call, where its ask has decided already, is an instant of its own.
  void hook_decide(const Engine& e, FinderId f, NameId name, HookReason r) override {
    follow(e);
    if (!hook_reasons_.empty() && !hook_reasons_.back()) {
      hook_reasons_.back() = r;
      return;
    }
    if (full()) return instant("decision", {}, "hook");
    instant("decision",
            fmt::format(FMT_COMPILE(R"({{"finder":"{}","name":"{}","reason":"{}","why":"{}"}})"),
                        json_text(finder_id(e, f)), json_text(text(name)), hook_reason_key(r), hook_reason_text(r)),
            "hook");
  }
  void hook_call(const Engine& e, FinderId caller, NameId name, HookCall c, FinderId called) override {
    follow(e);
    if (full()) return instant("hook call", {}, "hook");
    instant(
        "hook call",
        fmt::format(FMT_COMPILE(R"({{"finder":"{}","call":"{}","name":"{}","called":"{}","why":"{}"}})"),
                    json_text(finder_id(e, caller)), hook_call_key(c), json_text(text(name)),
                    json_text(finder_id(e, called)), json_text(hook_call_text(c, text(name), finder_id(e, called)))),
        "hook");
  }
  void hook_lock(const Engine& e, FinderId f, NameId name, bool acquire, HookLockSite site) override {
    follow(e);
    const char* what = acquire ? "acquire" : "release";
    if (full()) return instant(what, {}, "lock");
    const std::string n = name == kNoName ? std::string() : text(name);
    // "site" only where the lock is not find_spec's: those traces keep their bytes.
    const std::string at = site == HookLockSite::FindSpec
                               ? std::string()
                               : fmt::format(FMT_COMPILE(R"(,"site":"{}")"), hook_lock_site_key(site));
    instant(what,
            fmt::format(R"x({{"lock":"hook","hook_lock":"{}","finder":"{}","name":"{}"{},"why":"{} {}s {} {}"}})x",
                        json_text(e.hook_lock_name(f)), json_text(finder_id(e, f)), json_text(n), at,
                        json_text(finder_id(e, f)), what, json_text(e.hook_lock_name(f)),
                        json_text(hook_lock_where(site, n))),
            "lock");
  }
  void ask_end(const Engine& e, NameId, FinderClass k, AskAnswer a) override {
    follow(e);
    if (unwound()) return;
    const char* answer = a == AskAnswer::Spec         ? "spec"
                         : a == AskAnswer::Suppressed ? "None (suppressed)"
                         : a == AskAnswer::Raised     ? "raised"
                                                      : "None";
    std::optional<FindReason> r = reasons_.back();
    reasons_.pop_back();
    std::optional<HookReason> h = hook_reasons_.back();
    hook_reasons_.pop_back();
    if (!open_.back().shown) return close({});  // its B was left out: so is its E
    if (h) {
      close(fmt::format(FMT_COMPILE(R"({{"answer":"{}","reason":"{}","why":"{}"}})"), answer, hook_reason_key(*h),
                        hook_reason_text(*h)));
      return;
    }
    if (k != FinderClass::Proxy || !r) {
      close(fmt::format(FMT_COMPILE(R"({{"answer":"{}"}})"), answer));
      return;
    }
    close(fmt::format(FMT_COMPILE(R"({{"answer":"{}","reason":"{}","why":"{}"}})"), answer, reason_key(*r),
                      reason_text(*r)));
  }
  // A guard's entry and exit are instants: what it did and why.
  void guard_begin(const Engine& e, GuardSite site, bool enable, GuardAction a) override {
    follow(e);
    if (full()) return instant("guard", {});
    instant("guard",
            fmt::format(FMT_COMPILE(R"({{"site":"{}","enable":{},"action":"{}","why":"{}"}})"), guard_site_key(site),
                        enable ? "true" : "false", guard_action_key(a), guard_action_text(a)));
  }
  void guard_end(const Engine& e, GuardSite site, GuardAction a) override {
    follow(e);
    if (full()) return instant("guard exit", {});
    instant("guard exit", fmt::format(FMT_COMPILE(R"({{"site":"{}","action":"{}","why":"{}"}})"), guard_site_key(site),
                                      guard_action_key(a), guard_exit_text(a)));
  }
  void lookup_begin(const Engine& e, NameId name, uint64_t depth, uint8_t mark) override {
    follow(e);
    if (full()) return open("lookup", {}, {});
    open("lookup", fmt::format("lookup {}", text(name)),
         fmt::format(FMT_COMPILE(R"({{"name":"{}","depth":{},"mark":"{}"}})"), json_text(text(name)), depth,
                     mark == kMarkDisabled ? "disabled" : "enabled"));
  }
  void lookup_end(const Engine& e, NameId, uint64_t, bool found) override {
    follow(e);
    if (unwound()) return;
    if (!open_.back().shown) return close({});  // its B was left out: so is its E
    close(fmt::format(FMT_COMPILE(R"({{"found":{}}})"), found ? "true" : "false"));
  }
  void toggle(const Engine& e, bool enable, uint64_t walked, int64_t copies) override {
    follow(e);
    uint64_t ts = now();
    clock_.walk(walked);
    if (!room()) return;
    event(fmt::format(FMT_COMPILE(R"({{"name":"{}","cat":"toggle","ph":"X","ts":{},"dur":{},"pid":{},"tid":{},)"
                                  R"("args":{{"walked":{},"copies_after":{},"meta_path":"{}"}}}})"),
                      enable ? "enable" : "disable", ts, walked, pid_, tid_, walked, copies,
                      json_text(meta_path_now(e, copies))));
  }
  void body_begin(const Engine& e, NameId m, BodyKind kind) override {
    follow(e);
    if (full()) return open("body", {}, {});
    open("body",
         (kind == BodyKind::Call           ? "call in "
          : kind == BodyKind::CreateModule ? "create_module for "
                                           : "body of ") +
             text(m),
         fmt::format(FMT_COMPILE(R"({{"module":"{}"}})"), json_text(text(m))));
  }
  void body_end(const Engine& e, NameId, BodyKind) override {
    follow(e);
    if (unwound()) return;
    close("{}");
  }

  // A lock wait is a slice of the waiting thread's track, from the moment
  // it parks to the moment it is woken: who it waits for and why.
  void wait_begin(const Engine& e, const ThreadWait& w) override {
    follow(e);
    waiting_ = w;
    if (full()) {
      open("lock", {}, {});
      return arrow_to(e, w.on, "waits for");  // counted as left out
    }
    std::string args = fmt::format(R"({{"lock":"{}")", wait_key(w));
    if (w.kind == WaitKind::ModuleLock) args += fmt::format(R"(,"module":"{}")", json_text(text(w.module)));
    if (w.kind == WaitKind::HookLock) args += fmt::format(R"(,"hook_lock":"{}")", json_text(e.hook_lock_text(w.lock)));
    if (*w.site) args += fmt::format(R"(,"site":"{}")", w.site);
    args += fmt::format(R"(,"{}":"{}","why":"{}"}})", w.kind == WaitKind::Join ? "joins" : "held_by",
                        json_text(thread_name(e, w.on)), json_text(wait_text(e, w)));
    open("lock", wait_text(e, w), args);
    arrow_to(e, w.on, "waits for");
  }
  void wait_end(const Engine& e, const ThreadWait& w) override {
    follow(e);
    if (unwound()) return;
    waiting_.reset();
    if (!open_.back().shown) return close({});  // its B was left out: so is its E
    close(fmt::format(R"({{"woken":"{}"}})", json_text(woken_text(e, w))));
  }
  // A cycle _ModuleLock.acquire found is an instant of its own, with an
  // arrow to the thread holding the lock it would have waited for.
  void deadlock(const Engine& e, const std::vector<ThreadWait>& cycle, bool swallowed) override {
    follow(e);
    if (full()) {
      instant("_DeadlockError", {}, "lock");
      if (!cycle.empty()) arrow_to(e, cycle.front().on, "deadlock");  // counted as left out
      return;
    }
    std::string waits;
    int32_t waiter = e.running_thread();
    for (const ThreadWait& w : cycle) {
      waits +=
          fmt::format(R"({}{{"thread":"{}","module":"{}","held_by":"{}"}})", waits.empty() ? "" : ",",
                      json_text(thread_name(e, waiter)), json_text(text(w.module)), json_text(thread_name(e, w.on)));
      waiter = w.on;
    }
    instant("_DeadlockError",
            fmt::format(R"({{"swallowed":{},"cycle":[{}],"why":"{}"}})", swallowed ? "true" : "false", waits,
                        json_text(deadlock_text(e, cycle, swallowed))),
            "lock");
    if (!cycle.empty()) arrow_to(e, cycle.front().on, "deadlock");
  }

 private:
  const std::string& text(NameId n) const { return model_->names.text(n); }

  // A threaded run: each Python thread's events nest on a track of their
  // own (tid 1 is main, then the threads as they start), so the open
  // events of the thread that ran last are set aside when another runs.
  // An event open: whether its B was written, and the asks and lookups
  // the engine had open in the tally when it began (unwound()).
  struct Open {
    bool shown;
    uint64_t under;
  };
  struct Track {
    std::vector<Open> open;
    std::vector<std::optional<FindReason>> reasons;
    std::vector<std::optional<HookReason>> hook_reasons;
    std::optional<ThreadWait> waiting;
    bool named = false;
  };
  void follow(const Engine& e) {
    if (!e.threaded_run() || e.running_thread() == thread_) return;
    park();
    thread_ = e.running_thread();
    Track& t = tracks_[thread_];
    open_ = std::move(t.open);
    reasons_ = std::move(t.reasons);
    hook_reasons_ = std::move(t.hook_reasons);
    waiting_ = t.waiting;
    tid_ = thread_ + 1;
    if (t.named) return;
    t.named = true;
    raw(fmt::format(R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"{}"}}}})", pid_, tid_,
                    json_text(thread_name(e, thread_))));
    raw(fmt::format(R"({{"name":"thread_sort_index","ph":"M","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", pid_,
                    tid_, tid_));
  }
  void park() {
    Track& t = tracks_[thread_];
    t.open = std::move(open_);
    t.reasons = std::move(reasons_);
    t.hook_reasons = std::move(hook_reasons_);
    t.waiting = waiting_;
    open_.clear();
    reasons_.clear();
    hook_reasons_.clear();
  }
  // The end of a threaded run: a thread still waiting is part of a hang,
  // marked on its track where its wait never ends; every open event is
  // closed there.
  void end_threads(const Engine& e) {
    park();
    // A hang's slices end a tick past the last event, so that a viewer
    // draws them (the totals keep the clock's own ticks).
    const uint64_t last = now();
    if (!e.hang_waits().empty()) clock_.now += 1;
    for (auto& [thread, t] : tracks_) {
      thread_ = thread;
      tid_ = thread + 1;
      open_ = std::move(t.open);
      if (t.waiting && !full() && (open_.empty() || open_.back().shown))
        instant("hang",
                fmt::format(R"({{"why":"{} {}: the process never ends"}})", json_text(thread_name(e, thread)),
                            json_text(wait_text(e, *t.waiting))),
                "lock");
      while (!open_.empty()) close(t.waiting ? R"({"hang":true})" : "{}");
    }
    tracks_.clear();
    clock_.now = last;
  }

  // A flow event (an arrow, in Perfetto and chrome://tracing) from the
  // running thread's open slice to the slice thread `to` has open at the
  // same tick: the thread a waiting one waits for. None to a thread that
  // has no track yet (a join of one never started), nor to itself.
  void arrow_to(const Engine& e, int32_t to, const char* name) {
    const auto track = tracks_.find(to);
    if (!e.threaded_run() || to == thread_ || track == tracks_.end() || !track->second.named) return;
    // Inside an event left out, or past --max-lines: its two events are
    // counted as left out, as every other event is.
    if (!(open_.empty() || open_.back().shown) || (max_ != 0 && events_ + 2 > max_)) {
      omitted_ += 2;
      return;
    }
    events_ += 2;
    cut_if_full();
    const uint64_t id = ++arrows_;
    event(fmt::format(R"({{"name":"{}","cat":"lock","ph":"s","id":{},"ts":{},"pid":{},"tid":{}}})", name, id, now(),
                      pid_, tid_));
    event(fmt::format(R"({{"name":"{}","cat":"lock","ph":"f","bp":"e","id":{},"ts":{},"pid":{},"tid":{}}})", name, id,
                      now(), pid_, to + 1));
  }

  // Past --max-lines nothing more is written, only counted: the callbacks
  // then skip formatting (open, close and instant count as before).
  bool full() const { return max_ != 0 && events_ >= max_; }

  bool room() {
    if (max_ != 0 && events_ >= max_) {
      ++omitted_;
      return false;
    }
    ++events_;
    cut_if_full();
    return true;
  }
  // Once nothing more is written, the engine may count what comes next in
  // tally_ itself (TraceTally): every event from then on is left out.
  void cut_if_full() {
    if (full()) tally = &tally_;
  }
  // A close heard while asks or lookups the engine counted in the tally
  // since the innermost event here began are open (a limit stopped the
  // run inside them): it closes the innermost of those, left out as they
  // are, not one of this stack's.
  bool unwound() {
    if (engine_open() <= (open_.empty() ? 0 : open_.back().under)) return false;
    ++tally_.closed;
    return true;
  }
  // The asks and lookups the engine has open in the tally: none, but where
  // a limit stopped the run inside them (a limit skips every close). The
  // writer adds no frames of its own there.
  uint64_t engine_open() const { return tally_.all_opened() - tally_.closed; }
  // The simulated clock, with the ticks the tally counted.
  uint64_t now() {
    clock_.now += tally_.ticks;
    tally_.ticks = 0;
    return clock_.now;
  }
  void raw(const std::string& s) {
    out_ << (first_ ? "" : ",\n") << s;
    first_ = false;
  }
  void event(const std::string& s) { raw(s); }
  void instant(const char* name, const std::string& args, const char* cat = "guard") {
    if (!(open_.empty() || open_.back().shown)) {  // inside an event left out
      ++omitted_;
      return;
    }
    if (!room()) return;
    event(fmt::format(FMT_COMPILE(R"({{"name":"{}","cat":"{}","ph":"i","s":"t","ts":{},"pid":{},"tid":{},"args":{}}})"),
                      name, cat, now(), pid_, tid_, args));
  }
  void open(const char* cat, const std::string& name, const std::string& args) {
    // Nothing inside an event that was left out is written either, so
    // every B written gets its E.
    bool shown = (open_.empty() || open_.back().shown) && room();
    if (!shown && !(open_.empty() || open_.back().shown)) ++omitted_;
    open_.push_back({shown, engine_open()});
    if (!shown) return;
    event(fmt::format(FMT_COMPILE(R"({{"name":"{}","cat":"{}","ph":"B","ts":{},"pid":{},"tid":{},"args":{}}})"),
                      json_text(name), cat, now(), pid_, tid_, args));
  }
  void close(const std::string& args) {
    bool shown = open_.back().shown;
    open_.pop_back();
    if (!shown) return;
    event(fmt::format(FMT_COMPILE(R"({{"ph":"E","ts":{},"pid":{},"tid":{},"args":{}}})"), now(), pid_, tid_, args));
  }

  std::ostream& out_;
  uint64_t max_;
  const Model* model_ = nullptr;
  std::string name_, params_, variant_;
  int pid_ = 1;
  bool first_ = true;
  SimClock clock_;
  TraceTally tally_;
  uint64_t events_ = 0, omitted_ = 0;
  uint64_t arrows_ = 0;  // flow ids, unique in the file
  std::vector<Open> open_;
  std::vector<std::optional<FindReason>> reasons_;       // one per open ask
  std::vector<std::optional<HookReason>> hook_reasons_;  // one per open ask
  std::vector<std::string> summaries_;
  bool threaded_ = false;
  int32_t thread_ = 0;  // the Python thread whose events are being written
  int tid_ = 1;
  std::optional<ThreadWait> waiting_;
  std::map<int32_t, Track> tracks_;  // the other threads' open events, set aside
};

}  // namespace

std::unique_ptr<TraceWriter> make_chrome_writer(std::ostream& out, const TraceOptions& o) {
  return std::make_unique<ChromeWriter>(out, o);
}

}  // namespace impsim
