// The training run of the Release build's profile-guided optimisation
// (cmake/Pgo.cmake): every variant of each file given, at each sweep point,
// on both engines, run by an engine compiled to count its branches. The
// counts it leaves decide how the engine that ships is laid out. It stands
// below the run layer on purpose: that layer links the engine being
// optimised, which cannot come before its own profile.
#include <fmt/format.h>

#include <exception>
#include <optional>

#include "impsim/engine/engine.h"
#include "impsim/model/model.h"
#include "impsim/reader/read_scenario.h"

int main(int argc, char** argv) {
  using namespace impsim;
  size_t runs = 0;
  for (int i = 1; i < argc; ++i) {
    try {
      const Scenario sc = parse_scenario_file(argv[i]);
      std::vector<Params> points{{}};
      if (sc.sweep) {
        points.clear();
        for (int64_t v : sc.sweep->values) points.push_back({{sc.sweep->param, v}});
      }
      for (const Params& p : points) {
        const Model model = compile_model(sc, p);
        for (const std::string& name : sc.variants) {
          const std::optional<Variant> v = parse_variant(name);
          if (!v) continue;
          for (EngineKind kind : {EngineKind::Step, EngineKind::Fast}) {
            Engine e(model, *v, EngineLimits{}, kind);
            e.run();
            ++runs;
          }
        }
      }
    } catch (const std::exception& e) {
      // A shipped scenario that does not run is a broken checkout, not a
      // profile to train on.
      fmt::print(stderr, "impsim_pgo_train: {}: {}\n", argv[i], e.what());
      return 1;
    }
  }
  fmt::print("impsim_pgo_train: {} files, {} runs\n", argc - 1, runs);
  return 0;
}
