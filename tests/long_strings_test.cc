// The longest string a scenario can hold, in every free string field of the
// format: the memory each command takes stays within the bound
// docs/limits.md states for it ("Long strings"). Each scenario is a file of
// about kBytes holding one such string (a field whose string is written
// twice, a key and its use, holds two of half the length); peak RSS of the
// impsim binary is read with wait4's rusage. The figures for 15 MB files and
// every command: bench/long_strings.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "test_util.h"

using namespace impsim;

// Named, not anonymous: the sanitizer build compiles the tests in batches
// (a unity build), where another file's helpers of the same name meet these.
namespace long_strings_test {

// Under AddressSanitizer only the exit statuses are checked: a tenth of it.
constexpr size_t kBytes = test::kMemoryMeasurable ? 2'000'000 : 200'000;
// A forked child starts with the pages of the test process, and its peak
// RSS counts them: the bound is on the growth over the same command on an
// empty scenario, measured the same way, with 8 MB to spare.
constexpr long kSpareKb = 8 * 1024;

struct Kind {
  std::string name;
  std::string text;  // the scenario
  double validate_per_byte;
  double run_per_byte;
  double compare_per_byte;
  int status = 0;  // of each command
  const char* flags = "";
};

std::string hook_scenario(const std::string& hooks, const std::string& finders, const std::string& program,
                          const std::string& more = "") {
  return fmt::format(R"({{"impsim": 1, "tree": {{"m": {{}}}}, "hooks": {{{}}}, "finders": {{{}}}, "program": [{}]{}}})",
                     hooks, finders, program, more);
}

std::string plain_scenario(const std::string& more, const std::string& program = R"({"import": "m", "label": "l"})") {
  return fmt::format(R"({{"impsim": 1, "tree": {{"m": {{}}}}, "program": [{}]{}}})", program, more);
}

std::vector<Kind> all_kinds() {
  const std::string s(kBytes, 'a'), half(kBytes / 2, 'a'), third(kBytes / 3, 'a');
  const std::string serve = R"("claims": {"names": ["m"]}, "find_spec": [{"serve": true}])";
  const std::string h = fmt::format(R"("h": {{{}}})", serve);
  const std::string use = R"({"install": "f"}, {"import": "m", "label": "l"})";
  const std::string optional = R"({"install": "f"}, {"import": "m", "optional": true, "label": "l"})";
  auto pattern = [&](const std::string& p) {
    return hook_scenario(
        fmt::format(R"("h": {{"claims": {{"patterns": ["{}"]}}, "find_spec": [{{"serve": true}}]}})", p),
        R"("f": {"hook": "h"})", optional);
  };
  std::string sets;
  while (sets.size() < kBytes) sets += "[a-z]";
  std::string stars;
  while (stars.size() < kBytes) stars += "a*";
  std::string dotted = "a";
  while (dotted.size() < kBytes) dotted += ".a";
  const char* names = "--max-name-length 1073741824";
  // Bounds in bytes of peak RSS per byte of the file: 20 is the bound of the
  // JSON document and the Scenario; names and the reports have their own
  // (docs/limits.md, "Long strings").
  return {
      {"claims pattern", pattern(s), 20, 20, 20},
      {"claims pattern of sets", pattern(sets), 20, 20, 20},
      {"claims pattern of stars", pattern(stars), 20, 20, 20},
      {"module name", plain_scenario("", fmt::format(R"({{"import": "{}", "optional": true, "label": "l"}})", s)), 20,
       20, 20, 0, names},
      {"tree key", fmt::format(R"({{"impsim": 1, "tree": {{"{0}": {{}}}}, "program": [{{"import": "{0}"}}]}})", half),
       20, 20, 20, 0, names},
      // A name of a million parts: interned at about 45 bytes a byte, and
      // each run's per-name tables; its import stops at --max-body-depth.
      {"dotted module name", plain_scenario("", fmt::format(R"({{"import": "{}", "optional": true}})", dotted)), 50, 70,
       70, 3, names},
      {"guard scope",
       plain_scenario("", fmt::format(R"({{"guard": {{"enable": true, "scope": ["{}"]}}, "body": []}})", s)), 20, 20,
       20, 0, names},
      {"description", plain_scenario(fmt::format(R"(, "description": "{}")", s)), 20, 20, 20},
      {"scenario name", plain_scenario(fmt::format(R"(, "name": "{}")", s)), 20, 20, 20},
      {"$schema", plain_scenario(fmt::format(R"(, "$schema": "{}")", s)), 20, 20, 20},
      // compare's table names a label in a row per counter (seven).
      {"label", plain_scenario("", fmt::format(R"({{"import": "m", "label": "{}"}})", s)), 20, 20, 25},
      {"label in a counter",
       plain_scenario(fmt::format(R"(, "report": [{{"counter": "{}.asks"}}])", half),
                      fmt::format(R"({{"import": "m", "label": "{}"}})", half)),
       20, 20, 20},
      {"report title", plain_scenario(fmt::format(R"(, "report": [{{"counter": "asks", "title": "{}"}}])", s)), 20, 20,
       20},
      {"sweep title",
       plain_scenario(
           fmt::format(R"(, "params": {{"k": 1}}, "sweep": {{"param": "k", "values": [1, 2], "title": "{}"}})", s),
           R"({"import": "m", "label": "l", "repeat": "$k"})"),
       20, 20, 20},
      {"parameter name",
       plain_scenario(fmt::format(R"(, "params": {{"{}": 1}})", half),
                      fmt::format(R"({{"import": "m", "label": "l", "repeat": "${}"}})", half)),
       20, 20, 20},
      // compare runs every hook design (10), each with the final
      // sys.meta_path by id, and its table names the object in each block.
      {"finder id",
       hook_scenario(h, fmt::format(R"("{}": {{"hook": "h"}})", half),
                     fmt::format(R"({{"install": "{}"}}, {{"import": "m", "label": "l"}})", half)),
       20, 20, 25},
      {"hook name",
       hook_scenario(fmt::format(R"("{}": {{{}}})", half, serve), fmt::format(R"("f": {{"hook": "{}"}})", half), use),
       20, 20, 20},
      {"hook in a variant",
       hook_scenario(fmt::format(R"("{}": {{{}}})", third, serve), fmt::format(R"("f": {{"hook": "{}"}})", third), use,
                     fmt::format(R"(, "variants": ["as_is", "skip_self:{}"])", third)),
       20, 20, 20},
      {"loader attribute",
       hook_scenario(fmt::format(R"("h": {{{}, "loader": {{"wrap": "set_attribute", "attribute": "{}"}}}})", serve, s),
                     R"("f": {"hook": "h"})", use),
       20, 20, 20},
      // Refused: the message quotes the key (twice: its pointer and its name).
      {"unknown key", plain_scenario(fmt::format(R"(, "{}": 1)", s)), 25, 25, 25, 2},
  };
}

constexpr size_t kKinds = 20;

// The i-th kind alone: the others' text is freed before any command runs,
// since a forked child starts with the pages of the process it copies.
Kind kind(size_t i) {
  std::vector<Kind> all = all_kinds();
  REQUIRE(all.size() == kKinds);
  return std::move(all[i]);
}

// Peak RSS (KB) and exit status of the impsim binary run with `args`
// (split at spaces), its output thrown away.
test::ChildRun impsim_peak(const std::string& args) {
  std::vector<std::string> words{IMPSIM_BINARY};
  for (size_t at = 0; at < args.size();) {
    size_t end = args.find(' ', at);
    if (end == std::string::npos) end = args.size();
    if (end > at) words.push_back(args.substr(at, end - at));
    at = end + 1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int raw = 0;
  rusage usage{};
  wait4(pid, &raw, 0, &usage);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, usage.ru_maxrss};
}

// Each command's growth over an empty scenario, checked for every kind.
void check_commands(const std::vector<std::string>& commands) {
  malloc_trim(0);
  const std::string empty = test::write_temp("empty.json", plain_scenario(""));
  std::vector<long> base;
  for (const std::string& command : commands) base.push_back(impsim_peak(command + " " + empty).peak_rss_kb);
  for (size_t i = 0; i < kKinds; ++i) {
    std::string path, flags, name;
    double bytes = 0;
    std::vector<double> per_byte;
    int status = 0;
    {
      Kind k = kind(i);
      path = test::write_temp("long_string.json", k.text);
      bytes = static_cast<double>(k.text.size());
      for (const std::string& command : commands)
        per_byte.push_back(command == "validate" ? k.validate_per_byte
                           : command == "run"    ? k.run_per_byte
                                                 : k.compare_per_byte);
      status = k.status;
      flags = k.flags;
      name = k.name;
    }
    malloc_trim(0);  // the freed text: not the child's to count
    for (size_t c = 0; c < commands.size(); ++c) {
      const std::string& command = commands[c];
      CAPTURE(name);
      CAPTURE(command);
      const test::ChildRun r = impsim_peak(fmt::format("{} {} {}", command, path, flags));
      // validate stops at nothing a run reaches (the dotted name's limit).
      CHECK(r.status == (command == "validate" && status == 3 ? 0 : status));
      const long growth_kb = r.peak_rss_kb - base[c];
      const long bound_kb = kSpareKb + static_cast<long>(per_byte[c] * bytes / 1024);
      CAPTURE(growth_kb);
      CAPTURE(bound_kb);
      if (std::getenv("LONG_STRINGS_SHOW"))
        fmt::print(stderr, "{:28} {:9} {:7} KB (bound {} KB)\n", name, command, growth_kb, bound_kb);
      if (test::kMemoryMeasurable) CHECK(growth_kb <= bound_kb);
    }
  }
}


TEST_CASE("the longest string of every field: validate and run stay within their bound per byte of the file") {
  check_commands({"validate", "run"});
}

TEST_CASE("the longest string of every field: compare stays within its bound per byte of the file") {
  check_commands({"compare"});
}

TEST_CASE("a long finder id is not copied per label: labels x the id's length is not memory") {
  // 1,000 labelled imports under a hook whose object has a 100 KB id (a
  // 234 KB file): each label kept its own copy of sys.meta_path's ids, per
  // run, so run took 107 MB and compare (10 designs) 995 MB.
  const std::string id(100'000, 'f');
  std::string program = fmt::format(R"({{"install": "{}"}})", id);
  for (int i = 0; i < 1000; ++i) program += fmt::format(R"(, {{"import": "m", "label": "l{}"}})", i);
  const std::string path = test::write_temp(
      "labels_and_id.json", hook_scenario(R"("h": {"claims": {"names": ["m"]}, "find_spec": [{"serve": true}]})",
                                          fmt::format(R"("{}": {{"hook": "h"}})", id), program));
  malloc_trim(0);
  const std::string empty = test::write_temp("empty.json", plain_scenario(""));
  for (const char* command : {"run", "compare"}) {
    CAPTURE(command);
    const long base = impsim_peak(fmt::format("{} {}", command, empty)).peak_rss_kb;
    const test::ChildRun r = impsim_peak(fmt::format("{} {}", command, path));
    CHECK(r.status == 0);
    CAPTURE(r.peak_rss_kb - base);
    if (test::kMemoryMeasurable) CHECK(r.peak_rss_kb - base < 40 * 1024);
  }
  // run --json names each label's objects, the proxy P among them (by the
  // name kPredefinedFinders gives it, not the run's empty slot for it).
  const std::string small = test::write_temp(
      "labels_and_p.json",
      hook_scenario(R"("h": {"claims": {"names": ["m"]}, "find_spec": [{"serve": true}]})", R"("f": {"hook": "h"})",
                    R"({"install": "f", "label": "one"}, {"insert": "P", "at": 0, "label": "two"})"));
  test::Command r = test::impsim("run --json " + small);
  CAPTURE(r.out);
  CHECK(r.status == 0);
  CHECK(r.out.find("\"meta_path\": [\n            \"f\",") != std::string::npos);
  CHECK(r.out.find("\"meta_path\": [\n            \"P\",\n            \"f\",") != std::string::npos);
}

}  // namespace long_strings_test
