// `impsim validate FILE...`: check scenarios without running them.
#include <fmt/format.h>

#include "cli.h"
#include "impsim/loader.h"

namespace impsim::cli {

Action add_validate(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto input = std::make_shared<InputLimits>();
  auto* cmd = app.add_subcommand("validate", "Check scenario files without running them (exit 0; 2 invalid; 3 past a limit)");
  cmd->add_option("files", *files, "Scenario files")->required();
  add_input_limits(cmd, *input);
  cmd->footer("Example:\n  impsim validate scenarios/*.json\n");
  return [files, input, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    int status = kExitOk;
    for (auto& f : *files) {
      int s = guarded(f, [&] {
        Scenario sc = load_scenario_file(f, *input);
        compile_model(sc, {});
        fmt::print("{}: ok ({} tree entries, {} top-level steps)\n", f, sc.tree.size(), sc.program.size());
        return kExitOk;
      });
      if (s != kExitOk && status != kExitLimit) status = s;
    }
    return status;
  };
}

}  // namespace impsim::cli
