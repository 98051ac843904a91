// What a scenario says about itself, asked by every stage after the reader:
// the counters it may name, and whether a design can run on it.
#include "impsim/scenario/scenario.h"

#include <fmt/format.h>

#include <algorithm>

#include "impsim/scenario/counters.h"
#include "impsim/scenario/variant.h"

namespace impsim {

namespace {

// The objects counted one by one (finder_calls:ID), as reports list them:
// the hook objects as declared, then the interpreter's three.
std::vector<std::string> counted_finder_ids(const Scenario& sc) {
  std::vector<std::string> out;
  for (const FinderText& f : sc.hooks.finders) out.push_back(f.id);
  for (const char* id : {"BuiltinImporter", "FrozenImporter", "PathFinder"}) out.emplace_back(id);
  return out;
}

}  // namespace

// Constant-initialised: a step read during another file's static
// initialisation must already see guard_enable = true. Clang with
// libstdc++ 12 cannot make the std::string members in a constant
// expression: the fuzz build (clang, docs/fuzzing.md) initialises it
// before main, and reads no step before main.
#if defined(__clang__)
const StepDetail Step::kNoDetail{};
#else
constinit const StepDetail Step::kNoDetail{};
#endif

StepDetail& Step::mutable_detail() {
  if (!detail_)
    detail_ = std::make_shared<StepDetail>();
  else if (detail_.use_count() > 1)
    detail_ = std::make_shared<StepDetail>(*detail_);
  return *detail_;
}

std::vector<std::string> counter_names(const Scenario& sc) {
  std::vector<std::string> out;
  for (const CounterInfo& c : kCounters) out.emplace_back(c.name);
  if (!sc.hooks.used) return out;
  for (const char* c : {"searches", "finder_calls", "lookup_depth", "legacy_warnings", "hook_depth", "hook_reentries"})
    out.emplace_back(c);
  for (const std::string& id : counted_finder_ids(sc)) out.push_back("finder_calls:" + id);
  return out;
}

std::vector<ReportRow> report_rows(const Scenario& sc) {
  if (!sc.report.empty()) return sc.report;
  if (!hook_only(sc)) return {{"lookups", "lookups"}};
  std::vector<ReportRow> rows{{"searches", "searches"}};
  for (const std::string& id : counted_finder_ids(sc)) rows.push_back({"finder_calls:" + id, "finder_calls:" + id});
  rows.push_back({"max_depth", "max_depth"});
  return rows;
}

bool is_hook_counter_name(const Scenario& sc, const std::string& name) {
  if (!sc.hooks.used) return false;
  if (name == "searches" || name == "finder_calls" || name == "lookup_depth" || name == "legacy_warnings" ||
      name == "hook_depth" || name == "hook_reentries")
    return true;
  if (!name.starts_with("finder_calls:")) return false;
  std::string id = name.substr(13);
  // The interpreter's three are counted per object too (not P: its asks).
  if (id == "BuiltinImporter" || id == "FrozenImporter" || id == "PathFinder") return true;
  // "ID#k": the k-th object a `new` step made for ID (k >= 1), when some step makes one.
  const size_t hash = id.find('#');
  if (hash != std::string::npos) {
    const std::string k = id.substr(hash + 1);
    if (k.empty() || k.size() > 9 || k[0] == '0' ||
        !std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    id.resize(hash);
    if (!sc.hooks.renewed_ids.count(id)) return false;
  }
  return sc.hooks.hook_finder_ids.count(id) != 0;
}

std::string counter_list(const Scenario& sc) {
  std::string core = counter_list();  // "a, b or c"
  if (!sc.hooks.used) return core;
  if (size_t last_or = core.rfind(" or "); last_or != std::string::npos) core.replace(last_or, 4, ", ");
  std::string ids;
  for (const FinderText& f : sc.hooks.finders) ids += f.id + ", ";
  return fmt::format(
      "{}, searches, finder_calls, lookup_depth, legacy_warnings, hook_depth, hook_reentries or finder_calls:ID (ID: "
      "{}BuiltinImporter, "
      "FrozenImporter or PathFinder; ID#k: the k-th object a \"new\" step makes for ID)",
      core, ids);
}

std::optional<std::string> hook_variant_problem(const Scenario& sc, const Variant& v) {
  // Paddle's designs change only P: where P never enters sys.meta_path they
  // would all print the same rows, which reads as a measured "no effect".
  if (!is_hook_design(v.design) && hook_only(sc))
    return fmt::format(
        "\"{}\" is a design of Paddle's proxy finder P, which takes no part in this scenario (no "
        "enable, disable, guard or block step, and P is never named as a finder object), so it would "
        "run exactly as as_is; use a hook design: {}",
        variant_name(v), hook_variant_list());
  if (!is_hook_design(v.design)) return std::nullopt;
  if (!sc.hooks.used)
    return fmt::format("\"{}\" is a hook design; this scenario declares no hooks (its designs: {})", variant_name(v),
                       variant_list());
  if (v.hook_target.empty() || sc.hooks.hook_names.count(v.hook_target)) return std::nullopt;
  std::string names;
  for (const HookText& h : sc.hooks.hooks) names += (names.empty() ? "" : ", ") + h.name;
  return fmt::format("\"{}\" names hook \"{}\", which \"hooks\" does not define (it defines: {})", variant_name(v),
                     v.hook_target, names.empty() ? "none" : names);
}

}  // namespace impsim
