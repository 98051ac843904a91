// The training run of the Release build's profile-guided optimisation
// (cmake/Pgo.cmake): every variant of each file given, at each sweep point,
// on both engines, and once more traced past its cut (a trace's TalliedRun,
// run_mode.h), run by an engine compiled to count its branches. The counts
// it leaves decide how the engine that ships is laid out. It stands below
// the run layer on purpose: that layer links the engine being optimised,
// which cannot come before its own profile.
#include <fmt/format.h>

#include <exception>
#include <optional>

#include "impsim/engine/engine.h"
#include "impsim/model/model.h"
#include "impsim/reader/read_scenario.h"

namespace {

// A trace past its cut: it writes nothing, and has the engine count every
// frequent event in its tally from the start (trace_sink.h).
class CountingSink : public impsim::TraceSink {
 public:
  CountingSink() { tally = &counts_; }

 private:
  impsim::TraceTally counts_;
};

}  // namespace

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
        for (const Variant& v : sc.variants) {
          for (EngineKind kind : {EngineKind::Step, EngineKind::Fast}) {
            Engine e(model, v, EngineLimits{}, kind);
            e.run();
            ++runs;
          }
          CountingSink sink;
          Engine traced(model, v, EngineLimits{});
          traced.set_trace(&sink);
          traced.run();
          ++runs;
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
