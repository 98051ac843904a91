// `impsim trace --format dot`: the lookup recursion tree for Graphviz. One
// node per lookup (P resolving a name itself), labelled with the name, its
// depth and whether it found a spec; the fix's suppressed asks are dashed
// grey boxes. Depth-1 lookups hang below the scenario step that caused them,
// steps below one box per variant (a cluster each). A module body (or a
// `call`) with lookups inside is a node of its own, and the statements of
// that body that caused them hang below it, so the import nesting shows;
// bodies and statements with no lookup inside are not drawn.
//
// Subtrees are interned while the run goes (a lookup is identified by its
// name, depth, answer and children), so memory follows the number of
// distinct subtrees, not of lookups.
//
// A hook scenario has no lookups: its tree is the search tree, one node per
// find_spec call of a finder object in sys.meta_path (a box named after the
// object, the name asked, the loop's index, the _find_spec nesting and the
// answer; hook objects drawn bold), with the calls a finder made while it
// ran (through a module body it imported, or a re-entry) below it. A tree of at most --max-nodes nodes is
// drawn in full. A larger one is drawn compressed: a run of identical
// siblings becomes one node marked "x N", a subtree identical to one drawn
// already becomes one dashed node, and past --max-nodes the remaining
// siblings become one dashed node; the graph's label says how much of each.
//
// A threaded run draws each Python thread's steps in a cluster of its own
// ("thread main", then the others as they start), each thread's events
// nested in its own frames. A lock wait is a red box under the frame it
// happened in (who it waited for, held by whom), so a body or statement
// that waited is drawn; a wait that never ended (a hang) is a bold red box,
// and the variant's box says how each thread ended and the hang's waits.
// A hook's own lock, taken and given back, is a line of the object's ask; a
// run without threads that hangs on one draws its wait as a threaded hang.
//
// A variant's tree is recorded from its first --max-lines events (1,000,000
// unless set; 0: no limit), each begin, end and decision the writer hears:
// past them the run goes on counted only (the engine's own TraceTally where
// it can), so a trace stopped by --max-events costs about what the run
// does. A frame still open at the cut is drawn with what it did before it,
// marked "(cut: ...)"; the graph's label says how many lookups and
// suppressed asks (finder calls, in a hook scenario) came after the cut.
#include <fmt/format.h>

#include <map>
#include <optional>
#include <unordered_map>

#include "impsim/base/escape.h"
#include "impsim/base/plural.h"
#include "impsim/base/text.h"
#include "impsim/run/outcome_words.h"
#include "impsim/trace/trace_formats.h"

namespace impsim {
namespace {

using namespace trace_detail;

using NodeId = int32_t;

enum class NodeKind : uint8_t { Lookup, Suppressed, Body, Statement, Ask, Wait };

struct Node {
  NodeKind kind = NodeKind::Lookup;
  std::string label;  // Body, Statement, Ask: what the node shows (escaped for DOT)
  bool hook = false;  // Ask: of a hook object
  NameId name = kNoName;
  uint64_t depth = 0;
  bool found = false;
  bool suppressed = false;  // a suppressed ask (a leaf)
  bool cut = false;         // still open at the --max-lines cut: what it did after it is not drawn
  bool decided = false;     // Ask of a hook object: its decision is in the label (not part of the key)
  int64_t copy = 0;         // suppressed: which copy of P was asked (1-based)
  std::vector<std::pair<NodeId, uint64_t>> children;  // runs: (subtree, times in a row)
  uint64_t lookups = 0;  // lookups (hook scenarios: asks) in the full subtree, this one included
  uint64_t size = 0;     // nodes the full subtree draws
};

struct Group {
  std::string step;     // the step's label, escaped for DOT
  int32_t thread = -1;  // a threaded run: whose step
  std::vector<std::pair<NodeId, uint64_t>> children;
};

struct VariantTree {
  std::string title;
  std::string summary;  // hook scenarios: the counters under the title
  std::vector<Group> groups;
  uint64_t lookups = 0, max_depth = 0, suppressed = 0;
  std::vector<std::string> threads;  // a threaded run: each thread's name, by id
  std::string ended;                 // ... how each ended, and a hang's waits (escaped for DOT)
  std::string cut;                   // what the --max-lines cut left out (escaped for DOT), or empty
};

void add_run(std::vector<std::pair<NodeId, uint64_t>>& runs, NodeId id) {
  if (!runs.empty() && runs.back().first == id)
    ++runs.back().second;
  else
    runs.emplace_back(id, 1);
}

class DotWriter : public TraceWriter {
 public:
  DotWriter(std::ostream& out, const TraceOptions& o)
      : out_(out), max_nodes_(o.max_nodes), max_events_(o.max_lines.value_or(kDotEvents)) {}

  void begin(const Scenario& sc, const Model& model, const std::vector<Variant>&) override {
    threaded_ = !model.threads.empty();
    name_ = sc.name.empty() ? sc.file : sc.name;
    params_ = params_text(model.params);
    hooks_ = model.hooks.used;
    unit_ = hooks_ ? "finder calls" : "lookups";
  }

  void begin_variant(const Model& model, Variant v, size_t) override {
    model_ = &model;
    trees_.emplace_back();
    trees_.back().title = variant_name(v);
    frames_.clear();
    step_nested_.clear();
    open_lookups_ = 0;
    steps_.clear();
    asks_.clear();
    last_group_serial_ = -1;
    last_group_ = -1;
    thread_ = 0;
    waiting_.reset();
    others_.clear();
    heard_ = 0;
    cut_ = false;
    cut_depth_ = 0;
    late_asks_ = 0;
    tally_ = {};
    tally = nullptr;
  }

  void end_variant(const Engine& e) override {
    VariantTree& t = trees_.back();
    if (threaded_) {
      // Each thread's frames closed in turn; a wait that never ended is the hang.
      park();
      for (auto& [thread, state] : others_) {
        thread_ = thread;
        unpark(state);
        if (waiting_) attach(wait_node(*waiting_, true));
        while (!frames_.empty()) finish_frame(false, cut_);
      }
      t.threads = e.thread_names();
      std::string ended;
      for (const std::string& r : thread_end_texts(e.thread_ends())) ended += (ended.empty() ? "" : "; ") + r;
      t.ended = dot_text("threads: " + ended);
      for (const HangWait& w : e.hang_waits()) t.ended += "\\n" + dot_text("hang: " + hang_wait_text(w));
    } else if (waiting_) {
      // A run without threads hung on a hook's Lock its main thread holds.
      attach(wait_node(*waiting_, true));
      t.ended = dot_text("threads: main: waiting");
      for (const HangWait& w : e.hang_waits()) t.ended += "\\n" + dot_text("hang: " + hang_wait_text(w));
    }
    // A limit may stop the run with lookups open: close them as not found.
    while (!frames_.empty()) finish_frame(false, cut_);
    step_nested_.clear();
    // A trace steps every event (no --engine fast), so its counts stay in 64 bits.
    t.lookups = e.counters().lookups.u64();
    t.max_depth = e.counters().max_depth.u64();
    t.suppressed = e.counters().suppressed.u64();
    if (cut_) {
      // What came after the cut, from the engine's counters (a trace steps
      // every event) or, in a hook scenario, the asks heard since.
      const uint64_t calls = late_asks_ + tally_.opened[TraceTally::Ask];
      const uint64_t lookups = t.lookups - lookups_at_cut_, suppressed = t.suppressed - suppressed_at_cut_;
      t.cut = dot_text(
          hooks_
              ? fmt::format("cut at --max-lines {}: the tree is drawn from the run's first {} events; {} more "
                            "finder {} came after them",
                            max_events_, grouped(max_events_), grouped(calls), plural(calls, "call", "calls"))
              : fmt::format("cut at --max-lines {}: the tree is drawn from the run's first {} events; {} more "
                            "{} and {} more suppressed {} came after them",
                            max_events_, grouped(max_events_), grouped(lookups), plural(lookups, "lookup", "lookups"),
                            grouped(suppressed), plural(suppressed, "ask", "asks")));
    }
    if (hooks_) {
      const HookCounters& h = e.hook_counters();
      t.summary = fmt::format("{} {}, {} finder {}, deepest _find_spec nesting {}", grouped(h.searches),
                              plural(h.searches, "search", "searches"), grouped(h.finder_calls),
                              plural(h.finder_calls, "call", "calls"), h.max_depth);
    }
  }

  // A step outside any module body or lookup groups the tree's top level;
  // one inside them is a statement node.
  void step_begin(const Engine& e, const CStep& s) override {
    follow(e);
    if (late(e)) {
      ++cut_depth_;
      return;
    }
    const bool nested = !frames_.empty();
    step_nested_.push_back(nested);
    if (!nested) {
      steps_.push_back({++serial_, &s});
      return;
    }
    Node n;
    n.kind = NodeKind::Statement;
    n.label = dot_text(*s.pointer) + "\\n" + dot_text(step_text(*model_, s));
    frames_.push_back(std::move(n));
  }
  void step_end(const Engine& e, const CStep&, const char*) override {
    follow(e);
    const bool cut = late(e);
    if (cut && cut_depth_ != 0) {
      --cut_depth_;
      return;
    }
    const bool nested = step_nested_.back();
    step_nested_.pop_back();
    if (nested)
      finish_frame(false, cut);
    else
      steps_.pop_back();
  }
  void body_begin(const Engine& e, NameId m, BodyKind kind) override {
    follow(e);
    if (late(e)) {
      ++cut_depth_;
      return;
    }
    Node n;
    n.kind = NodeKind::Body;
    n.label = dot_text((kind == BodyKind::Call           ? "a function of "
                        : kind == BodyKind::CreateModule ? "create_module for "
                                                         : "body of ") +
                       model_->names.text(m));
    frames_.push_back(std::move(n));
  }
  void body_end(const Engine& e, NameId, BodyKind) override {
    follow(e);
    const bool cut = late(e);
    if (cut && cut_depth_ != 0) {
      --cut_depth_;
      return;
    }
    finish_frame(false, cut);
  }

  void ask_begin(const Engine& e, NameId name, FinderClass, FinderId finder, int64_t index,
                 const MetaPath& walked) override {
    follow(e);
    if (late(e)) {
      ++late_asks_;
      ++cut_depth_;
      return;
    }
    asks_.push_back(index);
    if (!hooks_) return;
    Node n;
    n.kind = NodeKind::Ask;
    n.hook = e.finder_objects()[static_cast<size_t>(finder)].cls == FinderClass::Hook;
    const std::string note = ask_note(e, walked, index, finder);
    n.label =
        dot_text(fmt::format("{}.{}('{}')", finder_id(e, finder), finder_method(e, finder), model_->names.text(name))) +
        fmt::format("\\ni={} of {}, _find_spec nesting {}", index, walked.size(), open_asks_ + 1) +
        (note.empty() ? "" : "\\n" + dot_text(note));
    frames_.push_back(std::move(n));
    ++open_asks_;
  }
  // A hook's decision under its ask's label; one made in a direct call
  // (its ask has decided already) and what an action asks, lines below it.
  void hook_decide(const Engine& e, FinderId f, NameId, HookReason r) override {
    follow(e);
    if (late(e)) return;  // past the cut a box is not written to
    if (!hooks_ || frames_.empty() || frames_.back().kind != NodeKind::Ask) return;
    Node& n = frames_.back();
    if (!n.decided) {
      n.decided = true;
      n.label += "\\n" + dot_text(fmt::format("[{}]", hook_reason_text(r)));
      return;
    }
    n.label += "\\n" + dot_text(fmt::format("{}: {}", finder_id(e, f), hook_reason_text(r)));
  }
  void hook_call(const Engine& e, FinderId caller, NameId name, HookCall c, FinderId called) override {
    follow(e);
    if (late(e)) return;
    if (!hooks_ || frames_.empty() || frames_.back().kind != NodeKind::Ask) return;
    frames_.back().label += "\\n" + dot_text(finder_id(e, caller) + " " +
                                             hook_call_text(c, model_->names.text(name), finder_id(e, called)));
  }
  // A hook's own lock, taken and given back around its actions: lines of the ask.
  void hook_lock(const Engine& e, FinderId f, NameId name, bool acquire, HookLockSite site) override {
    follow(e);
    if (late(e)) return;
    if (!hooks_ || frames_.empty() || frames_.back().kind != NodeKind::Ask) return;
    frames_.back().label +=
        "\\n" +
        dot_text(fmt::format("{} {} {} {}", finder_id(e, f), acquire ? "acquires" : "releases", e.hook_lock_name(f),
                             hook_lock_where(site, name == kNoName ? "" : model_->names.text(name))));
  }
  void ask_end(const Engine& e, NameId name, FinderClass, AskAnswer a) override {
    follow(e);
    const bool cut = late(e);
    if (cut && cut_depth_ != 0) {
      --cut_depth_;
      return;
    }
    int64_t index = asks_.back();
    asks_.pop_back();
    if (hooks_) {
      frames_.back().label += a == AskAnswer::Spec     ? "\\n-> spec"
                              : a == AskAnswer::Raised ? "\\n-> raised"
                                                       : "\\n-> None";
      finish_frame(a == AskAnswer::Spec, cut);
      return;
    }
    if (a != AskAnswer::Suppressed || cut) return;  // an answer after the cut: counted, not drawn
    Node n;
    n.kind = NodeKind::Suppressed;
    n.name = name;
    n.suppressed = true;
    n.copy = index + 1;
    n.depth = open_lookups_;
    n.size = 1;
    attach(intern(std::move(n)));
  }

  void lookup_begin(const Engine& e, NameId name, uint64_t depth, uint8_t) override {
    follow(e);
    if (late(e)) {
      ++cut_depth_;
      return;
    }
    Node n;
    n.name = name;
    n.depth = depth;
    frames_.push_back(std::move(n));
    ++open_lookups_;
  }
  void lookup_end(const Engine& e, NameId, uint64_t, bool found) override {
    follow(e);
    const bool cut = late(e);
    if (cut && cut_depth_ != 0) {
      --cut_depth_;
      return;
    }
    finish_frame(found, cut);
  }

  // A wait is drawn once it ends (or, never ending, at the run's end).
  void wait_begin(const Engine& e, const ThreadWait& w) override {
    follow(e);
    if (late(e)) {
      ++cut_depth_;
      return;
    }
    waiting_ = wait_text(e, w);
  }
  void wait_end(const Engine& e, const ThreadWait&) override {
    follow(e);
    const bool cut = late(e);
    if (cut && cut_depth_ != 0) {
      --cut_depth_;
      return;
    }
    if (!cut) attach(wait_node(*waiting_, false));
    waiting_.reset();
  }
  void deadlock(const Engine& e, const std::vector<ThreadWait>& cycle, bool swallowed) override {
    follow(e);
    if (late(e)) return;
    attach(wait_node(deadlock_text(e, cycle, swallowed), false));
  }

  void end() override {
    out_ << "digraph lookups {\n";
    out_ << "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, labelloc=t, nodesep=0.15, ranksep=0.35];\n";
    out_ << "  node [fontname=\"Helvetica\", fontsize=10, shape=ellipse, style=filled, fillcolor=\"#ffffff\"];\n";
    out_ << "  edge [color=\"#555555\", arrowsize=0.6];\n";
    std::string notes;
    for (size_t v = 0; v < trees_.size(); ++v) notes += draw_variant(v);
    if (hooks_) {
      out_ << fmt::format("  label=\"{}{}\";\n",
                          dot_text(fmt::format("search tree of {} ({}): one box per find_spec call of a finder object "
                                               "in sys.meta_path (bold: a hook object; green: it returned a spec), "
                                               "with the calls made while it ran below it; folders are module "
                                               "bodies, with the statements inside them that led to calls",
                                               name_, params_)),
                          notes);
      out_ << "}\n";
      return;
    }
    out_ << fmt::format("  label=\"{}{}\";\n",
                        dot_text(fmt::format("lookup recursion tree of {} ({}): one node per lookup, labelled "
                                             "with its name and depth; dashed grey boxes are suppressed asks{}",
                                             name_, params_,
                                             has_bodies_ ? "; folders are module bodies, with the statements "
                                                           "inside them that led to lookups"
                                                         : "")),
                        notes);
    out_ << "}\n";
  }

 private:
  // A threaded run: each thread's open frames and steps, set aside while
  // another thread runs.
  struct ThreadState {
    std::vector<Node> frames;
    std::vector<std::pair<int64_t, const CStep*>> steps;
    std::vector<int64_t> asks;
    std::vector<bool> step_nested;
    uint64_t open_lookups = 0, open_asks = 0;
    int64_t last_group_serial = -1, last_group = -1;
    std::optional<std::string> waiting;
    uint64_t cut_depth = 0;
  };
  void follow(const Engine& e) {
    if (!e.threaded_run() || e.running_thread() == thread_) return;
    park();
    thread_ = e.running_thread();
    unpark(others_[thread_]);
  }
  void park() {
    others_[thread_] =
        ThreadState{std::move(frames_), std::move(steps_),  std::move(asks_), std::move(step_nested_), open_lookups_,
                    open_asks_,         last_group_serial_, last_group_,      std::move(waiting_),     cut_depth_};
    frames_.clear();
    steps_.clear();
    asks_.clear();
    step_nested_.clear();
    waiting_.reset();
  }
  void unpark(ThreadState& t) {
    frames_ = std::move(t.frames);
    steps_ = std::move(t.steps);
    asks_ = std::move(t.asks);
    step_nested_ = std::move(t.step_nested);
    open_lookups_ = t.open_lookups;
    open_asks_ = t.open_asks;
    last_group_serial_ = t.last_group_serial;
    last_group_ = t.last_group;
    waiting_ = std::move(t.waiting);
    cut_depth_ = t.cut_depth;
  }
  // A lock wait's leaf; `hang`: it never ended.
  NodeId wait_node(const std::string& what, bool hang) {
    Node n;
    n.kind = NodeKind::Wait;
    n.found = hang;
    n.label = dot_text(hang ? "hang: " + what + ", forever" : what);
    n.size = 1;
    return intern(std::move(n));
  }

  NodeId intern(Node n) {
    std::string key = n.kind == NodeKind::Suppressed ? fmt::format("S{}/{}/{}", n.name, n.depth, n.copy)
                      : n.kind == NodeKind::Lookup   ? fmt::format("L{}/{}/{}", n.name, n.depth, n.found ? 1 : 0)
                      : n.kind == NodeKind::Ask      ? fmt::format("A{}/{}", n.hook ? 1 : 0, n.label)
                      : n.kind == NodeKind::Wait     ? fmt::format("W{}/{}", n.found ? 1 : 0, n.label)
                                                 : fmt::format("{}{}", n.kind == NodeKind::Body ? 'B' : 'T', n.label);
    for (auto& [id, count] : n.children) key += fmt::format(":{}x{}", id, count);
    if (n.cut) key += ":cut";
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    NodeId id = static_cast<NodeId>(nodes_.size());
    nodes_.push_back(std::move(n));
    index_.emplace(std::move(key), id);
    return id;
  }

  void attach(NodeId id) {
    if (!frames_.empty()) {
      add_run(frames_.back().children, id);
      return;
    }
    VariantTree& t = trees_.back();
    int64_t serial = steps_.empty() ? 0 : steps_.back().first;
    if (last_group_ < 0 || serial != last_group_serial_) {
      t.groups.push_back({steps_.empty() ? std::string("(outside any step)")
                                         : dot_text(*steps_.back().second->pointer) + "\\n" +
                                               dot_text(step_text(*model_, *steps_.back().second)),
                          threaded_ ? thread_ : -1,
                          {}});
      last_group_serial_ = serial;
      last_group_ = static_cast<int64_t>(t.groups.size()) - 1;
    }
    add_run(t.groups[static_cast<size_t>(last_group_)].children, id);
  }

  // Closes the innermost frame. A body or statement with nothing below it
  // is dropped: only what leads to a lookup is drawn. `cut`: it closes
  // after the --max-lines cut (or is left open at the end past it).
  void finish_frame(bool found, bool cut = false) {
    Node n = std::move(frames_.back());
    frames_.pop_back();
    if (cut) {
      n.cut = true;
      if (!n.label.empty()) n.label += "\\n" + dot_text(kCutMark);
    }
    if (n.kind == NodeKind::Lookup)
      --open_lookups_;
    else if (n.kind == NodeKind::Ask)
      --open_asks_;
    else if (n.children.empty())
      return;
    else
      has_bodies_ = true;
    n.found = found;
    n.lookups = n.kind == NodeKind::Lookup || n.kind == NodeKind::Ask ? 1 : 0;
    n.size = 1;
    for (auto& [id, count] : n.children) {
      n.lookups += nodes_[id].lookups * count;
      n.size += nodes_[id].size * count;
    }
    attach(intern(std::move(n)));
  }

  // --- drawing ------------------------------------------------------------

  std::string new_id() { return fmt::format("n{}", ++drawn_total_); }

  std::string node_label(const Node& n) const {
    if (n.kind == NodeKind::Body || n.kind == NodeKind::Statement || n.kind == NodeKind::Ask ||
        n.kind == NodeKind::Wait)
      return n.label;
    const std::string& name = model_->names.text(n.name);
    if (n.suppressed) return fmt::format("{}\\nsuppressed ask (P copy {})", dot_text(name), n.copy);
    return fmt::format("{}\\ndepth {}\\n{}{}", dot_text(name), n.depth, n.found ? "found" : "not found",
                       n.cut ? "\\n" + dot_text(kCutMark) : "");
  }

  std::string node_attrs(const Node& n) const {
    // found: a wait that never ended (the hang)
    if (n.kind == NodeKind::Wait)
      return n.found ? "shape=box, style=\"filled,bold\", color=\"#b00000\", fillcolor=\"#f6a0a0\", penwidth=2"
                     : "shape=box, fillcolor=\"#f6dada\", color=\"#b04040\"";
    if (n.kind == NodeKind::Body) return "shape=folder, fillcolor=\"#fff3cc\"";
    if (n.kind == NodeKind::Statement) return "shape=box, fillcolor=\"#e6e6fa\"";
    if (n.kind == NodeKind::Ask)
      return fmt::format("shape=box, style=\"filled,rounded\", fillcolor=\"{}\"{}", n.found ? "#d8f0d8" : "#ffffff",
                         n.hook ? ", penwidth=2" : "");
    if (n.suppressed) return "shape=box, style=\"dashed,rounded\", color=\"#888888\", fontcolor=\"#666666\"";
    return n.found ? "fillcolor=\"#d8f0d8\"" : "fillcolor=\"#f6dada\"";
  }

  void edge(const std::string& from, const std::string& to) { body_ += fmt::format("    {} -> {};\n", from, to); }

  void node(const std::string& id, const std::string& label, const std::string& attrs) {
    body_ += fmt::format("    {} [label=\"{}\", {}];\n", id, label, attrs);
    ++drawn_;
  }

  // Draws `runs` below `parent`.
  void draw_children(const std::string& parent, const std::vector<std::pair<NodeId, uint64_t>>& runs) {
    for (size_t i = 0; i < runs.size(); ++i) {
      if (compress_ && drawn_ >= max_nodes_) {
        uint64_t subtrees = 0, lookups = 0;
        for (size_t j = i; j < runs.size(); ++j) {
          subtrees += runs[j].second;
          lookups += nodes_[runs[j].first].lookups * runs[j].second;
        }
        std::string id = new_id();
        node(id,
             fmt::format("{} more subtree{} not drawn\\n({} {})", grouped(subtrees), subtrees == 1 ? "" : "s",
                         grouped(lookups), unit_),
             "shape=box, style=dashed, fillcolor=\"#ffffff\"");
        edge(parent, id);
        cut_limit_ += subtrees;
        return;
      }
      auto [child, count] = runs[i];
      if (compress_) {
        draw(parent, child, count);
      } else {
        for (uint64_t c = 0; c < count; ++c) draw(parent, child, 1);
      }
    }
  }

  void draw(const std::string& parent, NodeId id, uint64_t times) {
    const Node& n = nodes_[id];
    std::string me = new_id();
    std::string label = node_label(n);
    if (times > 1) {
      label += fmt::format("\\nx {} identical siblings", grouped(times));
      ++merged_runs_;
    }
    if (compress_ && !n.children.empty() && drawn_subtrees_.count(id)) {
      node(me, fmt::format("{}\\nsame subtree as drawn above\\n({} {})", label, grouped(n.lookups), unit_),
           node_attrs(n) + ", style=\"filled,dashed\"");
      edge(parent, me);
      ++cut_identical_;
      return;
    }
    node(me, label, node_attrs(n) + (times > 1 ? ", peripheries=2" : ""));
    edge(parent, me);
    drawn_subtrees_.insert({id, true});
    draw_children(me, n.children);
  }

  // Draws the groups `which` (indices into t.groups) below the variant's box.
  void draw_groups(const VariantTree& t, const std::string& root, const std::vector<size_t>& which) {
    for (size_t k = 0; k < which.size(); ++k) {
      if (compress_ && drawn_ >= max_nodes_) {
        std::string id = new_id();
        node(id, fmt::format("{} more {} not drawn", which.size() - k, plural(which.size() - k, "step", "steps")),
             "shape=box, style=dashed");
        root_edge(root, id);
        cut_limit_ += which.size() - k;
        break;
      }
      std::string sid = new_id();
      node(sid, t.groups[which[k]].step, "shape=box, fillcolor=\"#e6e6fa\"");
      root_edge(root, sid);
      draw_children(sid, t.groups[which[k]].children);
    }
  }

  // A threaded run: each thread's steps in a cluster of its own, named
  // after the thread; the edges from the variant's box come after the
  // clusters (an edge written inside one would pull the box into it).
  void draw_threads(const VariantTree& t, const std::string& root) {
    std::string outer = std::move(body_);
    root_edges_.clear();
    for (size_t k = 0; k < t.threads.size(); ++k) {
      std::vector<size_t> which;
      for (size_t g = 0; g < t.groups.size(); ++g)
        if (t.groups[g].thread == static_cast<int32_t>(k)) which.push_back(g);
      body_.clear();
      draw_groups(t, root, which);
      outer += fmt::format(
          "    subgraph \"cluster_{}_thread{}\" {{\n      label=\"thread {}\";\n      style=dashed;\n"
          "      color=\"#7a7ab8\";\n{}    }}\n",
          t.title, k, dot_text(t.threads[k]), body_);
    }
    body_ = std::move(outer) + root_edges_;
  }

  void root_edge(const std::string& root, const std::string& to) {
    if (threaded_)
      root_edges_ += fmt::format("    {} -> {};\n", root, to);
    else
      edge(root, to);
  }

  std::string draw_variant(size_t v) {
    const VariantTree& t = trees_[v];
    uint64_t full = 1;
    for (auto& g : t.groups) {
      ++full;
      for (auto& [id, count] : g.children) full += nodes_[id].size * count;
    }
    compress_ = full > max_nodes_;
    drawn_ = 0;
    merged_runs_ = cut_identical_ = cut_limit_ = 0;
    drawn_subtrees_.clear();
    body_.clear();

    std::string root = new_id();
    node(root,
         dot_text(fmt::format("{} ({})", t.title, params_)) +
             (hooks_ ? "\\n" + dot_text(t.summary)
                     : fmt::format("\\n{} {}, deepest {}, {} suppressed {}", grouped(t.lookups),
                                   plural(t.lookups, "lookup", "lookups"), t.max_depth, grouped(t.suppressed),
                                   plural(t.suppressed, "ask", "asks"))) +
             (t.ended.empty() ? "" : "\\n" + t.ended),
         "shape=box, style=\"filled,bold\", fillcolor=\"#eeeeee\"");
    if (t.threads.empty()) {
      std::vector<size_t> all(t.groups.size());
      for (size_t g = 0; g < all.size(); ++g) all[g] = g;
      draw_groups(t, root, all);
    } else {
      draw_threads(t, root);
    }
    out_ << fmt::format("  subgraph \"cluster_{}\" {{\n    label=\"{}\";\n    color=\"#bbbbbb\";\n", t.title, t.title);
    out_ << body_;
    out_ << "  }\n";
    const std::string cut = t.cut.empty() ? "" : fmt::format("\\n{}: {}", t.title, t.cut);
    if (!compress_) return cut;
    std::string note = fmt::format("\\n{}: {} {} in full, more than --max-nodes {}, so drawn compressed:", t.title,
                                   grouped(full), plural(full, "node", "nodes"), max_nodes_);
    note += fmt::format(" {} {} of identical siblings drawn once each and marked 'x N',", grouped(merged_runs_),
                        plural(merged_runs_, "run", "runs"));
    note += fmt::format(" {} repeated {} collapsed,", grouped(cut_identical_),
                        plural(cut_identical_, "subtree", "subtrees"));
    note +=
        fmt::format(" {} {} past the limit left out", grouped(cut_limit_), plural(cut_limit_, "subtree", "subtrees"));
    return note + cut;
  }

  // Counts the event heard; true once it comes past the --max-lines cut,
  // which follows the max_events_-th (its counters then are kept for the
  // label), and from which on the engine counts what it can itself.
  bool late(const Engine& e) {
    if (cut_) return true;
    if (max_events_ != 0 && ++heard_ >= max_events_) {
      cut_ = true;
      lookups_at_cut_ = e.counters().lookups.u64();
      suppressed_at_cut_ = e.counters().suppressed.u64();
      tally = &tally_;
    }
    return false;
  }

  static constexpr uint64_t kDotEvents = 1'000'000;
  static constexpr const char* kCutMark = "(cut: what came after is not drawn)";

  std::ostream& out_;
  uint64_t max_nodes_;
  uint64_t max_events_;
  uint64_t heard_ = 0;      // events heard (and drawn from) so far
  bool cut_ = false;        // past the cut: events are counted, not drawn
  uint64_t cut_depth_ = 0;  // frames opened past the cut, still open (each thread its own)
  uint64_t late_asks_ = 0;  // asks begun past the cut that the writer heard
  uint64_t lookups_at_cut_ = 0, suppressed_at_cut_ = 0;
  TraceTally tally_;  // what the engine counted itself past the cut
  const Model* model_ = nullptr;
  std::string name_, params_;
  std::vector<Node> nodes_;
  std::unordered_map<std::string, NodeId> index_;
  std::vector<VariantTree> trees_;
  std::vector<Node> frames_;
  std::vector<std::pair<int64_t, const CStep*>> steps_;
  std::vector<int64_t> asks_;
  std::vector<bool> step_nested_;  // per open step: a statement node (inside a body or lookup)?
  uint64_t open_lookups_ = 0;
  uint64_t open_asks_ = 0;  // hook scenarios: the _find_spec nesting
  bool has_bodies_ = false;
  bool hooks_ = false;
  const char* unit_ = "lookups";  // what a collapsed subtree counts
  int64_t serial_ = 0, last_group_serial_ = -1;
  int64_t last_group_ = -1;  // the index of the group the thread's top-level step draws into
  bool threaded_ = false;
  int32_t thread_ = 0;                     // whose events are being read
  std::optional<std::string> waiting_;     // what the thread waits for now
  std::map<int32_t, ThreadState> others_;  // the other threads' state, set aside

  bool compress_ = false;
  uint64_t drawn_ = 0, drawn_total_ = 0, merged_runs_ = 0, cut_identical_ = 0, cut_limit_ = 0;
  std::map<NodeId, bool> drawn_subtrees_;
  std::string body_;
  std::string root_edges_;  // a threaded run: the edges from the variant's box
};

}  // namespace

std::unique_ptr<TraceWriter> make_dot_writer(std::ostream& out, const TraceOptions& o) {
  return std::make_unique<DotWriter>(out, o);
}

}  // namespace impsim
