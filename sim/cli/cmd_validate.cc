// `impsim validate FILE...`: check scenarios without running them.
#include <fmt/format.h>

#include "cli.h"
#include "impsim/loader.h"
#include "impsim/version.h"

namespace impsim::cli {

Action add_validate(CLI::App& app) {
  struct State {
    std::vector<std::string> files;
    OutputFlags out;
    InputLimits input;
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand("validate", "Check scenario files without running them (exit 0; 2 invalid; 3 past a limit)");
  cmd->add_option("files", st->files, "Scenario files; \"-\" reads standard input")->required();
  st->out.add(cmd, "text, json or markdown", {}, /*big_as_strings=*/false);
  add_input_limits(cmd, st->input);
  cmd->footer("Example:\n  impsim validate scenarios/*.json\n");
  return [st, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    Sink sink = st->out.sink();
    int status = kExitOk;
    // validate's files are one list, not reports one after another: no blank line between them.
    sink.files_hint(st->files.size());
    for (auto& f : st->files) {
      int s = guarded(
          f,
          [&] {
            Scenario sc = load_scenario_file(f, st->input);
            compile_model(sc, {});
            if (sink.format == Format::Json) {
              nlohmann::ordered_json j;
              j["impsim"] = 1;
              j["version"] = impsim_version();
              j["file"] = f;
              j["ok"] = true;
              j["tree_entries"] = sc.tree.size();
              j["steps"] = sc.program.size();
              j["exit_status"] = 0;
              sink.json(j);
            } else {
              std::string line = fmt::format("{}: ok ({} tree entries, {} top-level steps)\n", f, sc.tree.size(), sc.program.size());
              sink.text(sink.format == Format::Markdown ? "- " + line : line);
            }
            return kExitOk;
          },
          &sink);
      if (s != kExitOk && status != kExitLimit) status = s;
    }
    sink.finish(status);
    return status;
  };
}

}  // namespace impsim::cli
