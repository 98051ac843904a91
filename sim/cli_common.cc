#include <fmt/format.h>

#include "impsim/cli.h"
#include "impsim/loader.h"

namespace impsim::cli {

void print_error(const std::string& message) { fmt::print(stderr, "impsim: error: {}\n", message); }

void RunFlags::add(CLI::App* cmd, bool with_variant) {
  cmd->add_option("--set", sets, "Override a parameter, NAME=N (repeatable); setting the swept one runs that value only");
  if (with_variant)
    cmd->add_option("--variant", variants, "Run this variant (repeatable): before, after (default: the scenario's)");
  cmd->add_option("--engine", engine,
                  "step: replay every event (the reference); fast: answer asks seen before from memory, exact "
                  "counts far past what stepping can reach (k = 20 and beyond)")
      ->check(CLI::IsMember({"step", "fast"}))
      ->capture_default_str();
  cmd->add_option("--revision", revision,
                  "The finder's upstream revision: b52ce17 (default) or 04efefd; overrides the scenario's "
                  "\"revision\" (docs/model.md)")
      ->check(CLI::IsMember({"b52ce17", "04efefd"}));
  cmd->add_option("--cpython", cpython,
                  "The CPython whose importlib runs the finder: 3.9 to 3.14 (default 3.11); overrides the "
                  "scenario's \"cpython\". 3.14 iterates a snapshot of sys.meta_path")
      ->check(CLI::IsMember({"3.9", "3.10", "3.11", "3.12", "3.13", "3.14"}));
  cmd->add_option("--max-events", run.limits.max_events,
                  "Stop (exit 3) after this many simulated finder asks + toggles, replayed ones included (default: "
                  "500000000 with --engine step, no bound with --engine fast)");
  cmd->add_option("--max-work", run.limits.max_work,
                  "Stop (exit 3) after this many asks + toggles actually stepped, not answered from memory (default: "
                  "no bound with --engine step, where --max-events bounds the same events; 500000000 with --engine "
                  "fast)");
  // The depth limits bound the C++ stack too: 1000 is safe with 8 MiB of
  // stack even under AddressSanitizer (docs/limits.md).
  cmd->add_option("--max-lookup-depth", run.limits.max_lookup_depth, "Stop (exit 3) past this lookup nesting (1-1000)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--max-body-depth", run.limits.max_body_depth,
                  "Stop (exit 3) past this nesting of module bodies and calls (1-1000)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--max-guard-depth", run.limits.max_guard_depth,
                  "Stop (exit 3) past this many guards open at once, nest levels included (1-10000)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--max-steps", run.limits.max_steps, "Stop (exit 3) after this many scenario steps (repeats counted)")
      ->capture_default_str();
  cmd->add_option("--max-repeat", run.model_limits.max_repeat, "Stop (exit 3) when a \"repeat\" is larger")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-nest", run.model_limits.max_nest, "Stop (exit 3) when a guard's \"nest\" is larger")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{10000}));
  cmd->add_option("--max-filler", run.model_limits.max_filler, "Stop (exit 3) when sys_modules.filler is larger")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
}

void add_input_limits(CLI::App* cmd, InputLimits& limits) {
  cmd->add_option("--max-file-bytes", limits.max_file_bytes, "Refuse (exit 3) a scenario file larger than this")
      ->capture_default_str();
  cmd->add_option("--max-json-depth", limits.max_json_depth, "Refuse (exit 3) JSON nested deeper than this (1-1000)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--max-tree-entries", limits.max_tree_entries, "Refuse (exit 3) a tree with more entries")
      ->capture_default_str();
  cmd->add_option("--max-name-length", limits.max_name_length, "Refuse (exit 3) a module name longer than this")
      ->capture_default_str();
}

RunOptions RunFlags::options() const {
  RunOptions o = run;
  for (const std::string& s : sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("<command line>", {}, "", fmt::format("--set {}: expected NAME=N, such as --set k=4", s));
    std::string name = s.substr(0, eq), value = s.substr(eq + 1);
    try {
      size_t used = 0;
      long long v = std::stoll(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
      o.overrides[name] = v;
    } catch (const std::exception&) {
      throw InputError("<command line>", {}, "", fmt::format("--set {}: \"{}\" is not an integer", s, value));
    }
  }
  o.variants = variants;
  if (!revision.empty()) o.revision = parse_revision(revision);
  if (!cpython.empty()) o.cpython = parse_cpython(cpython);
  o.engine = engine == "fast" ? EngineKind::Fast : EngineKind::Step;
  return o;
}

int guarded(const std::string& file, const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputLimitError& e) {
    print_error(e.what());
    return kExitLimit;
} catch (const InputError& e) {
    print_error(e.what());
    return kExitInvalid;
  } catch (const OutputError& e) {
    print_error(e.what());
    return kExitOutput;
  } catch (const ModelLimitError& e) {
    print_error(fmt::format("{}: at {}: limit {} reached: {}", file, e.pointer, e.limit, e.detail));
    return kExitLimit;
  }
}

}  // namespace impsim::cli
