// Helpers shared by the tests: run a scenario written inline, run the
// impsim binary and capture what it prints.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <vector>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string>

#include "impsim/reader/read_scenario.h"
#include "impsim/run/run.h"

namespace impsim::test {

// The whole of a file, bytes as they are ("" when it cannot be read).
// The repository (no last slash) and the binary under test, and the two
// scenarios most tests start from.
inline const std::string kSource = IMPSIM_SOURCE_DIR;
inline const std::string kBin = IMPSIM_BINARY;
inline const std::string kNested = kSource + "/scenarios/nested_guards.json";
inline const std::string kSeed = kSource + "/scenarios/seed_incident.json";

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// `s` as one shell word, whatever bytes it holds but NUL.
inline std::string sh_word(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The first ground-truth program (ground_truth_test.cc): k nested scoped guards, then one probe for a
// missing submodule of the scoped package (labelled "probe").
inline constexpr const char* kProbeScenario = R"({
  "impsim": 1, "params": {"k": 1},
  "sys_modules": {"preloaded": ["numpy"], "filler": 200},
  "tree": {"pkg": {"package": true}},
  "program": [
    {"nest": "$k", "guard": {"enable": true, "scope": ["pkg", "other{i}"]}, "body": [
      {"import": "pkg"},
      {"find_spec": "pkg.missing", "label": "probe"}
    ]}
  ]
})";

// The .json files in `dir` (a folder of the source tree), sorted; `recursive`: in its subfolders too.
inline std::vector<std::string> json_files(const std::string& dir, bool recursive = false) {
  std::vector<std::string> out;
  auto add = [&](const std::filesystem::directory_entry& e) {
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  };
  std::string path = std::string(IMPSIM_SOURCE_DIR) + "/" + dir;
  if (recursive)
    for (auto& e : std::filesystem::recursive_directory_iterator(path)) add(e);
  else
    for (auto& e : std::filesystem::directory_iterator(path)) add(e);
  std::sort(out.begin(), out.end());
  return out;
}

// Every scenario shipped under scenarios/, sorted.
// The shipped scenarios of one thread: each runs one schedule to an
// expected end. The zoo's threaded ones (their outcome classes, a hang
// among them) are zoo_test's.
inline std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> out;
  for (const std::string& f : json_files("scenarios", true))
    if (parse_scenario_file(f).threads.empty()) out.push_back(f);
  return out;
}

// The shipped scenarios that use no hook language (scenarios/zoo/ does):
// what the fast engine and the copies representation of the proxy model.
inline std::vector<std::string> shipped_paddle_scenarios() {
  std::vector<std::string> out;
  for (const std::string& f : shipped_scenarios())
    if (!parse_scenario_file(f).hooks.used) out.push_back(f);
  return out;
}

struct Ran {
  Scenario scenario;
  ScenarioRun run;
};

// Loads `json` and runs it. The Scenario must outlive the run, so both are
// returned together (the run points into the scenario).
inline std::unique_ptr<Ran> run_json(const std::string& json, RunOptions options = {}) {
  auto r = std::make_unique<Ran>();
  r->scenario = parse_scenario(json, "inline.json");
  r->run = run_scenario(r->scenario, options);
  return r;
}

inline const VariantRun& variant_run(const ScenarioRun& run, Variant v, size_t sweep = 0) {
  for (auto& r : run.runs)
    if (r.variant == v && r.sweep_index == sweep) return r;
  throw std::runtime_error("no such run");
}

struct Command {
  int status;
  std::string out;
};

// Under AddressSanitizer each process the tests start ends in a leak
// check, about 40 ms of CPU: over the 1,400 commands the C++ tests start,
// a minute of the sanitizer pass. The first command of each test process
// and every 4th after it keep the check (each test case is a process of
// its own, so every test has one); the test processes themselves and the
// commands the Python checks start keep it always. Said in
// test_samples.txt (tests/CMakeLists.txt).
inline void sample_leak_checks() {
#if defined(__SANITIZE_ADDRESS__)
  static const std::string inherited = [] {
    const char* options = std::getenv("ASAN_OPTIONS");
    return std::string(options ? options : "");
  }();
  static size_t started = 0;
  std::string options = inherited;
  if (started++ % 4 != 0) options += (options.empty() ? "" : ":") + std::string("detect_leaks=0");
  setenv("ASAN_OPTIONS", options.c_str(), 1);
#endif
}

// Runs a shell command line (stderr folded into the output).
inline Command shell(const std::string& command) {
  sample_leak_checks();
  std::string cmd = "(" + command + ") 2>&1";
  Command c{0, {}};
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) c.out.append(buf.data(), n);
  int raw = pclose(p);
  c.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return c;
}

// Runs the impsim binary with `args`.
inline Command impsim(const std::string& args) { return shell(std::string(IMPSIM_BINARY) + " " + args); }

// Runs the impsim binary with `args`, checks its exit status and that what
// it prints holds `says`; the run is returned for the checks of its own.
inline Command impsim_says(const std::string& args, int status, const std::string& says) {
  Command c = impsim(args);
  CAPTURE(args);
  CAPTURE(c.out);
  CHECK(c.status == status);
  CHECK(c.out.find(says) != std::string::npos);
  return c;
}

// Under the sanitizers a test whose loop compares answers (two runs of the
// same file, validate against run) runs every `kSanitizerStride`-th item:
// a memory error shows on the first run of a code path, and the Release
// build runs them all. Said in test_samples.txt (tests/CMakeLists.txt).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr size_t kSanitizerStride = 2;
#else
inline constexpr size_t kSanitizerStride = 1;
#endif

// Peak-RSS bounds mean nothing under AddressSanitizer (shadow memory, the
// quarantine): there the memory tests check exit statuses only.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kMemoryMeasurable = false;
#else
inline constexpr bool kMemoryMeasurable = true;
#endif

// Peak resident memory (KB) of `body` run in a forked child, read with
// wait4's rusage: the measure is the child's own, whatever the test
// process has touched before. The child's exit status is returned too.
struct ChildRun {
  int status;
  long peak_rss_kb;
};
template <class F>
ChildRun in_child(F body) {
  pid_t pid = fork();
  if (pid == 0) {
    int status = 0;
    try {
      status = body();
    } catch (...) {
      status = 99;
    }
    _exit(status);
  }
  int raw = 0;
  rusage usage{};
  wait4(pid, &raw, 0, &usage);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, usage.ru_maxrss};
}

// The one folder this test process writes in, under $TMPDIR, removed when
// the process exits: a test run leaves nothing behind. A forked child that
// exits normally leaves it to the process that made it.
inline const std::string& scratch_dir() {
  struct Folder {
    std::string path;
    pid_t owner = getpid();
    Folder() {
      const char* tmp = std::getenv("TMPDIR");
      std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/impsim_test_XXXXXX";
      if (!mkdtemp(templ.data())) throw std::runtime_error("cannot make a scratch folder: " + templ);
      path = templ;
    }
    ~Folder() {
      std::error_code ec;
      if (getpid() == owner) std::filesystem::remove_all(path, ec);
    }
  };
  static const Folder folder;
  return folder.path;
}

// A fresh, empty folder `name` inside scratch_dir().
inline std::string scratch_subdir(const std::string& name) {
  std::string dir = scratch_dir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = scratch_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

struct Split {
  int status;
  std::string out, err;
};

// Runs a shell command line with its standard output and standard error
// apart (standard error through a file: popen gives one pipe).
inline Split shell_split(const std::string& command) {
  static int serial = 0;
  const std::string err_file = write_temp("stderr_" + std::to_string(++serial), "");
  Command c = shell(command + " 2>" + err_file);
  return {c.status, c.out, read_file(err_file)};
}

}  // namespace impsim::test
