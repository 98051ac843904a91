#include <nlohmann/json.hpp>

#include "harness.h"
#include "scenario_dump.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "impsim/engine/engine.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/report/report.h"
#include "impsim/run/run.h"

namespace impsim::fuzz {

namespace {

RunOptions fuzz_options() {
  RunOptions o;
  o.limits.max_events = 5000;
  o.limits.max_lookup_depth = 40;
  o.limits.max_body_depth = 40;
  o.model_limits.max_repeat = 40;
  o.model_limits.max_nest = 40;
  o.model_limits.max_filler = 5000;
  // A `repeat` of a cached import costs no event: steps have a budget of
  // their own, well under the engine's default.
  o.limits.max_steps = 20000;
  return o;
}

constexpr size_t kMaxRuns = 24;  // sweep values x variants

// What any scenario's reports must be, whatever its strings hold
// (escape.h): the JSON parses, the text for a terminal holds no control
// byte but its newlines.
void check_escaped(const std::string& json, const std::string& text, const char* what) {
  if (!nlohmann::json::accept(json)) {
    std::fprintf(stderr, "fuzz: the JSON report does not parse\n%s\n", json.c_str());
    std::abort();
  }
  for (unsigned char c : text)
    if ((c < 0x20 && c != '\n') || c == 0x7F) {
      std::fprintf(stderr, "fuzz: the %s report holds the control byte 0x%02X\n%s\n", what, c, text.c_str());
      std::abort();
    }
}

// parse_scenario reads with the event reader and, when it gives up, with
// the DOM reader: the event reader must read what the DOM reader reads, and
// never take what it refuses.
void check_readers_agree(const std::string& text, const InputLimits& limits) {
  std::optional<Scenario> events = parse_scenario_events(text, "fuzz.json", limits);
  if (!events) return;
  std::string dom;
  try {
    dom = scenario_dump(parse_scenario_dom(text, "fuzz.json", limits));
  } catch (const InputError& e) {
    std::fprintf(stderr, "fuzz: the event reader took a file the DOM reader refuses: %s\n", e.what());
    std::abort();
  }
  if (scenario_dump(*events) != dom) {
    std::fprintf(stderr, "fuzz: the event reader and the DOM reader read different scenarios\n--- events\n%s\n--- dom\n%s\n",
                 scenario_dump(*events).c_str(), dom.c_str());
    std::abort();
  }
}

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
  check_readers_agree(text, in_limits);
  try {
    Scenario sc = parse_scenario(text, "fuzz.json", in_limits);
    RunOptions options = fuzz_options();
    options.engine = EngineKind::Step;
    RunPlan plan = plan_runs(sc, options);
    if (plan.runs() > kMaxRuns) return Verdict::StepBudget;
    // First pass: every run under the step budget, before the reports.
    for (size_t p = 0; p < plan.points(); ++p) {
      Model model = compile_model(sc, plan.params[p], options.model_limits);
      apply_axes(model, options);
      for (Variant v : plan.variants)
        if (VariantRun r = run_one(plan, model, p, v, options); r.limit && r.limit->limit == "max-steps")
          return Verdict::StepBudget;
    }

    // Second pass: the real front door, both reports, with each engine (the
    // fast one does less work than the step engine that just finished). The
    // limits are explicit, so both engines stop at the same event: their
    // reports must be byte for byte the same (docs/limits.md).
    std::string reports[2];
    int i = 0;
    for (EngineKind kind : {EngineKind::Step, EngineKind::Fast}) {
      options.engine = kind;
      ScenarioRun run = run_scenario(sc, options);
      std::string json = dump_json(report_json(run));
      std::string txt = report_text(run);
      (void)run.exit_status();
      if (json.empty() || txt.empty()) __builtin_trap();
      check_escaped(json, txt, "text");
      check_escaped(json, report_markdown(run), "markdown");
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
