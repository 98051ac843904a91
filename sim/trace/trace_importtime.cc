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
#include <fmt/format.h>

#include "impsim/base/escape.h"
#include "impsim/trace/trace_formats.h"

namespace impsim {
namespace {

class ImportTimeWriter : public TraceWriter {
 public:
  explicit ImportTimeWriter(std::ostream& out) : out_(out) {}

  void begin(const Scenario&, const Model&, const std::vector<Variant>&) override {
    out_ << "import time: self [us] | cumulative | imported package\n";
  }
  void begin_variant(const Model& model, Variant v, size_t) override {
    model_ = &model;
    clock_ = {};
    stack_.clear();
    stack_.push_back({"[" + std::string(variant_name(v)) + "]", 0, 0});
  }
  void end_variant(const Engine&) override {
    while (!stack_.empty()) pop();  // the root, and any import a limit left open
  }

  void import_begin(const Engine&, NameId name) override { stack_.push_back({model_->names.text(name), clock_.now, 0}); }
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
    // Module names are identifiers, but Unicode ones: a Hangul filler prints as nothing.
    out_ << fmt::format("import time: {:>9} | {:>10} | {}{}\n", cum - o.children, cum, std::string(level * 2, ' '),
                        terminal_text(o.name));
    if (!stack_.empty()) stack_.back().children += cum;
  }

  std::ostream& out_;
  const Model* model_ = nullptr;
  SimClock clock_;
  std::vector<Open> stack_;
};

}  // namespace

std::unique_ptr<TraceWriter> make_importtime_writer(std::ostream& out, const TraceOptions&) {
  return std::make_unique<ImportTimeWriter>(out);
}

}  // namespace impsim
