// `impsim trace --format importtime`: lines in the format of
// `python -X importtime` (CPython 3.11's Python/import.c), so tools that
// read it (tuna) show a scenario. One line per _find_and_load_unlocked,
// written when it ends, children before their parent, indented two spaces
// per level; a failed import gets its line too, as in CPython. Time is the
// simulated clock (the cost model's ticks) in place of microseconds.
//
// Each variant ends with one more line, `[before]` or `[after]`, at level 0:
// the whole run, so its self time is the work done outside any import (a
// probe of a missing name, the guards' walks) and every import sits below
// it. The header line is written once, first, as CPython does.
//
// A hook scenario also gets one line per find_spec call of a finder
// object, `dh.find_spec('distutils')`, below the import (or the
// importlib.util.find_spec) that asked it: its self time is the call's
// tick, its cumulative time takes in what the finder imported while it
// ran, so a module body run inside find_spec shows under the object
// that ran it. Paddle scenarios keep CPython's lines only.
//
// A threaded run's profile is what CPython writes when threads import at
// once, measured on 3.9-3.13: import_find_and_load keeps its nesting level
// and the time its children took (`import_level`, `accumulated`) once per
// process, not per thread, so each thread's lines come as its imports
// finish, interleaved with the others', indented by how many imports of
// any thread are open then, and an import's self time subtracts whatever
// finished below the level meanwhile, another thread's too (it can be
// negative). A line spans `_find_and_load`, the module lock's waits
// included (find_and_load_begin); a thread that never finishes (a hang)
// writes no line for the imports it still has open, as CPython, and
// standard error says so.
//
// A variant's profile stops at --max-lines lines (200,000 unless set; 0:
// no limit): a scenario can ask a thousand finders a million times, and
// each call is a line. Past it lines are counted, and standard error says
// how many were left out; the profile itself stays lines tuna reads.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "impsim/base/escape.h"
#include "impsim/base/text.h"
#include "impsim/run/outcome_words.h"
#include "impsim/trace/trace_formats.h"

namespace impsim {
namespace {

constexpr uint64_t kImportTimeLines = 200'000;

class ImportTimeWriter : public TraceWriter {
 public:
  ImportTimeWriter(std::ostream& out, uint64_t max) : out_(out), max_(max) {}

  void begin(const Scenario&, const Model& model, const std::vector<Variant>&) override {
    threaded_ = !model.threads.empty();
    out_ << "import time: self [us] | cumulative | imported package\n";
  }
  void begin_variant(const Model& model, Variant v, size_t) override {
    model_ = &model;
    clock_ = {};
    // Only the imports and finder calls make lines: the rest is counted in
    // tally_, by the engine itself in a run plain but for its trace.
    tally_ = {};
    tally = &tally_;
    stack_.clear();
    variant_ = variant_name(v);
    lines_ = omitted_ = 0;
    stack_.push_back({"[" + variant_ + "]", 0, 0});
    if (threaded_) {
      stacks_.clear();
      level_ = accumulated_ = 0;
      root_ = begin_line("[" + variant_ + "]");
    }
  }
  void end_variant(const Engine& e) override {
    if (threaded_) {
      stack_.clear();
      // The run's own line stays at level 0, even past a hang's open imports.
      level_ = 1;
      end_line(root_);
      if (!e.hang_waits().empty()) {
        uint64_t open = 0;
        for (const auto& [t, opened] : stacks_) open += opened.size();
        fmt::print(stderr, "impsim: trace: {} hangs ({}): its {} unfinished {} no line, as CPython would not\n",
                   terminal_text(variant_), terminal_text(hang_waits_text(e.hang_waits())),
                   grouped(open),
                   open == 1 ? "import (or find_spec call) writes" : "imports (or find_spec calls) write");
      }
    }
    while (!stack_.empty()) pop();  // the root, and any import a limit left open
    // Not in the profile: a line that is not `import time:` would not parse.
    if (omitted_ != 0)
      fmt::print(stderr, "impsim: trace: the importtime profile of {} is cut at --max-lines {}: {} more {} left out\n",
                 terminal_text(variant_), max_, grouped(omitted_), omitted_ == 1 ? "line" : "lines");
  }

  void import_begin(const Engine&, NameId name) override {
    if (!threaded_) stack_.push_back({full() ? std::string() : model_->names.text(name), now(), 0});
  }
  void import_end(const Engine&, NameId, bool) override {
    if (!threaded_) pop();
  }
  void find_and_load_begin(const Engine& e, NameId name) override {
    stacks_[e.running_thread()].push_back(begin_line(full() ? std::string() : model_->names.text(name)));
  }
  void find_and_load_end(const Engine& e, NameId, bool) override { end_of(e); }
  void ask_begin(const Engine& e, NameId name, FinderClass, FinderId finder, int64_t, const MetaPath&) override {
    if (e.hooks_used()) {
      // Past --max-lines no line is written again: its name is not made.
      std::string line = full() ? std::string()
                                : fmt::format("{}.{}('{}')", trace_detail::finder_id(e, finder),
                                              trace_detail::finder_method(e, finder), model_->names.text(name));
      if (threaded_)
        stacks_[e.running_thread()].push_back(begin_line(std::move(line)));
      else
        stack_.push_back({std::move(line), now(), 0});
    }
    clock_.ask();
  }
  void ask_end(const Engine& e, NameId, FinderClass, AskAnswer) override {
    if (!e.hooks_used()) return;
    if (threaded_)
      end_of(e);
    else
      pop();
  }
  void toggle(const Engine&, bool, uint64_t walked, int64_t) override { clock_.walk(walked); }

 private:
  struct Open {
    std::string name;
    uint64_t start;
    uint64_t children;  // cumulative time of the imports directly below
  };
  void pop() {
    Open o = std::move(stack_.back());
    stack_.pop_back();
    uint64_t cum = now() - o.start;
    size_t level = stack_.size();
    if (!stack_.empty()) stack_.back().children += cum;
    write(cum - o.children, cum, level, o.name);
  }
  bool full() const { return max_ != 0 && lines_ >= max_; }
  template <class Int>
  void write(Int self, Int cum, size_t level, const std::string& name) {
    if (full()) {
      ++omitted_;
      return;
    }
    ++lines_;
    // Module names are identifiers, but Unicode ones: a Hangul filler prints as nothing.
    out_ << fmt::format("import time: {:>9} | {:>10} | {}{}\n", self, cum, std::string(level * 2, ' '),
                        terminal_text(name));
  }

  // import.c's import_find_and_load, with its two process-wide counters.
  struct Timed {
    std::string name;
    uint64_t start;
    int64_t accumulated_copy;
  };
  Timed begin_line(std::string name) {
    Timed t{std::move(name), now(), accumulated_};
    ++level_;
    accumulated_ = 0;
    return t;
  }
  void end_line(const Timed& t) {
    const auto cum = static_cast<int64_t>(now() - t.start);
    --level_;
    write(cum - accumulated_, cum, static_cast<size_t>(std::max<int64_t>(level_, 0)), t.name);
    accumulated_ = t.accumulated_copy + cum;
  }
  void end_of(const Engine& e) {
    std::vector<Timed>& opened = stacks_[e.running_thread()];
    const Timed t = std::move(opened.back());
    opened.pop_back();
    end_line(t);
  }

  std::ostream& out_;
  uint64_t max_;
  bool threaded_ = false;
  std::map<int32_t, std::vector<Timed>> stacks_;  // by thread: its imports (and asks) open
  Timed root_;
  int64_t level_ = 0, accumulated_ = 0;
  const Model* model_ = nullptr;
  // The simulated clock, with the ticks the tally counted.
  uint64_t now() {
    clock_.now += tally_.ticks;
    tally_.ticks = 0;
    return clock_.now;
  }
  SimClock clock_;
  TraceTally tally_;
  std::vector<Open> stack_;
  std::string variant_;
  uint64_t lines_ = 0, omitted_ = 0;
};

}  // namespace

std::unique_ptr<TraceWriter> make_importtime_writer(std::ostream& out, const TraceOptions& o) {
  return std::make_unique<ImportTimeWriter>(out, o.max_lines.value_or(kImportTimeLines));
}

}  // namespace impsim
