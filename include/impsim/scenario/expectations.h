// Expectations beyond an exact count: a budget, that is bounds on
// a counter ({"<=": 20}), or bounds on its ratio to another variant's same
// counter at the same parameters ({"ratio_to": "before", "<=": "1/1000"}:
// at least 1,000x cheaper than before). docs/scenario-format.md, "impsim's additions to v1".
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "impsim/base/count.h"
#include "impsim/scenario/variant.h"

namespace impsim {

// num / den, both > 0 except num, which may be 0.
struct Fraction {
  uint64_t num = 0;
  uint64_t den = 1;
};

struct Bound {
  std::string op;  // "<=", "<", ">=", ">", "=="
  Fraction value;
};

struct Budget {
  std::vector<Bound> bounds;  // all must hold
  std::optional<Variant> ratio_to;  // set: the bounds are on counter / this variant's counter
};

// Where a budget's fault is: at the value the pointer names, or at its key
// (an unknown key: its value is not what is wrong).
enum class BudgetFault { AtValue, AtKey };

// Parses a budget object at `ptr`; calls `fail(ptr, message, where)` (which
// must throw) on anything else. `variants` are the scenario's.
Budget parse_budget(const nlohmann::json& value, const std::string& ptr, const std::vector<Variant>& variants,
                    const std::function<void(const std::string&, const std::string&, BudgetFault)>& fail);

// Whether `actual` (over `baseline` for a ratio) meets every bound; a
// ratio to a zero baseline meets none.
bool budget_holds(const Budget& b, const Count& actual, const std::optional<Count>& baseline);

// "<= 20", ">= 1 and <= 20", "<= x1/1,000 of before": for reports.
std::string budget_text(const Budget& b);
// {"<=": 20} or {"ratio_to": "before", "<=": "1/1000"}: as written.
nlohmann::ordered_json budget_json(const Budget& b);

}  // namespace impsim
