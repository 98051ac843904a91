// The hook language's part of the reader (docs/scenario-format.md, "Hooks"):
// the top-level keys hooks, finders, meta_path, builtin and real, the
// sys.meta_path steps, and the checks that tie them together.
// read_scenario.cc and read_steps.cc call the functions below; everything
// else about hooks is read here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "impsim/base/json_scan.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/scenario/scenario.h"
#include "impsim/scenario/variant.h"

namespace impsim {

namespace reading {
class Reader;  // reader.h
}

// install, uninstall, insert, append, remove, unload.
bool is_meta_path_step(std::string_view key);
// "install, uninstall, insert, append, remove, unload" for messages.
const char* meta_path_step_list();

// Reads a meta_path step's own keys into `st`; `allowed` gets the keys it
// takes besides its kind, "label" and "repeat".
void read_meta_path_step(const reading::Reader& in, const nlohmann::json& v, const std::string& ptr, const std::string& kind,
                         Step& st, std::vector<std::string_view>& allowed);

// Reads the top-level hook keys, checks every finder id the steps and hooks
// name, and makes `as_is` the default variant of a scenario that uses hooks.
// Runs after "program" and "variants", before "report" and "expect".
void read_hooks(const reading::Reader& in, const nlohmann::json& root, Scenario& sc, bool variants_given);


}  // namespace impsim
