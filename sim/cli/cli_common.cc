#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <new>
#include <set>

#include "cli.h"
#include "impsim/base/escape.h"
#include "impsim/base/number.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/report/report.h"
#include "usage_errors.h"

namespace impsim::cli {

// A message is one line of impsim's wording around values from the file,
// its name or the command line (a key, a name, an argument): the whole
// line is escaped for the terminal, which leaves impsim's wording as it is.
void print_error(const std::string& message) { fmt::print(stderr, "impsim: error: {}\n", terminal_text(message)); }

// events / seconds to three digits. The fast engine's counts pass the
// range of a double (k = 200 replays about 10^376 events): the rate is then
// taken from the count's digits, "6.43e+375", never "inf".
std::string rate_text(const Count& events, double seconds) {
  if (seconds <= 0) return "0";
  const double rate = events.to_double() / seconds;
  if (std::isfinite(rate)) return fmt::format("{:.3g}", rate);
  const std::string digits = events.text();
  const double lead = std::stod(digits.substr(0, 1) + "." + digits.substr(1, 16));
  double mantissa = lead / seconds;
  int exponent = static_cast<int>(digits.size()) - 1;
  while (mantissa >= 10) mantissa /= 10, ++exponent;
  while (mantissa < 1) mantissa *= 10, --exponent;
  std::string m = fmt::format("{:.3g}", mantissa);
  if (m == "10") m = "1", ++exponent;
  return fmt::format("{}e+{}", m, exponent);
}

void print_stats(const std::vector<VariantRun>& runs, EngineKind engine) {
  for (const VariantRun& r : runs) {
    std::string params;
    for (auto& [k, v] : r.params) params += fmt::format(" {}={}", k, v);
    fmt::print(stderr,
               "stats: {}{}: engine {:.6f} s, cpu {:.6f} s, {} events (asks + toggles), {} events/s, {} "
               "lookups{}\n",
               variant_name(r.variant), params, r.seconds, r.cpu_seconds, grouped(r.events),
               rate_text(r.events, r.seconds), grouped(r.counters.lookups),
               engine == EngineKind::Fast ? fmt::format(", {} asks answered from memory", r.memo_hits) : "");
  }
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!name.empty()) out.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

namespace {

// CLI11 turns "-1" into 18446744073709551615 for an unsigned option without
// a word, and a negative limit would then mean "no limit": every integer
// flag is checked on its text first (base/number.h), against the range
// that keeps it safe.
CLI::Validator integer_in(int64_t min, uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        std::string why;
        return parse_integer(text, min, max, &why) ? "" : why;
      },
      fmt::format("{}..{}", min, max));
}

template <class T>
void add_limit(CLI::App* cmd, const std::string& flag, T& value, int64_t min, uint64_t max, const std::string& help) {
  cmd->add_option(flag, value, fmt::format("{} ({}..{})", help, min, max))
      ->capture_default_str()
      ->check(integer_in(min, max));
}

constexpr uint64_t kU64Max = UINT64_MAX;
constexpr uint64_t kI64Max = INT64_MAX;

}  // namespace

CLI::Option* add_integer_option(CLI::App* cmd, const std::string& flag, uint64_t& value, int64_t min, uint64_t max,
                                const std::string& help) {
  return cmd->add_option(flag, value, help)->check(integer_in(min, max));
}
CLI::Option* add_integer_option(CLI::App* cmd, const std::string& flag, int& value, int64_t min, uint64_t max,
                                const std::string& help) {
  return cmd->add_option(flag, value, help)->check(integer_in(min, max));
}
CLI::Option* add_integer_option(CLI::App* cmd, const std::string& flag, std::optional<uint64_t>& value, int64_t min,
                                uint64_t max, const std::string& help) {
  return cmd->add_option(flag, value, help)->check(integer_in(min, max));
}

CLI::Option* add_list_option(CLI::App* cmd, const std::string& names, std::vector<std::string>& values,
                             const std::string& help) {
  return cmd->add_option(names, values, help)->delimiter(',')->allow_extra_args(false);
}

void RunFlags::add(CLI::App* cmd, const std::string& variant_help) {
  cmd->add_option(
         "--set", sets,
         "Override a parameter, NAME=N (repeatable, one NAME once); setting the swept one runs that value only")
      ->allow_extra_args(false);
  complete_with(
      add_list_option(cmd, "--variant,--variants", variants,
                      variant_help.empty() ? "Run these variants (repeatable, or comma-separated): " + variant_list() +
                                                 "; these are the designs of Paddle's finder P, which a scenario with "
                                                 "hooks runs only where P takes part; the hook designs: " +
                                                 hook_variant_list() + " (default: the scenario's; with hooks, as_is)"
                                           : variant_help),
      design_names());
  one_of(cmd->add_option("--engine", engine,
                         "step: replay every event (the reference); fast: answer asks seen before from memory, exact "
                         "counts far past what stepping can reach (k = 20 and beyond)"),
         "engine", {"step", "fast"})
      ->capture_default_str();
  one_of(cmd->add_option("--revision", revision,
                         "The finder's upstream revision: b52ce17 (default) or 04efefd; overrides the scenario's "
                         "\"revision\" (docs/model.md)"),
         "revision", revision_names());
  one_of(cmd->add_option("--cpython", cpython,
                         "The CPython whose importlib runs the finder: 3.9 to 3.15, or a release such as 3.13.16 "
                         "(default 3.11); overrides the scenario's \"cpython\". From 3.14 (and 3.13.16) _find_spec "
                         "iterates a snapshot of sys.meta_path (docs/model.md, \"CPython versions\")"),
         "CPython version", cpython_names(), [](const std::string& s) { return parse_cpython(s).has_value(); },
         "or a release X.Y.P of one of them (3.13.5, 3.15.0rc1)");
  cmd->add_flag("--stats", stats,
                "Print each run's engine time (wall and CPU), events (asks + toggles), events per second and "
                "lookups on standard error; the times of trace and explore include writing their output as the "
                "run goes");
  add_limit(cmd, "--max-events", run.limits.max_events, 0, kU64Max,
            "Stop (exit 3) after this many simulated finder asks + toggles, replayed ones included (default: "
            "500000000 with --engine step, no bound with --engine fast)");
  add_limit(cmd, "--max-work", run.limits.max_work, 0, kU64Max,
            "Stop (exit 3) after this many asks + toggles actually stepped, not answered from memory (default: "
            "no bound with --engine step, where --max-events bounds the same events; 500000000 with --engine "
            "fast)");
  // The depth limits bound the C++ stack too: the engine's thread has room
  // for 1000 of each (docs/limits.md).
  add_limit(cmd, "--max-lookup-depth", run.limits.max_lookup_depth, 1, 1000, "Stop (exit 3) past this lookup nesting");
  add_limit(cmd, "--max-body-depth", run.limits.max_body_depth, 1, 1000,
            "Stop (exit 3) past this nesting of module bodies, calls and parent imports");
  add_limit(cmd, "--max-guard-depth", run.limits.max_guard_depth, 1, 10000,
            "Stop (exit 3) past this many guards open at once, nest levels included");
  add_limit(cmd, "--max-steps", run.limits.max_steps, 0, kU64Max,
            "Stop (exit 3) after this many scenario steps (repeats counted)");
  add_limit(cmd, "--max-objects", run.limits.max_objects, 0, 1'000'000,
            "Stop (exit 3) when a hook scenario has more finder objects, declared and made by \"new\" steps");
  add_limit(cmd, "--max-meta-path", run.limits.max_meta_path, 1, 1'000'000,
            "Stop (exit 3) when sys.meta_path would hold more finders (hook scenarios)");
  add_limit(cmd, "--max-repeat", run.model_limits.max_repeat, 0, kI64Max, "Stop (exit 3) when a \"repeat\" is larger");
  add_limit(cmd, "--max-nest", run.model_limits.max_nest, 0, 10000, "Stop (exit 3) when a guard's \"nest\" is larger");
  add_limit(cmd, "--max-filler", run.model_limits.max_filler, 0, kI64Max,
            "Stop (exit 3) when sys_modules.filler is larger");
  // About 190 bytes a name: the maximum is about 2 GB.
  add_limit(cmd, "--max-scope-names", run.model_limits.max_scope_names, 0, 10'000'000,
            "Stop (exit 3) when the scopes, every nest level counted, name more modules");
}

void add_input_limits(CLI::App* cmd, InputLimits& limits) {
  add_limit(cmd, "--max-file-bytes", limits.max_file_bytes, 1, kMaxFileBytesCeiling,
            "Refuse (exit 3) a scenario file larger than this");
  add_limit(cmd, "--max-json-depth", limits.max_json_depth, 1, 1000, "Refuse (exit 3) JSON nested deeper than this");
  // A tree entry is at least 7 bytes ("a":{},), so the file limit bounds
  // the tree long before TreeId (int32) could overflow.
  add_limit(cmd, "--max-tree-entries", limits.max_tree_entries, 0, uint64_t{INT32_MAX},
            "Refuse (exit 3) a tree with more entries");
  add_limit(cmd, "--max-name-length", limits.max_name_length, 1, kMaxFileBytesCeiling,
            "Refuse (exit 3) a module name longer than this many characters");
  add_limit(cmd, "--max-sweep-values", limits.max_sweep_values, 1, kMaxSweepValuesCeiling,
            "Refuse (exit 3) a sweep (the scenario's, or sweep --values) with more values");
}

RunOptions RunFlags::options() const {
  RunOptions o = run;
  std::set<std::string> seen;
  for (const std::string& s : sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("<command line>", fmt::format("--set {}: expected NAME=N, such as --set k=4", s));
    std::string name = s.substr(0, eq), value = s.substr(eq + 1);
    if (!seen.insert(name).second)
      throw UsageError("<command line>", fmt::format("--set {}: {} is set twice; give each parameter once", s, name));
    std::string why;
    const std::optional<int64_t> v = parse_integer_as<int64_t>(value, INT64_MIN, INT64_MAX, &why);
    if (!v) throw UsageError("<command line>", fmt::format("--set {}: {}", s, why));
    o.overrides[name] = *v;
  }
  o.variants = variants;
  if (!revision.empty()) o.revision = parse_revision(revision);
  if (!cpython.empty()) o.cpython = parse_cpython(cpython);
  o.engine = engine == "fast" ? EngineKind::Fast : EngineKind::Step;
  return o;
}

namespace {


ErrorInfo info_of(const InputError& e, std::string kind, int status) {
  ErrorInfo i{std::move(kind), e.file, e.what(), e.pointer, 0, 0, "", status};
  // A UsageError has no place in a file: its position is not made up.
  if (!dynamic_cast<const UsageError*>(&e)) {
    i.line = e.pos.line;
    i.column = e.pos.column;
  }
  return i;
}

}  // namespace

int guarded(const std::string& file, const std::function<int()>& body, Sink* sink,
            const std::shared_ptr<const std::string>* text) {
  // Says why on standard error, under GitHub Actions as an annotation too,
  // and under --format json also as the JSON error object on standard
  // output; of the file's report it leaves nothing (Sink::hold).
  auto fail = [sink](const ErrorInfo& info, Sink* to) {
    if (sink) sink->drop_held();
    return tell_error(info, to);
  };
  try {
    return body();
  } catch (const InputLimitError& e) {
    ErrorInfo i = info_of(e, "limit", kExitLimit);
    i.limit = e.limit;
    return fail(i, sink);
  } catch (const UsageError& e) {
    return fail(info_of(e, "usage", kExitInvalid), sink);
  } catch (const InputError& e) {
    return fail(info_of(e, "invalid", kExitInvalid), sink);
  } catch (const OutputError& e) {
    return fail({"output", file, e.what(), "", 0, 0, "", kExitOutput}, sink);
  } catch (const ModelLimitError& e) {
    // The step past the limit, by line and column when the text is known,
    // as an invalid scenario's message places its error.
    ErrorInfo i{"limit", file, "", e.pointer, 0, 0, e.limit, kExitLimit};
    std::string where = file;
    if (text && *text && !e.pointer.empty()) {
      SourcePos pos = JsonSource(**text).position_of(e.pointer);
      i.line = pos.line;
      i.column = pos.column;
      where += fmt::format(":{}:{}", pos.line, pos.column);
    }
    i.message = fmt::format("{}: {}", where, e.what());
    return fail(i, sink);
  } catch (const ResourceError& e) {
    // A stack or another resource a run needs could not be had: nothing of
    // the run is reported.
    return fail({"memory", file, fmt::format("{}: {}", file, e.what()), "", 0, 0, "", kExitLimit}, sink);
  } catch (const std::bad_alloc&) {
    // The limits bound memory by the input's size (docs/limits.md), but
    // their ceilings can still ask for more than a machine (or ulimit -v)
    // gives: say so, rather than abort.
    return fail({"memory", file,
                 fmt::format("{}: out of memory: the scenario and the limits ask for more memory than is available; "
                             "lower --max-file-bytes or the limit that the scenario reaches",
                             file),
                 "", 0, 0, "", kExitLimit},
                sink);
  }
}

}  // namespace impsim::cli
