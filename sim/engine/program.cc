// The scenario's steps, each run as the Python statement it stands for
// (docs/scenario-format.md, "Steps"), with labels and the traceback of steps.
#include <fmt/format.h>

#include "impsim/base/engine_stack.h"
#include "impsim/engine/engine.h"
#include "impsim/engine/stack_budget.h"

namespace impsim {

void Engine::run() {
  if (!model_.threads.empty()) {
    // Each thread on a stack of its own, under the schedule asked for (an
    // empty one: each thread goes on until it blocks or ends).
    Scheduler scheduler = Scheduler::replay(schedule_);
    bad_schedule_ = run_threads(scheduler).bad_schedule;
    return;
  }
  run_on_engine_stack(stack_budget(book_.limits), [this] {
    try {
      set_up();  // a scenario past --max-objects stops here
      // The mode is picked here, once: every step below runs in it.
      if (plain_run()) {
        with_plain_run(design_, rules_, [this]<class M>() { run_steps<M>(model_.program); });
      } else {
        // Traced, but plain otherwise: once the sink has a tally, what runs
        // next runs as the TalliedRun of the design and revision.
        if (book_.trace && plain_but_traced())
          with_plain_run(design_, rules_, [this]<class M>() {
            if constexpr (M::plain) {
              using T = typename M::TalliedMode;
              tallied_.find_spec = &Engine::_find_spec<T>;
              tallied_.run_step = &Engine::run_step_once<T>;
            }
          });
        run_steps<AnyRun>(model_.program);
      }
    } catch (PyError& e) {
      py_thread_.error = std::move(e);
    } catch (LimitReached& l) {
      book_.limit = std::move(l);
    } catch (Hang& h) {
      hang_waits_ = {std::move(h.wait)};
      hang_at_ = std::move(h.at);
    }
  });
}

// One more frame --max-body-depth counts (`what` names what it counts);
// the caller takes it back with --py_thread_.body_depth.
void EngineContext::enter_body_depth(const char* what) {
  if (++py_thread_.body_depth <= book_.limits.max_body_depth) return;
  --py_thread_.body_depth;
  throw LimitReached{
      "body-depth",
      fmt::format("{} nested {} deep; raise it with --max-body-depth", what, book_.limits.max_body_depth),
      {}};
}

template <class M>
void Engine::run_steps(const std::vector<CStep>& steps) {
  for (const CStep& s : steps) run_step<M>(s);
}

// A module body (exec of a tree file) or a function of a module (`call`):
// a Python frame whose globals are that module's __dict__.
template <class M>
void Engine::run_body(ModuleId frame, const std::vector<CStep>& body, bool is_call) {
  enter_body_depth("module bodies and calls");
  py_thread_.frames.push_back(frame);
  if (lazy_.used) lazy_.frame_is_call.push_back(is_call);
  // A call is one Python frame above its caller; a module body, the import
  // machinery's frames above its importer (recursion.h).
  const int64_t outer_depth = py_thread_.py_depth;
  const bool outer_in_hook = py_thread_.py_in_hook;
  py_thread_.py_depth += is_call ? 1 : recursion_.body_frames;
  py_thread_.py_in_hook = false;
  const uint64_t outer_frames = book_.memo.enter_frame();
  NameId name = interp_.records.module(frame).name;
  if (traced<M>()) book_.trace->body_begin(*this, name, is_call ? BodyKind::Call : BodyKind::Module);
  try_finally([&] { run_steps<M>(body); },
              [&] {
                py_thread_.frames.pop_back();
                if (lazy_.used) lazy_.frame_is_call.pop_back();
                py_thread_.py_depth = outer_depth;
                py_thread_.py_in_hook = outer_in_hook;
                book_.memo.leave_frame(outer_frames);
                --py_thread_.body_depth;
                if (traced<M>()) book_.trace->body_end(*this, name, is_call ? BodyKind::Call : BodyKind::Module);
              });
}

template <class M>
void Engine::run_step(const CStep& step) {
  for (int64_t i = 0; i < step.repeat; ++i) {
    try {
      run_step_once<M>(step);
    } catch (PyError& e) {
      e.traceback.insert(e.traceback.begin(), *step.pointer);
      throw;
    } catch (LimitReached& l) {
      l.traceback.insert(l.traceback.begin(), *step.pointer);
      throw;
    } catch (Hang& h) {
      if (h.at.empty()) h.at = *step.pointer;
      throw;
    }
  }
}

template <class M>
void Engine::run_step_once(const CStep& step) {
  if constexpr (!M::plain) {
    // Past the sink's cut, a step runs as its TalliedRun (run_mode.h).
    if (tallied_.run_step && book_.trace->tally) [[unlikely]] {
      book_.tally = book_.trace->tally;
      return (this->*tallied_.run_step)(step);
    }
  }
  // Steps that cost no event (a repeated disable, say) still take time and
  // memory (a labelled step's results): they have a bound of their own.
  if (++book_.steps_run > book_.limits.max_steps)
    throw LimitReached{
        "max-steps", fmt::format("{} scenario steps run; raise it with --max-steps", book_.limits.max_steps), {}};
  if (threaded<M>()) [[unlikely]]
    schedule_point(PointKind::Step, kNoName, step.pointer);
  maybe_collect();
  Counters start;
  uint64_t outer_high = 0;
  const uint64_t start_depth = py_thread_.depth;
  HookCounters hook_start;
  uint64_t saved_search_high = 0, saved_hook_high = 0;
  if (step.label >= 0) {
    start = py_thread_.counters();
    outer_high = open_region();
    if (hooks<M>()) {
      hook_start = py_thread_.hook_counters.totals();
      py_thread_.hook_regions.push_back(HookRegion{++py_thread_.next_region, {}});
      saved_search_high = py_thread_.label_search_high;
      py_thread_.label_search_high = 0;
      saved_hook_high = py_thread_.label_hook_high;
      py_thread_.label_hook_high = 0;
    }
  }
  if (traced<M>()) book_.trace->step_begin(*this, step);
  const CStep* const outer_step = py_thread_.step;
  enter_step(&step);
  // `ended`: the step returned or raised. A step a hang stopped never
  // does: its counters are what it did until then, which is all it ever
  // does, with no result and no sys.meta_path "as it ended".
  auto close_label = [&](std::string result, bool ended = true) {
    enter_step(outer_step);
    if (traced<M>() && ended) book_.trace->step_end(*this, step, result.c_str());
    if (step.label < 0) return;
    LabelTotals& t = book_.labels[step.label];
    t.counters.add_delta(py_thread_.counters(), start);
    // Deeper than the step began: a lookup ran inside it.
    const uint64_t deepest = close_region(outer_high);
    if (deepest > start_depth && deepest > t.counters.max_depth) t.counters.max_depth = deepest;
    if (hooks<M>()) {
      t.hooks.add_totals_delta(py_thread_.hook_counters, hook_start);
      // Only the objects called inside have a slot (the reports read any
      // other as 0): a label does not cost every object the run made.
      std::vector<Count>& by = t.hooks.by_object;
      for (const auto& [f, start_calls] : py_thread_.hook_regions.back().called) {
        const auto i = static_cast<size_t>(f);
        if (by.size() <= i) by.resize(i + 1);
        by[i] += py_thread_.hook_counters.by_object[i] - start_calls;
      }
      py_thread_.hook_regions.pop_back();
      if (ended) t.meta_path = interp_.meta_path.list();
      if (py_thread_.label_search_high > t.hooks.max_depth) t.hooks.max_depth = py_thread_.label_search_high;
      py_thread_.label_search_high = std::max(saved_search_high, py_thread_.label_search_high);
      if (py_thread_.label_hook_high > t.hooks.hook_depth) t.hooks.hook_depth = py_thread_.label_hook_high;
      py_thread_.label_hook_high = std::max(saved_hook_high, py_thread_.label_hook_high);
    }
    if (ended) append_result(t.results, std::move(result));
  };
  std::string result = "ok";
  try {
    switch (step.kind) {
      case StepKind::Import:
        if constexpr (!M::plain)
          if (lazy_.used) {
            import_step(step);
            break;
          }
        import_statement<M>(step.target);
        break;
      case StepKind::LazyImport:
        lazy_import_step(step);
        break;
      case StepKind::Use:
        use_step(step);
        break;
      case StepKind::SetLazyImports:
        lazy_.mode_all = step.lazy_all;
        break;
      case StepKind::SetLazyFilter:
        lazy_.has_filter = step.has_blocked;
        lazy_.filter_eager = step.block;
        break;
      case StepKind::LazyFrom:
        lazy_from_step(step);
        break;
      case StepKind::SetLazyModules:
        lazy_.dunder[current_globals()] = step.block;
        break;
      case StepKind::Resolve:
        resolve_step(step);
        break;
      case StepKind::FindSpec:
        result = find_spec<M>(step.target) == kNoSpec ? "none" : "found";
        break;
      case StepKind::ImportModule:
        // _gcd_import: no check of a module another thread initialises
        // before _find_and_load's module lock, as the statement has.
        _find_and_load<M>(step.target);
        break;
      case StepKind::Enable:
        // b52ce17: extend_torch_proxy_blocked_modules(blocked_modules) first.
        if (step.has_blocked) {
          if (!rules<M>().enable_takes_blocked)
            raise("TypeError", "enable_torch_proxy() got an unexpected keyword argument 'blocked_modules'");
          assign_set(finder_.blocked, unite_sets(finder_.blocked, step.block));
          finder_.covers.clear();
        }
        enable<M>(step.has_scope ? std::optional<SetId>(step.scopes[0]) : std::nullopt);
        break;
      case StepKind::Disable:
        disable<M>();
        break;
      case StepKind::Block:
        assign_set(finder_.blocked, unite_sets(finder_.blocked, step.block));
        finder_.covers.clear();
        break;
      case StepKind::Guard:
        run_guard_levels<M>(step, 1);
        break;
      case StepKind::Call: {
        if (!interp_.sys_modules.contains(step.target)) raise("KeyError", "'" + names_.text(step.target) + "'");
        run_body<M>(interp_.sys_modules.get(step.target), step.body, /*is_call=*/true);
        break;
      }
      case StepKind::Do:
        // A for loop's body: the caller's frame, no frame of its own.
        run_steps<M>(step.body);
        break;
      case StepKind::Reload:
        reload<M>(step.target);
        break;
      case StepKind::Start:
        thread_start(static_cast<int32_t>(step.at));
        break;
      case StepKind::Join:
        thread_join(static_cast<int32_t>(step.at));
        break;
      default:  // the meta_path steps
        run_meta_path_step(step);
        break;
    }
  } catch (PyError& e) {
    if (step.optional && e.is_import_error()) {
      close_label(e.type);
      return;
    }
    close_label(e.type);
    throw;
  } catch (LimitReached&) {
    close_label("limit");
    throw;
  } catch (...) {
    // Anything else unwinding through a step ends the run with the step
    // never ended: a hang (Hang in a run without threads, the scheduler's
    // cancellation of a thread left waiting in one with threads), or a
    // failure of impsim's own such as running out of memory.
    close_label("", /*ended=*/false);
    throw;
  }
  close_label(std::move(result));
}

// `nest` levels of use_torch_proxy_guard, level 1 outermost, body innermost.
template <class M>
void Engine::run_guard_levels(const CStep& step, int64_t level) {
  int64_t levels = step.nest < 0 ? 1 : step.nest;
  if (level > levels) {
    run_steps<M>(step.body);
    return;
  }
  // Each open guard is a C++ frame here: guards nested in guards multiply.
  if (++py_thread_.guard_depth > book_.limits.max_guard_depth) {
    --py_thread_.guard_depth;
    throw LimitReached{"guard-depth",
                       fmt::format("{} guards open at once (nest levels included); raise it with --max-guard-depth",
                                   book_.limits.max_guard_depth),
                       {}};
  }
  std::optional<SetId> scope;
  if (step.has_scope) scope = step.scopes[static_cast<size_t>(level - 1)];
  GuardEntry g = guard_enter<M>(step.guard_enable, scope, GuardSite::Step);
  try_finally([&] { run_guard_levels<M>(step, level + 1); },
              [&] {
                --py_thread_.guard_depth;
                guard_exit<M>(g);
              });
}

#define IMPSIM_INSTANTIATE(M)                                    \
  template void Engine::run_steps<M>(const std::vector<CStep>&); \
  template void Engine::run_body<M>(ModuleId, const std::vector<CStep>&, bool);
IMPSIM_EACH_RUN_MODE(IMPSIM_INSTANTIATE)
#undef IMPSIM_INSTANTIATE

}  // namespace impsim
