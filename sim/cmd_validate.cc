// `impsim validate FILE...`: check scenarios without running them.
#include <fmt/format.h>

#include "impsim/cli.h"
#include "impsim/loader.h"

namespace impsim::cli {

Action add_validate(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("validate", "Check scenario files without running them (exit 0 or 2)");
  cmd->add_option("files", *files, "Scenario files")->required();
  cmd->footer("Example:\n  impsim validate scenarios/*.json\n");
  return [files, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    int status = kExitOk;
    for (auto& f : *files) {
      int s = guarded(f, [&] {
        Scenario sc = load_scenario_file(f);
        compile_model(sc, {});
        fmt::print("{}: ok ({} tree entries, {} top-level steps)\n", f, sc.tree.size(), sc.program.size());
        return kExitOk;
      });
      if (s != kExitOk) status = kExitInvalid;
    }
    return status;
  };
}

}  // namespace impsim::cli
