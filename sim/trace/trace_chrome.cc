// `impsim trace --format chrome`: the Trace Event format (a JSON object with
// `traceEvents`), which Perfetto (ui.perfetto.dev) and chrome://tracing
// open. Steps, imports, module bodies, finder asks and lookups are duration
// events (B/E) that nest; each walk of sys.modules is a complete event (X)
// as long as the names it examines. One process per variant. Timestamps are
// the simulated clock's ticks, shown as microseconds.
#include <fmt/format.h>

#include <optional>

#include "impsim/base/escape.h"
#include "impsim/report/report.h"
#include "impsim/trace/trace_formats.h"

namespace impsim {
namespace {

using namespace trace_detail;

class ChromeWriter : public TraceWriter {
 public:
  ChromeWriter(std::ostream& out, const TraceOptions& o) : out_(out), max_(o.max_lines.value_or(200'000)) {}

  void begin(const Scenario& sc, const Model& model, const std::vector<Variant>&) override {
    name_ = sc.name.empty() ? sc.file : sc.name;
    params_ = params_text(model.params);
    out_ << "{\"traceEvents\":[\n";
  }

  void begin_variant(const Model& model, Variant v, size_t index) override {
    model_ = &model;
    pid_ = static_cast<int>(index) + 1;
    clock_ = {};
    events_ = omitted_ = 0;
    open_.clear();
    reasons_.clear();
    hook_reasons_.clear();
    std::string pname = fmt::format("{} {} ({})", name_, variant_name(v), params_);
    raw(fmt::format(R"({{"name":"process_name","ph":"M","pid":{},"tid":1,"args":{{"name":"{}"}}}})", pid_,
                    json_text(pname)));
    raw(fmt::format(R"({{"name":"process_sort_index","ph":"M","pid":{},"tid":1,"args":{{"sort_index":{}}}}})", pid_,
                    pid_));
    raw(fmt::format(R"({{"name":"thread_name","ph":"M","pid":{},"tid":1,"args":{{"name":"import system"}}}})", pid_));
    variant_ = variant_name(v);
  }

  void end_variant(const Engine& e) override {
    while (!open_.empty()) close("{}");  // a limit stopped the run mid-way
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
    summaries_.push_back(
        fmt::format(R"("{}":{{{}"ticks":{},"events_left_out":{}}})", variant_, counts, clock_.now, omitted_));
  }

  void end() override {
    out_ << "\n],\n\"otherData\":{";
    out_ << fmt::format(R"("scenario":"{}","parameters":"{}",)", json_text(name_), json_text(params_));
    out_ << R"("clock":"1 tick (shown as 1 us) per name a sys.modules walk examines and per finder find_spec call",)";
    out_ << fmt::format(R"("max_events_per_variant":{},"variants":{{)", max_);
    for (size_t i = 0; i < summaries_.size(); ++i) out_ << (i ? "," : "") << summaries_[i];
    out_ << "}}}\n";
  }

  void step_begin(const Engine&, const CStep& s) override {
    if (full()) return open("step", {}, {});  // past --max-lines: counted, not formatted
    open("step", step_text(*model_, s), fmt::format(R"({{"step":"{}"}})", json_text(*s.pointer)));
  }
  void step_end(const Engine&, const CStep&, const char* result) override {
    if (!open_.back()) return close({});  // its B was left out: so is its E
    close(fmt::format(R"({{"result":"{}"}})", json_text(result)));
  }
  void import_begin(const Engine&, NameId name) override {
    if (full()) return open("import", {}, {});
    open("import", "import " + text(name), fmt::format(R"({{"module":"{}"}})", json_text(text(name))));
  }
  void import_end(const Engine&, NameId, bool ok) override {
    if (!open_.back()) return close({});  // its B was left out: so is its E
    close(fmt::format(R"({{"result":"{}"}})", ok ? "loaded" : "raised"));
  }
  void ask_begin(const Engine& e, NameId name, FinderKind k, int64_t index, int64_t copies) override {
    clock_.ask();
    reasons_.push_back(std::nullopt);
    hook_reasons_.push_back(std::nullopt);
    if (full()) return open("ask", {}, {});
    if (e.hooks_used()) {
      // A list of finder objects: the object asked, the loop's index and the length of the list it walks.
      std::string who = finder_id_at(e, index);
      open("ask", fmt::format("ask {} {}", who, text(name)),
           fmt::format(R"({{"name":"{}","finder":"{}","index":{},"len":{},"meta_path":"{}"}})", json_text(text(name)),
                       json_text(who), index, copies, json_text(meta_path_text(e, index))));
      return;
    }
    std::string who = k == FinderKind::Proxy ? fmt::format("P{}", index + 1) : finder_name(k);
    open("ask", fmt::format("ask {} {}", who, text(name)),
         fmt::format(R"({{"name":"{}","index":{},"copies":{},"meta_path":"{}"}})", json_text(text(name)), index, copies,
                     meta_path_text(copies, index)));
  }
  void decide(const Engine&, NameId, FindReason r) override { reasons_.back() = r; }
  // A hook's decision goes with its ask's end, as P's; one made in a direct
  // call, where its ask has decided already, is an instant of its own.
  void hook_decide(const Engine& e, FinderId f, NameId name, HookReason r) override {
    if (!hook_reasons_.empty() && !hook_reasons_.back()) {
      hook_reasons_.back() = r;
      return;
    }
    if (full()) return instant("decision", {}, "hook");
    instant("decision",
            fmt::format(R"({{"finder":"{}","name":"{}","reason":"{}","why":"{}"}})", json_text(finder_id(e, f)),
                        json_text(text(name)), hook_reason_key(r), hook_reason_text(r)),
            "hook");
  }
  void hook_call(const Engine& e, FinderId caller, NameId name, HookCall c, FinderId called) override {
    if (full()) return instant("hook call", {}, "hook");
    instant(
        "hook call",
        fmt::format(R"({{"finder":"{}","call":"{}","name":"{}","called":"{}","why":"{}"}})",
                    json_text(finder_id(e, caller)), hook_call_key(c), json_text(text(name)),
                    json_text(finder_id(e, called)), json_text(hook_call_text(c, text(name), finder_id(e, called)))),
        "hook");
  }
  void ask_end(const Engine&, NameId, FinderKind k, AskAnswer a) override {
    const char* answer = a == AskAnswer::Spec         ? "spec"
                         : a == AskAnswer::Suppressed ? "None (suppressed)"
                         : a == AskAnswer::Raised     ? "raised"
                                                      : "None";
    std::optional<FindReason> r = reasons_.back();
    reasons_.pop_back();
    std::optional<HookReason> h = hook_reasons_.back();
    hook_reasons_.pop_back();
    if (!open_.back()) return close({});  // its B was left out: so is its E
    if (h) {
      close(fmt::format(R"({{"answer":"{}","reason":"{}","why":"{}"}})", answer, hook_reason_key(*h),
                        hook_reason_text(*h)));
      return;
    }
    if (k != FinderKind::Proxy || !r) {
      close(fmt::format(R"({{"answer":"{}"}})", answer));
      return;
    }
    close(fmt::format(R"({{"answer":"{}","reason":"{}","why":"{}"}})", answer, reason_key(*r), reason_text(*r)));
  }
  // A guard's entry and exit are instants: what it did and why.
  void guard_begin(const Engine&, GuardSite site, bool enable, GuardAction a) override {
    if (full()) return instant("guard", {});
    instant("guard", fmt::format(R"({{"site":"{}","enable":{},"action":"{}","why":"{}"}})", guard_site_key(site),
                                 enable ? "true" : "false", guard_action_key(a), guard_action_text(a)));
  }
  void guard_end(const Engine&, GuardSite site, GuardAction a) override {
    if (full()) return instant("guard exit", {});
    instant("guard exit", fmt::format(R"({{"site":"{}","action":"{}","why":"{}"}})", guard_site_key(site),
                                      guard_action_key(a), guard_exit_text(a)));
  }
  void lookup_begin(const Engine&, NameId name, uint64_t depth, uint8_t mark) override {
    if (full()) return open("lookup", {}, {});
    open("lookup", fmt::format("lookup {}", text(name)),
         fmt::format(R"({{"name":"{}","depth":{},"mark":"{}"}})", json_text(text(name)), depth,
                     mark == kMarkDisabled ? "disabled" : "enabled"));
  }
  void lookup_end(const Engine&, NameId, uint64_t, bool found) override {
    if (!open_.back()) return close({});  // its B was left out: so is its E
    close(fmt::format(R"({{"found":{}}})", found ? "true" : "false"));
  }
  void toggle(const Engine& e, bool enable, uint64_t walked, int64_t copies) override {
    uint64_t ts = clock_.now;
    clock_.walk(walked);
    if (!room()) return;
    event(fmt::format(R"({{"name":"{}","cat":"toggle","ph":"X","ts":{},"dur":{},"pid":{},"tid":1,)"
                      R"("args":{{"walked":{},"copies_after":{},"meta_path":"{}"}}}})",
                      enable ? "enable" : "disable", ts, walked, pid_, walked, copies,
                      json_text(meta_path_now(e, copies))));
  }
  void body_begin(const Engine&, NameId m, bool call) override {
    if (full()) return open("body", {}, {});
    open("body", (call ? "call in " : "body of ") + text(m), fmt::format(R"({{"module":"{}"}})", json_text(text(m))));
  }
  void body_end(const Engine&, NameId, bool) override { close("{}"); }

 private:
  const std::string& text(NameId n) const { return model_->names.text(n); }

  // Past --max-lines nothing more is written, only counted: the callbacks
  // then skip formatting (open, close and instant count as before).
  bool full() const { return max_ != 0 && events_ >= max_; }

  bool room() {
    if (max_ != 0 && events_ >= max_) {
      ++omitted_;
      return false;
    }
    ++events_;
    return true;
  }
  void raw(const std::string& s) {
    out_ << (first_ ? "" : ",\n") << s;
    first_ = false;
  }
  void event(const std::string& s) { raw(s); }
  void instant(const char* name, const std::string& args, const char* cat = "guard") {
    if (!(open_.empty() || open_.back())) {  // inside an event left out
      ++omitted_;
      return;
    }
    if (!room()) return;
    event(fmt::format(R"({{"name":"{}","cat":"{}","ph":"i","s":"t","ts":{},"pid":{},"tid":1,"args":{}}})", name, cat,
                      clock_.now, pid_, args));
  }
  void open(const char* cat, const std::string& name, const std::string& args) {
    // Nothing inside an event that was left out is written either, so
    // every B written gets its E.
    bool shown = (open_.empty() || open_.back()) && room();
    if (!shown && !(open_.empty() || open_.back())) ++omitted_;
    open_.push_back(shown);
    if (!shown) return;
    event(fmt::format(R"({{"name":"{}","cat":"{}","ph":"B","ts":{},"pid":{},"tid":1,"args":{}}})", json_text(name), cat,
                      clock_.now, pid_, args));
  }
  void close(const std::string& args) {
    bool shown = open_.back();
    open_.pop_back();
    if (!shown) return;
    event(fmt::format(R"({{"ph":"E","ts":{},"pid":{},"tid":1,"args":{}}})", clock_.now, pid_, args));
  }

  std::ostream& out_;
  uint64_t max_;
  const Model* model_ = nullptr;
  std::string name_, params_, variant_;
  int pid_ = 1;
  bool first_ = true;
  SimClock clock_;
  uint64_t events_ = 0, omitted_ = 0;
  std::vector<bool> open_;
  std::vector<std::optional<FindReason>> reasons_;       // one per open ask
  std::vector<std::optional<HookReason>> hook_reasons_;  // one per open ask
  std::vector<std::string> summaries_;
};

}  // namespace

std::unique_ptr<TraceWriter> make_chrome_writer(std::ostream& out, const TraceOptions& o) {
  return std::make_unique<ChromeWriter>(out, o);
}

}  // namespace impsim
