#include "impsim/model/model.h"

#include <fmt/format.h>

#include <algorithm>

namespace impsim {

TreeId Model::find_child(TreeId parent, NameId name) const {
  auto key =
      (static_cast<uint64_t>(static_cast<uint32_t>(parent)) << 32) | static_cast<uint32_t>(names.last_atom(name));
  const TreeId* child = tree_child.find(key);
  return child ? *child : -1;
}

TreeId Model::find_tree(NameId name) const {
  NameId parent = names.parent(name);
  if (parent == kNoName) return tree_of_top[name];
  TreeId p = find_tree(parent);
  return p < 0 ? -1 : find_child(p, name);
}

std::string lazy_step_text(const CStep& step, const Model& m) {
  switch (step.kind) {
    case StepKind::LazyImport:
      return "lazy import " + m.names.text(step.target) + (step.bind_as ? " as " + m.names.text(step.bind) : "");
    case StepKind::Use:
      return m.names.text(step.target);
    case StepKind::SetLazyImports:
      return fmt::format("sys.set_lazy_imports('{}')", step.lazy_all ? "all" : "normal");
    case StepKind::SetLazyFilter: {
      if (!step.has_blocked) return "sys.set_lazy_imports_filter(None)";
      std::string names;
      for (NameId n : m.sets.members(step.block)) names += (names.empty() ? "" : ", ") + ("'" + m.names.text(n) + "'");
      return "sys.set_lazy_imports_filter(lambda importer, name, fromlist: name not in {" + names + "})";
    }
    case StepKind::LazyFrom: {
      std::string names;
      for (size_t i = 0; i + 1 < step.unload.size(); i += 2) {
        const std::string& full = m.names.text(step.unload[i]);
        const std::string name = full.substr(full.rfind('.') + 1);
        const std::string& bind = m.names.text(step.unload[i + 1]);
        names += (names.empty() ? "" : ", ") + name + (bind == name ? "" : " as " + bind);
      }
      return "lazy from " + m.names.text(step.target) + " import " + names;
    }
    case StepKind::Resolve:
      return "globals()['" + m.names.text(step.target) + "'].resolve()";
    case StepKind::SetLazyModules: {
      std::string names;
      for (NameId n : m.sets.members(step.block)) names += (names.empty() ? "" : ", ") + ("'" + m.names.text(n) + "'");
      return "__lazy_modules__ = [" + names + "]";
    }
    default:
      return {};
  }
}

std::string describe_step(const CStep& step, const Model& m) {
  auto scope = [&](size_t level) {
    if (!step.has_scope) return std::string("None");
    std::string out;
    for (NameId n : m.sets.members(step.scopes[level]))
      out += (out.empty() ? "" : ", ") + ("'" + m.names.text(n) + "'");
    return "{" + out + "}";
  };
  std::string what;
  switch (step.kind) {
    case StepKind::Import:
      what = "import " + m.names.text(step.target);
      break;
    case StepKind::FindSpec:
      what = "find_spec('" + m.names.text(step.target) + "')";
      break;
    case StepKind::ImportModule:
      what = "import_module('" + m.names.text(step.target) + "')";
      break;
    case StepKind::Enable: {
      what = "enable_torch_proxy(scope=" + scope(0);
      if (step.has_blocked) {
        std::string names;
        for (NameId n : m.sets.members(step.block))
          names += (names.empty() ? "" : ", ") + ("'" + m.names.text(n) + "'");
        what += ", blocked_modules={" + names + "}";
      }
      what += ")";
      break;
    }
    case StepKind::Disable:
      what = "disable_torch_proxy()";
      break;
    case StepKind::Guard:
      what = fmt::format("{}with use_torch_proxy_guard(enable={}, scope={})",
                         step.nest >= 0 ? fmt::format("{} x ", step.nest) : "", step.guard_enable ? "True" : "False",
                         step.scopes.empty() ? "None" : scope(0));
      break;
    case StepKind::Block: {
      std::string names;
      for (NameId n : m.sets.members(step.block)) names += (names.empty() ? "" : ", ") + ("'" + m.names.text(n) + "'");
      what = "extend_torch_proxy_blocked_modules([" + names + "])";
      break;
    }
    case StepKind::Call:
      what = "a call into " + m.names.text(step.target);
      break;
    case StepKind::Do:
      what = step.at > 0 ? fmt::format("for i in range(1, {}): i = {}", step.nest + 1, step.at)
                         : fmt::format("for _ in range({})", step.repeat);
      break;
    case StepKind::Start:
    case StepKind::Join:
      what = fmt::format("{}.{}()", m.threads[static_cast<size_t>(step.at)].name,
                         step.kind == StepKind::Start ? "start" : "join");
      break;
    case StepKind::LazyImport:
    case StepKind::Use:
    case StepKind::SetLazyImports:
    case StepKind::SetLazyFilter:
    case StepKind::LazyFrom:
    case StepKind::SetLazyModules:
    case StepKind::Resolve:
      what = lazy_step_text(step, m);
      break;
    default:
      what = describe_meta_path_step(step, m);
      break;  // the meta_path steps
  }
  return fmt::format("`{}` ({})", what, step.pointer ? *step.pointer : "?");
}

namespace {

class Compiler {
 public:
  Compiler(const Scenario& sc, Model& m, const ModelLimits& limits) : sc_(sc), m_(m), limits_(limits) {}

  // The reader checked that every start and join names a declared thread.
  int64_t thread_index(const std::string& name) const {
    for (size_t i = 0; i < sc_.threads.size(); ++i)
      if (sc_.threads[i].name == name) return static_cast<int64_t>(i);
    return -1;
  }

  int64_t resolve(const IntField& f, const char* what, int64_t max) {
    int64_t v = f.value;
    if (!f.param.empty()) {
      const int64_t p = m_.params.at(f.param);
      bool overflow = false;
      switch (f.op) {
        case '+':
          overflow = __builtin_add_overflow(p, f.operand, &v);
          break;
        case '-':
          overflow = __builtin_sub_overflow(p, f.operand, &v);
          break;
        case '*':
          overflow = __builtin_mul_overflow(p, f.operand, &v);
          break;
        default:
          v = p;
      }
      const std::string value =
          f.op ? fmt::format("{} ({} = {})", overflow ? "out of range" : std::to_string(v), f.param, p)
               : std::to_string(v);
      if (overflow || v < 0)
        throw InputError(sc_.file, {}, f.pointer,
                         fmt::format("{} reads {} = {}; expected a count >= 0", what, f.text(), value));
    }
    if (v > max)
      throw ModelLimitError{std::string(what), f.pointer,
                            fmt::format("{} is {}; the limit is {} (--max-{})", what, v, max, what)};
    return v;
  }

  SetId scope_set(const std::vector<std::string>& templ, int64_t level) {
    std::vector<NameId> ids;
    for (const std::string& t : templ) {
      std::string s = t;
      for (auto at = s.find("{i}"); at != std::string::npos; at = s.find("{i}", at))
        s.replace(at, 3, std::to_string(level));
      ids.push_back(m_.names.intern(s));
    }
    return m_.sets.intern(std::move(ids));
  }

  // Each step compiled where it stays: a CStep returned and moved into the
  // vector cost a 128-byte move and a destructor per step.
  std::vector<CStep> steps(const std::vector<Step>& in) {
    std::vector<CStep> out;
    steps_into(in, out);
    return out;
  }
  // Half a large tree's bodies are empty: they are left as they are. `out`
  // is replaced; a body checked and dropped reuses its buffer.
  void steps_into(const std::vector<Step>& in, std::vector<CStep>& out) {
    if (in.empty()) return;
    out.clear();
    out.reserve(in.size());
    for (const Step& s : in) {
      if (s.kind == StepKind::Do && reads_iteration(s.body))
        unroll(s, out);
      else
        step(s, out.emplace_back());
    }
  }

  // Whether steps name "{i}", the iteration of the do block they are in (a
  // do block inside has an {i} of its own; a nested guard's scope reads its
  // nest level, never the iteration).
  static bool reads_iteration(const std::vector<Step>& steps) {
    for (const Step& s : steps) {
      const StepDetail& d = s.detail();
      if (s.target.find("{i}") != std::string::npos || d.instance == StepDetail::kIteration) return true;
      for (const std::string& u : d.unload)
        if (u.find("{i}") != std::string::npos) return true;
      if (s.kind != StepKind::Do && reads_iteration(s.body)) return true;
    }
    return false;
  }

  int64_t iterations(const Step& s) {
    return s.detail().repeat ? resolve(*s.detail().repeat, "repeat", limits_.max_repeat) : 1;
  }

  // The steps `steps` compile to, a do block that reads "{i}" counted once
  // per iteration; past --max-repeat it stops counting, so no sum or
  // product overflows whatever --max-repeat is.
  int64_t past_limit() const { return limits_.max_repeat == INT64_MAX ? INT64_MAX : limits_.max_repeat + 1; }
  int64_t capped(int64_t a, int64_t b, char op) const {
    int64_t r = 0;
    const bool overflow = op == '+' ? __builtin_add_overflow(a, b, &r) : __builtin_mul_overflow(a, b, &r);
    return overflow ? past_limit() : std::min(past_limit(), r);
  }
  int64_t compiled_steps(const std::vector<Step>& steps) {
    int64_t n = 0;
    for (const Step& s : steps) n = capped(n, compiled_size(s), '+');
    return n;
  }
  int64_t compiled_size(const Step& s) {
    return s.kind == StepKind::Do && reads_iteration(s.body) ? capped(iterations(s), compiled_steps(s.body), '*')
                                                             : capped(1, compiled_steps(s.body), '+');
  }

  // A do block whose steps read "{i}" is compiled once per iteration, each
  // iteration a step of its own (kind Do, repeat 1, the block's label), so
  // the engine never substitutes text and a label still sums every
  // iteration. The copies are bounded by --max-repeat, counted in steps
  // before any is made (a block inside an unrolled one is counted with it).
  void unroll(const Step& s, std::vector<CStep>& out) {
    const int64_t n = iterations(s);
    if (iteration_ == 0) unrolled_ = capped(unrolled_, compiled_size(s), '+');
    if (unrolled_ > limits_.max_repeat)
      throw ModelLimitError{"repeat", s.pointer,
                            fmt::format("a do block whose steps read \"{{i}}\" is compiled once per iteration: its "
                                        "{} iterations, with the blocks compiled before it, come to more than {} "
                                        "steps (--max-repeat)",
                                        n, limits_.max_repeat)};
    const int64_t outer = iteration_;
    for (int64_t i = 1; i <= n; ++i) {
      iteration_ = i;
      CStep& c = out.emplace_back();
      c.kind = StepKind::Do;
      c.label = s.label;
      c.pointer = &s.pointer;
      c.at = i;
      c.nest = n;
      steps_into(s.body, c.body);
    }
    iteration_ = outer;
  }

  // A name template of a do block's step, as this iteration spells it.
  std::string this_iteration(std::string t) const {
    const std::string i = std::to_string(iteration_);
    for (size_t at = t.find("{i}"); at != std::string::npos; at = t.find("{i}", at + i.size())) t.replace(at, 3, i);
    return t;
  }

  // Bodies name the same module again and again (the modules of a package
  // import the package): the last name interned is kept with its id.
  NameId target(const std::string& name) {
    if (iteration_ != 0 && name.find("{i}") != std::string::npos) return m_.names.intern(this_iteration(name));
    if (!last_target_ || *last_target_ != name) {
      last_target_id_ = m_.names.intern(name);
      last_target_ = &name;
    }
    return last_target_id_;
  }

  void step(const Step& s, CStep& c) {
    const StepDetail& d = s.detail();
    c.kind = s.kind;
    c.optional = s.optional;
    c.guard_enable = d.guard_enable;
    c.label = s.label;
    c.pointer = &s.pointer;
    if (!s.target.empty()) c.target = target(s.target);
    if (d.repeat) c.repeat = resolve(*d.repeat, "repeat", limits_.max_repeat);
    if (d.nest) c.nest = resolve(*d.nest, "nest", limits_.max_nest);
    c.has_scope = d.scope.has_value();
    if (c.has_scope) {
      int64_t levels = c.nest < 0 ? 1 : c.nest;
      // levels <= max-nest (10,000) and the scope's size <= the file's:
      // the product cannot overflow.
      scope_names_ += levels * static_cast<int64_t>(d.scope->size());
      if (scope_names_ > limits_.max_scope_names)
        throw ModelLimitError{"scope-names", s.pointer,
                              fmt::format("the scopes of the guards and enables so far expand to {} names (nest "
                                          "levels x scope names); the limit is {} (--max-scope-names)",
                                          scope_names_, limits_.max_scope_names)};
      for (int64_t level = 1; level <= levels; ++level) c.scopes.push_back(scope_set(*d.scope, level));
    }
    c.has_blocked = d.has_blocked_modules;
    if (s.kind == StepKind::Block || s.kind == StepKind::SetLazyModules || d.has_blocked_modules) {
      std::vector<NameId> ids;
      for (auto& b : d.block) ids.push_back(m_.names.intern(b));
      c.block = m_.sets.intern(std::move(ids));
    }
    steps_into(s.body, c.body);
    if (!d.finder.empty()) c.finder = m_.hooks.find(d.finder);
    // An iteration is at most --max-repeat (10^6): it fits.
    c.instance = static_cast<int32_t>(d.instance == StepDetail::kIteration ? iteration_ : d.instance);
    c.at = d.at;
    if (s.kind == StepKind::Start || s.kind == StepKind::Join) c.at = thread_index(d.thread);
    c.all_copies = d.all_copies;
    for (auto& u : d.unload) c.unload.push_back(iteration_ != 0 ? target(u) : m_.names.intern(u));
    c.submodules = d.submodules;
    c.same_class = d.same_class;
    c.lazy_all = d.lazy_all;
    if (s.kind == StepKind::LazyImport) {
      c.bind = m_.names.intern(d.bind_as.empty() ? s.target.substr(0, s.target.find('.')) : d.bind_as);
      c.bind_as = !d.bind_as.empty();
    }
    if (s.kind == StepKind::LazyFrom)
      for (auto& [name, bind] : d.from_names) {
        c.unload.push_back(m_.names.intern(s.target + "." + name));
        c.unload.push_back(m_.names.intern(bind));
      }
    if (s.kind == StepKind::SetLazyFilter) {
      c.has_blocked = d.filter_eager.has_value();
      std::vector<NameId> ids;
      if (d.filter_eager)
        for (auto& n : *d.filter_eager) ids.push_back(m_.names.intern(n));
      c.block = m_.sets.intern(std::move(ids));
    }
  }

 private:
  const Scenario& sc_;
  Model& m_;
  const ModelLimits& limits_;
  int64_t scope_names_ = 0;
  int64_t unrolled_ = 0;                      // steps compiled for do blocks' iterations, summed
  int64_t iteration_ = 0;                     // the do block iteration being compiled (1 to N), 0 outside one
  const std::string* last_target_ = nullptr;  // into the Scenario
  NameId last_target_id_ = kNoName;
};

}  // namespace

namespace {

// What compile_model builds, and what only a run reads: the tree's names
// interned, its index for PathFinder, the torch names' paddle twins, the
// tree's bodies kept. None of it can refuse a scenario (interning and
// indexing only add), so check_model leaves it out; every step is still
// compiled, and everything that can refuse one is still run.
enum class Build { Model, ChecksOnly };

void compile_into(Model& m, const Scenario& sc, const Params& overrides, const ModelLimits& limits, Build build) {
  m.params = sc.params;
  if (sc.revision) m.axes.revision = *sc.revision;
  if (sc.cpython) m.axes.cpython = *sc.cpython;
  m.lazy = sc.lazy;
  for (auto& [k, v] : overrides) m.params[k] = v;
  m.labels = sc.labels;
  Compiler c(sc, m, limits);
  const bool keep_tree = build == Build::Model;
  if (keep_tree) {
    // Each tree entry is a name, and so is each module listed in sys.modules
    // and the blocked list: few more are interned besides.
    m.names.reserve(sc.tree.size() + sc.preloaded.size() + sc.torch_modules.size() + sc.blocked.size());
    m.tree.reserve(sc.tree.size());
    m.tree_child.reserve(sc.tree.size());
    for (const TreeEntry& e : sc.tree) {
      CTree& t = m.tree.emplace_back();
      t.name = m.names.intern(e.name);
      t.package = e.package;
    }
  }
  for (auto& p : sc.preloaded) m.preloaded.push_back(m.names.intern(p));
  for (auto& p : sc.torch_modules) m.torch_modules.push_back(m.names.intern(p));
  m.filler = c.resolve(sc.filler, "filler", limits.max_filler);
  {
    std::vector<NameId> ids;
    for (auto& b : sc.blocked) ids.push_back(m.names.intern(b));
    m.blocked = m.sets.intern(std::move(ids));
  }
  m.hooks = compile_hooks(sc.hooks, m.names);
  for (size_t i = 0; i < m.hooks.hooks.size(); ++i)
    for (size_t j = 0; j < m.hooks.hooks[i].actions.size(); ++j)
      if (HookAction& a = m.hooks.hooks[i].actions[j]; a.kind == ActionKind::Start || a.kind == ActionKind::Join)
        a.thread = static_cast<int32_t>(c.thread_index(sc.hooks.hooks[i].actions[j].target));
  m.program = c.steps(sc.program);
  for (const ThreadText& t : sc.threads) m.threads.push_back(CThread{t.name, c.steps(t.program)});
  if (!keep_tree) {
    std::vector<CStep> body;  // each tree body compiled here in turn, and dropped
    for (const TreeEntry& e : sc.tree) c.steps_into(e.body, body);
    return;
  }
  for (size_t i = 0; i < sc.tree.size(); ++i) c.steps_into(sc.tree[i].body, m.tree[i].body);
  // A proxy spec imports the paddle twin of a torch name: intern them all now,
  // each as a child of its parent's twin (ancestors have smaller ids), so a
  // long torch name costs its length, not its length per ancestor.
  std::vector<NameId> twin;
  for (size_t n = 0, end = m.names.size(); n < end; ++n) {
    NameId id = static_cast<NameId>(n);
    twin.push_back(kNoName);
    if (!m.names.is_torch(id)) continue;
    NameId parent = m.names.parent(id);
    twin[n] = parent == kNoName ? m.names.intern("paddle") : m.names.intern_child(twin[parent], m.names.last_atom(id));
  }
  m.paddle_of.assign(m.names.size(), kNoName);
  std::copy(twin.begin(), twin.end(), m.paddle_of.begin());
  m.tree_of_top.assign(m.names.size(), -1);
  for (size_t i = 0; i < m.tree.size(); ++i) {
    NameId name = m.tree[i].name;
    NameId parent = m.names.parent(name);
    if (parent == kNoName) {
      m.tree_of_top[name] = static_cast<TreeId>(i);
    }
  }
  // Parents before children, so find_tree can walk down from the top: the
  // entries bucketed by depth (their dots, counted once each), in tree
  // order within a depth. A sort comparing depths counted the dots of both
  // names at every comparison, n log n times.
  std::vector<uint32_t> depth(m.tree.size());
  std::vector<size_t> starts;  // by depth: where its entries start in by_depth, once summed
  for (size_t i = 0; i < m.tree.size(); ++i) {
    depth[i] = static_cast<uint32_t>(std::count(sc.tree[i].name.begin(), sc.tree[i].name.end(), '.'));
    if (depth[i] + 1 >= starts.size()) starts.resize(depth[i] + 2, 0);
    ++starts[depth[i] + 1];
  }
  for (size_t d = 1; d < starts.size(); ++d) starts[d] += starts[d - 1];
  std::vector<size_t> by_depth(m.tree.size());
  for (size_t i = 0; i < m.tree.size(); ++i) by_depth[starts[depth[i]]++] = i;
  for (size_t i : by_depth) {
    NameId name = m.tree[i].name;
    NameId parent = m.names.parent(name);
    if (parent == kNoName) continue;
    TreeId p = m.find_tree(parent);
    auto key = (static_cast<uint64_t>(static_cast<uint32_t>(p)) << 32) | static_cast<uint32_t>(m.names.last_atom(name));
    m.tree_child.try_emplace(key, static_cast<TreeId>(i));
  }
}

}  // namespace

Model compile_model(const Scenario& sc, const Params& overrides, const ModelLimits& limits) {
  Model m;
  compile_into(m, sc, overrides, limits, Build::Model);
  return m;
}

void check_model(const Scenario& sc, const Params& overrides, const ModelLimits& limits) {
  Model m;
  compile_into(m, sc, overrides, limits, Build::ChecksOnly);
}

}  // namespace impsim
