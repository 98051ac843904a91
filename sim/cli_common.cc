#include <fmt/format.h>

#include "impsim/cli.h"
#include "impsim/loader.h"

namespace impsim::cli {

void print_error(const std::string& message) { fmt::print(stderr, "impsim: error: {}\n", message); }

void RunFlags::add(CLI::App* cmd, bool with_variant) {
  cmd->add_option("--set", sets, "Override a parameter, NAME=N (repeatable); setting the swept one runs that value only");
  if (with_variant)
    cmd->add_option("--variant", variants, "Run this variant (repeatable): before, after (default: the scenario's)");
  cmd->add_option("--max-events", run.limits.max_events, "Stop (exit 3) after this many simulated finder asks + toggles")
      ->capture_default_str();
  cmd->add_option("--max-lookup-depth", run.limits.max_lookup_depth, "Stop (exit 3) past this lookup nesting")
      ->capture_default_str();
  cmd->add_option("--max-body-depth", run.limits.max_body_depth,
                  "Stop (exit 3) past this nesting of module bodies and calls")
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
  return o;
}

int guarded(const std::string& file, const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    print_error(e.what());
    return kExitInvalid;
  } catch (const ModelLimitError& e) {
    print_error(fmt::format("{}: at {}: limit {} reached: {}", file, e.pointer, e.limit, e.detail));
    return kExitLimit;
  }
}

}  // namespace impsim::cli
