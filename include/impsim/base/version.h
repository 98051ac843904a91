// impsim's version, for --version and for the reports that say what
// produced them (the JSON reports' "version").
#pragma once

namespace impsim {

// "0.1.0": CMakeLists.txt's project(VERSION), set when sim/base/version.cc compiles.
const char* impsim_version();

}  // namespace impsim
