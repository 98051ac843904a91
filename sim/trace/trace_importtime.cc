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
// A variant's profile stops at --max-lines lines (200,000 unless set; 0:
// no limit): a scenario can ask a thousand finders a million times, and
// each call is a line. Past it lines are counted, and standard error says
// how many were left out; the profile itself stays lines tuna reads.
#include <fmt/format.h>

#include "impsim/base/escape.h"
#include "impsim/base/text.h"
#include "impsim/trace/trace_formats.h"

namespace impsim {
namespace {

constexpr uint64_t kImportTimeLines = 200'000;

class ImportTimeWriter : public TraceWriter {
 public:
  ImportTimeWriter(std::ostream& out, uint64_t max) : out_(out), max_(max) {}

  void begin(const Scenario&, const Model&, const std::vector<Variant>&) override {
    out_ << "import time: self [us] | cumulative | imported package\n";
  }
  void begin_variant(const Model& model, Variant v, size_t) override {
    model_ = &model;
    clock_ = {};
    stack_.clear();
    variant_ = variant_name(v);
    lines_ = omitted_ = 0;
    stack_.push_back({"[" + variant_ + "]", 0, 0});
  }
  void end_variant(const Engine&) override {
    while (!stack_.empty()) pop();  // the root, and any import a limit left open
    // Not in the profile: a line that is not `import time:` would not parse.
    if (omitted_ != 0)
      fmt::print(stderr, "impsim: trace: the importtime profile of {} is cut at --max-lines {}: {} more {} left out\n",
                 terminal_text(variant_), max_, grouped(omitted_), omitted_ == 1 ? "line" : "lines");
  }

  void import_begin(const Engine&, NameId name) override {
    stack_.push_back({model_->names.text(name), clock_.now, 0});
  }
  void import_end(const Engine&, NameId, bool) override { pop(); }
  void ask_begin(const Engine& e, NameId name, FinderKind, int64_t index, int64_t) override {
    if (e.hooks_used())
      stack_.push_back({fmt::format("{}.{}('{}')", trace_detail::finder_id_at(e, index),
                                    trace_detail::finder_method_at(e, index), model_->names.text(name)),
                        clock_.now, 0});
    clock_.ask();
  }
  void ask_end(const Engine& e, NameId, FinderKind, AskAnswer) override {
    if (e.hooks_used()) pop();
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
    uint64_t cum = clock_.now - o.start;
    size_t level = stack_.size();
    if (!stack_.empty()) stack_.back().children += cum;
    if (max_ != 0 && lines_ >= max_) {
      ++omitted_;
      return;
    }
    ++lines_;
    // Module names are identifiers, but Unicode ones: a Hangul filler prints as nothing.
    out_ << fmt::format("import time: {:>9} | {:>10} | {}{}\n", cum - o.children, cum, std::string(level * 2, ' '),
                        terminal_text(o.name));
  }

  std::ostream& out_;
  uint64_t max_;
  const Model* model_ = nullptr;
  SimClock clock_;
  std::vector<Open> stack_;
  std::string variant_;
  uint64_t lines_ = 0, omitted_ = 0;
};

}  // namespace

std::unique_ptr<TraceWriter> make_importtime_writer(std::ostream& out, const TraceOptions& o) {
  return std::make_unique<ImportTimeWriter>(out, o.max_lines.value_or(kImportTimeLines));
}

}  // namespace impsim
