// What a valid scenario says that is most likely not what its author
// meant: `validate` prints these as warnings (exit status 0), because the
// scenario runs as written and CPython would do the same (a random program
// may call on a module on purpose, to reproduce CPython's KeyError).
#pragma once

#include <string>
#include <vector>

#include "impsim/scenario/scenario.h"

namespace impsim {

struct ScenarioWarning {
  std::string pointer;  // where in the file, as a JSON pointer
  std::string message;  // what, why, and what to write instead
};

// A `call` step reads sys.modules[module]: a call whose module nothing can
// have imported when it runs (no step before it, no module body, no hook,
// no sys_modules entry) can only raise KeyError. The test is generous, so
// that no call that may succeed is named: it counts the parents of what is
// imported, a find_spec's parents, module bodies and hooks whenever they
// may run, and the paddle twin Paddle's finder imports for a torch name.
// A `join` of a thread that no step can have started by then raises
// RuntimeError (threading's "cannot join thread before it is started"):
// named where the program joins before its own first start, with no start
// anywhere else, and wherever a thread nothing starts is joined.
std::vector<ScenarioWarning> scenario_warnings(const Scenario& sc);

}  // namespace impsim
