// A threaded run's outcome as a line (include/impsim/report/threaded_outcome_text.h).
#include "impsim/report/threaded_outcome_text.h"
#include "impsim/run/outcome_words.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

namespace impsim {

std::string outcome_end_text(const OutcomeEnd& end) {
  std::string out;
  for (size_t i = 0; i < end.threads.size(); ++i) out += (i == 0 ? "" : "; ") + thread_end_text(end.threads[i]);
  if (end.stopped_at) out += fmt::format("; stopped: limit {}", *end.stopped_at);
  if (end.hung()) out += "; hang: " + hang_waits_text(end.hang);
  out += "; sys.modules: " +
         (end.sys_modules.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(end.sys_modules, " ")));
  // What Paddle's finder and a hook's loader leave: each said only where
  // there is one, so a scenario without P or marks reads as before them.
  std::string marks;
  for (const auto& [name, mark] : end.marks) marks += fmt::format("{}{}={}", marks.empty() ? "" : " ", name, mark);
  if (!marks.empty()) out += "; marks: " + marks;
  if (end.proxy_copies != 0) out += fmt::format("; copies of P: {}", end.proxy_copies);
  return out;
}

std::string outcome_counters_text(const OutcomeCounters& c) {
  std::string out = fmt::format("asks {}, lookups {}, toggles {}", c.asks.text(), c.lookups.text(), c.toggles.text());
  if (c.searches) out += fmt::format(", searches {}", c.searches->text());
  return out;
}

std::string threaded_outcome_text(const ThreadedOutcome& outcome) {
  return outcome_end_text(outcome.end) + "; " + outcome_counters_text(outcome.counters);
}

std::vector<size_t> classes_by_text(const std::vector<OutcomeClass>& classes) {
  std::vector<std::string> texts;
  texts.reserve(classes.size());
  for (const OutcomeClass& c : classes) texts.push_back(threaded_outcome_text(c.outcome));
  std::vector<size_t> order(classes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return texts[a] < texts[b]; });
  return order;
}

}  // namespace impsim
