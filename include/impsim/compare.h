// `impsim compare`: finder designs side by side on one scenario, with the
// ratio of every counter to a baseline design and an outcome verdict per
// design, as text, Markdown (for a code review) or JSON.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "impsim/run.h"

namespace impsim {

struct Comparison {
  const ScenarioRun* run = nullptr;
  Variant baseline = Variant::Before;
};

enum class CompareFormat { Text, Markdown, Json };

std::string compare_text(const Comparison& c, CompareFormat format);
nlohmann::ordered_json compare_json(const Comparison& c);

// "x1.50", "1/2,494", "=", "0", "n/a": a counter against the baseline's.
std::string ratio_text(Count value, Count baseline);

}  // namespace impsim
