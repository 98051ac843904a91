#include "harness.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "impsim/engine.h"
#include "impsim/loader.h"
#include "impsim/report.h"
#include "impsim/run.h"
#include "impsim/trace.h"

namespace impsim::fuzz {

namespace {

// The engine bounds finder asks, toggles and nesting, but not the number of
// scenario steps a program runs (a `repeat` of a cached import costs no
// event), so the harness counts steps itself and stops a run past a budget,
// the way the engine stops at a limit.
class StepBudget : public TraceSink {
 public:
  explicit StepBudget(uint64_t budget) : left_(budget) {}
  void step_begin(const Engine&, const CStep&) override {
    if (left_ == 0) {
      exhausted = true;
      throw LimitReached{"fuzz-steps", "the fuzz harness's step budget", {}};
    }
    --left_;
  }
  bool exhausted = false;

 private:
  uint64_t left_;
};

RunOptions fuzz_options() {
  RunOptions o;
  o.limits.max_events = 5000;
  o.limits.max_lookup_depth = 40;
  o.limits.max_body_depth = 40;
  o.model_limits.max_repeat = 40;
  o.model_limits.max_nest = 40;
  o.model_limits.max_filler = 5000;
  return o;
}

constexpr uint64_t kStepBudget = 20000;
constexpr size_t kMaxRuns = 24;  // sweep values x variants

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Invalid: return "invalid";
    case Verdict::StepBudget: return "step budget";
    case Verdict::Ran: return "ran";
  }
  return "?";
}

Verdict run_input(const uint8_t* data, size_t size) {
  InputLimits in_limits;
  in_limits.max_file_bytes = 1 << 20;
  std::string text(reinterpret_cast<const char*>(data), size);
  Scenario sc;
  try {
    sc = load_scenario_text(text, "fuzz.json", in_limits);
  } catch (const InputError& e) {
    (void)e.what();
    return Verdict::Invalid;
  }
  RunOptions options = fuzz_options();
  options.engine = EngineKind::Step;
  size_t sweep = sc.sweep ? sc.sweep->values.size() : 1;
  if (sweep * sc.variants.size() > kMaxRuns) return Verdict::StepBudget;

  // First pass: every sweep value and variant under the step budget.
  try {
    for (size_t si = 0; si < sweep; ++si) {
      Params params;
      if (sc.sweep) params[sc.sweep->param] = sc.sweep->values[si];
      Model model = compile_model(sc, params, options.model_limits);
      apply_axes(model, options);
      for (const std::string& v : sc.variants) {
        std::optional<Variant> variant = parse_variant(v);
        if (!variant) return Verdict::Invalid;
        StepBudget budget(kStepBudget);
        Engine engine(model, *variant, options.limits);
        engine.set_trace(&budget);
        engine.run();
        if (budget.exhausted) return Verdict::StepBudget;
        (void)outcome_of(engine);
      }
    }
  } catch (const InputError&) {
    return Verdict::Invalid;
  } catch (const ModelLimitError&) {
    return Verdict::Invalid;
  }

  // Second pass: the real front door, both reports, with each engine (the
  // fast one does less work than the step engine that just finished). The
  // limits are explicit, so both engines stop at the same event: their
  // reports must be byte for byte the same (docs/limits.md).
  try {
    std::string reports[2];
    int i = 0;
    for (EngineKind kind : {EngineKind::Step, EngineKind::Fast}) {
      options.engine = kind;
      ScenarioRun run = run_scenario(sc, options);
      std::string json = dump_json(report_json(run));
      std::string txt = report_text(run);
      (void)run.exit_status();
      if (json.empty() || txt.empty()) __builtin_trap();
      reports[i++] = json + "\n" + txt;
    }
    if (reports[0] != reports[1]) {
      std::fprintf(stderr, "fuzz: the step and fast engines' reports differ\n--- step\n%s\n--- fast\n%s\n",
                   reports[0].c_str(), reports[1].c_str());
      std::abort();
    }
  } catch (const InputError&) {
    return Verdict::Invalid;
  } catch (const ModelLimitError&) {
    return Verdict::Invalid;
  }
  return Verdict::Ran;
}

}  // namespace impsim::fuzz
