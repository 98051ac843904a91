// What trace_test.cc and explore_test.cc share: a scenario file traced in
// one format, as `impsim trace` / `impsim explore` would write it, and a
// file read whole.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "impsim/reader/read_scenario.h"
#include "impsim/trace/trace_formats.h"
#include "test_util.h"

namespace impsim::test {

inline std::string traced(const std::string& scenario, TraceFormat format, Params set = {}, TraceOptions topt = {},
                          std::vector<std::string> variants = {}) {
  Scenario sc = parse_scenario_file(scenario);
  RunOptions options;
  options.overrides = std::move(set);
  options.variants = std::move(variants);
  topt.format = format;
  std::ostringstream out;
  write_trace(out, sc, options, topt);
  return out.str();
}


}  // namespace impsim::test
