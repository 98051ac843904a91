// Everything a Scenario holds, as text, one field after another: Scenario
// has no operator==, and where two readings differ the text shows how. The
// fuzz harness and tests/read_events_test.cc compare the event reader's
// Scenario with the DOM reader's through it.
#pragma once

#include <string>

#include "impsim/scenario/scenario.h"

namespace impsim::fuzz {

std::string scenario_dump(const Scenario& sc);

}  // namespace impsim::fuzz
