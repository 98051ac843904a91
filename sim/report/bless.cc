#include "impsim/report/bless.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "impsim/base/errors.h"
#include "impsim/base/json_scan.h"

namespace impsim {

namespace {

// A scalar value starting at `at`: where it ends.
size_t scalar_end(const std::string& text, size_t at) {
  while (at < text.size() && std::string_view(",]} \t\r\n").find(text[at]) == std::string_view::npos) ++at;
  return at;
}

// `s` as a JSON string, quotes and escapes included: a counter is a
// label's name, and a label may hold `"` or `\`.
std::string json_string(const std::string& s) { return nlohmann::json(s).dump(); }

struct Edit {
  size_t begin, end;
  std::string text;
};

// The run of `variant` at sweep point `point`, if it ran.
const VariantRun* find_run(const ScenarioRun& run, const Variant& variant, size_t point) {
  for (size_t v = 0; v < run.variants.size(); ++v)
    if (run.variants[v] == variant) return &run.at(point, v);
  return nullptr;
}

// Where the root object's last member ends, and the indentation of its keys.
std::pair<size_t, std::string> root_end(const std::string& text) {
  size_t close = text.find_last_of('}');
  size_t last = text.find_last_not_of(" \t\r\n", close == std::string::npos || close == 0 ? 0 : close - 1);
  std::string indent = "  ";
  size_t open = text.find('{');
  if (open != std::string::npos) {
    size_t nl = text.find('\n', open);
    if (nl != std::string::npos) {
      size_t k = nl + 1;
      while (k < text.size() && (text[k] == ' ' || text[k] == '\t')) ++k;
      if (k < text.size() && text[k] == '"') indent = text.substr(nl + 1, k - nl - 1);
    }
  }
  return {last + 1, indent};
}

}  // namespace

std::optional<std::string> bless_refusal(const ScenarioRun& run) {
  const ScenarioFacts& sc = run.scenario;
  for (const VariantRun& r : run.runs) {
    if (r.limit)
      return fmt::format("{} not rewritten: {} stopped at limit {}, so its counts are partial", sc.file,
                         variant_name(r.variant), r.limit->limit);
    if (r.outcome.error && !sc.allow_error)
      return fmt::format("{} not rewritten: {} raised {} (the scenario does not allow it), so its counts are not "
                         "the program's",
                         sc.file, variant_name(r.variant), r.outcome.error->type);
  }
  return std::nullopt;
}

Blessed bless(const std::string& source, const ScenarioRun& run) {
  const ScenarioFacts& sc = run.scenario;
  if (auto why = bless_refusal(run)) throw UsageError(sc.file, "--bless: " + *why);
  JsonSource src(source);
  Blessed out;
  std::vector<Edit> edits;
  for (const Expectation& e : sc.expect) {
    for (size_t i = 0; i < e.values.size(); ++i) {
      if (!e.values[i]) continue;  // null, or a budget
      size_t point = e.values.size() == 1 ? 0 : i;
      const VariantRun* r = find_run(run, e.variant, point);
      if (!r) continue;
      Count now = counter_of(*r, e.counter);
      if (now == *e.values[i]) continue;
      std::string ptr = e.listed ? e.pointer + "/" + std::to_string(i) : e.pointer;
      size_t begin = src.offset_of(ptr);
      edits.push_back({begin, scalar_end(source, begin), now.text()});
      ++out.changed;
    }
  }
  if (sc.expect.empty() && !nlohmann::json::parse(source).contains("expect")) {
    auto [end, indent] = root_end(source);
    std::vector<std::string> counters;
    for (const ReportRow& row : sc.rows) counters.push_back(row.counter);
    std::string block = fmt::format(",\n{}\"expect\": {{", indent);
    for (size_t v = 0; v < run.variants.size(); ++v) {
      std::string entries;
      for (const std::string& c : counters) {
        std::string value;
        if (run.sweep_values.empty()) value = counter_of(run.at(0, v), c).text();
        else {
          for (size_t p = 0; p < run.sweep_values.size(); ++p)
            value += (p ? ", " : "") + counter_of(run.at(p, v), c).text();
          value = "[" + value + "]";
        }
        entries += fmt::format("{}{}: {}", entries.empty() ? "" : ", ", json_string(c), value);
        ++out.added;
      }
      block += fmt::format("{}\n{}{}{}: {{{}}}", v ? "," : "", indent, indent, json_string(variant_name(run.variants[v])),
                           entries);
    }
    block += fmt::format("\n{}}}", indent);
    edits.push_back({end, end, block});
  }
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin > b.begin; });
  out.text = source;
  for (const Edit& e : edits) out.text.replace(e.begin, e.end - e.begin, e.text);
  return out;
}

}  // namespace impsim
