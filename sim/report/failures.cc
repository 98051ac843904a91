#include "impsim/report/failures.h"

#include <fmt/format.h>

#include "impsim/base/escape.h"
#include "impsim/base/ratio.h"
#include "impsim/report/report.h"
#include "impsim/run/outcome_words.h"
#include "impsim/scenario/expectations.h"

namespace impsim {

FilePlaces::FilePlaces(const ScenarioFacts& sc) : FilePlaces(sc.file, sc.source) {}

FilePlaces::FilePlaces(std::string file, const std::shared_ptr<const std::string>& source) : file_(std::move(file)) {
  if (source) source_.emplace(*source);
}

std::optional<SourcePos> FilePlaces::position(const std::string& pointer) const {
  if (!source_ || pointer.empty()) return std::nullopt;
  return source_->position_of(pointer);
}

std::string FilePlaces::prefix(const std::string& pointer) const {
  if (file_.empty()) return "";
  if (auto pos = position(pointer)) return fmt::format("{}:{}:{}: ", file_, pos->line, pos->column);
  return file_ + ": ";
}

namespace {

// "before [k=12]", or "before" for a scenario without parameters.
std::string run_name(const VariantRun& r) {
  std::string name = variant_name(r.variant);
  return r.params.empty() ? name : fmt::format("{} [{}]", name, params_text(r.params));
}

std::string innermost(const std::vector<std::string>& traceback) { return traceback.empty() ? "" : traceback.back(); }

std::string expected_text(const ExpectationResult& e) {
  return e.budget ? budget_text(*e.budget) : grouped(e.expected);
}

std::string actual_text(const ExpectationResult& e) {
  if (!e.baseline) return grouped(e.actual);
  return fmt::format("{} ({} of {}'s {})", grouped(e.actual), ratio_text(e.actual, *e.baseline),
                     variant_name(*e.budget->ratio_to),
                     grouped(*e.baseline));
}

Failure at(const FilePlaces& places, const ScenarioFacts& sc, FailureKind kind, std::string pointer, std::string text) {
  Failure f{kind, sc.file, std::move(pointer), std::nullopt, std::move(text)};
  f.pos = places.position(f.pointer);
  return f;
}

void add_run_problems(std::vector<Failure>& out, const FilePlaces& places, const ScenarioFacts& sc,
                      const std::vector<VariantRun>& runs, bool raised) {
  for (const VariantRun& r : runs) {
    if (r.limit) {
      const std::string step = innermost(r.limit->traceback);
      out.push_back(at(places, sc, FailureKind::Limit, step,
                       fmt::format("{}: stopped: limit {} reached at {}: {}", run_name(r), r.limit->limit,
                                   step.empty() ? "?" : step, r.limit->detail)));
    }
    if (raised && r.outcome.error && !sc.allow_error) {
      const PyError& e = *r.outcome.error;
      out.push_back(at(places, sc, FailureKind::Raised, innermost(e.traceback),
                       fmt::format("{}: raised {}: {}", run_name(r), e.type, e.message)));
    }
    if (raised && !r.outcome.hang.empty() && !sc.allow_error)
      out.push_back(at(places, sc, FailureKind::Hang, r.outcome.hang_at,
                       fmt::format("{}: hangs: {}", run_name(r), hang_waits_text(r.outcome.hang))));
  }
}

}  // namespace

std::vector<Failure> run_failures(const ScenarioRun& run, bool raised) {
  const ScenarioFacts& sc = run.scenario;
  const FilePlaces places(sc);
  std::vector<Failure> out;
  for (const VariantRun& r : run.runs)
    for (const ExpectationResult& e : r.expectations)
      if (!e.ok)
        out.push_back(at(places, sc, FailureKind::Expectation, e.pointer,
                         fmt::format("{} {} [{}]: expected {}, got {}", variant_name(r.variant), e.counter,
                                     params_text(r.params), expected_text(e), actual_text(e))));
  for (const VariantRun& r : run.runs)
    if (r.verdict_expected && *r.verdict_expected != r.verdict)
      out.push_back(
          at(places, sc, FailureKind::Expectation, "/expect_outcome/" + pointer_token(variant_name(r.variant)),
             fmt::format("{} outcome against {} [{}]: expected {}, got {}", variant_name(r.variant),
                         variant_name(run.variants[0]), params_text(r.params), *r.verdict_expected, r.verdict)));
  if (run.equivalence_failure)
    out.push_back(at(places, sc, FailureKind::Expectation, "/expect_equivalent", *run.equivalence_failure));
  add_run_problems(out, places, sc, run.runs, raised);
  return out;
}

std::vector<Failure> run_failures(const ScenarioFacts& sc, const std::vector<VariantRun>& runs) {
  const FilePlaces places(sc);
  std::vector<Failure> out;
  add_run_problems(out, places, sc, runs, true);
  return out;
}

std::string failure_line(const Failure& f) {
  std::string place;
  if (!f.file.empty()) place = f.pos ? fmt::format("{}:{}:{}: ", f.file, f.pos->line, f.pos->column) : f.file + ": ";
  // One escape for the whole line: a file name or a counter cannot end it,
  // nor join with impsim's words into something a terminal or a runner reads.
  return terminal_text(place + (f.kind == FailureKind::Expectation ? "FAILED " : "") + f.text);
}

}  // namespace impsim
