// Safe to run on a stranger's scenario: what impsim writes and reads.
// --bless and every output flag replace a file whole, through a fresh
// temporary, never through a planted link; an output never destroys an
// input; --bless writes what loads; a file is read once (a FIFO works).
// Each case runs the binary on files made here; none depends on
// permissions, so they hold as root (CI) too.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_util.h"

using impsim::test::kSource;
using impsim::test::kBin;

using namespace impsim;
namespace fs = std::filesystem;

namespace {



void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A folder of its own per test, removed after it.
struct Folder {
  fs::path dir;
  explicit Folder(const std::string& name)
      : dir(fs::temp_directory_path() / ("impsim_files_" + std::to_string(getpid()) + "_" + name)) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Folder() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
  // The names in the folder: a leftover temporary shows here.
  std::set<std::string> names() const {
    std::set<std::string> out;
    for (auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
    return out;
  }
};

// nested_guards with one wrong expectation, so that --bless has a value to rewrite.
std::string wrong_nested() {
  std::string text = impsim::test::read_file(kSource + "/scenarios/nested_guards.json");
  size_t at = text.find("[1, 4, 15, 64]");
  REQUIRE(at != std::string::npos);
  return text.replace(at, 14, "[1, 4, 15, 65]");
}
const std::string kNestedText = impsim::test::read_file(kSource + "/scenarios/nested_guards.json");

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("--bless never writes through a planted temporary name, keeps the mode, leaves no temporary") {
  Folder d("bless_planted");
  std::string s = d / "s.json", victim = d / "victim";
  write(s, wrong_nested());
  ::chmod(s.c_str(), 0600);
  write(victim, "the user's file\n");
  // The name the temporary once had, planted as a link (a pull request can carry one).
  fs::create_symlink(victim, s + ".impsim-bless.tmp");
  auto r = test::impsim("run " + s + " --bless");
  CAPTURE(r.out);
  CHECK(r.status == 0);
  CHECK(impsim::test::read_file(victim) == "the user's file\n");
  CHECK(impsim::test::read_file(s) == kNestedText);
  CHECK_FALSE(fs::is_symlink(s));
  CHECK(mode_of(s) == 0600);
  CHECK(d.names() == std::set<std::string>{"s.json", "s.json.impsim-bless.tmp", "victim"});
}

TEST_CASE("--bless on a symbolic link rewrites its target and keeps the link, and says so") {
  Folder d("bless_link");
  std::string target = d / "real.json", link = d / "link.json";
  write(target, wrong_nested());
  fs::create_symlink("real.json", link);
  auto r = test::impsim("run " + link + " --bless");
  CAPTURE(r.out);
  CHECK(r.status == 0);
  CHECK(fs::is_symlink(link));
  CHECK(impsim::test::read_file(target) == kNestedText);
  CHECK(r.out.find("blessed (the link's target, " + fs::canonical(target).string() + "): 1 value rewritten") !=
        std::string::npos);
}

TEST_CASE("--bless refuses what is not a regular file, before anything runs") {
  Folder d("bless_special");
  std::string fifo = d / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // No writer: a read would block, so the refusal must come first (timeout turns a hang into a failure).
  auto f = test::shell("timeout 60 " + kBin + " run " + fifo + " --bless");
  CAPTURE(f.out);
  CHECK(f.status == 2);
  CHECK(f.out.find("is a pipe or FIFO, not a regular file") != std::string::npos);
  CHECK(f.out.find("nothing was run") != std::string::npos);
  // /dev/stdin on a pipe: a link to /proc/self/fd/0 must not become a file.
  // A link of the test's own, like /dev/stdin: a regression must not replace
  // the system's (root can).
  std::string stdin_link = d / "stdin";
  fs::create_symlink("/proc/self/fd/0", stdin_link);
  auto in = test::shell("cat " + kSource + "/scenarios/nested_guards.json | timeout 60 " + kBin + " run " + stdin_link +
                        " --bless");
  CAPTURE(in.out);
  CHECK(in.status == 2);
  CHECK(in.out.find("is a pipe or FIFO, not a regular file") != std::string::npos);
  CHECK(fs::is_symlink(stdin_link));
  auto dev = test::impsim("run /dev/null --bless");
  CHECK(dev.status == 2);
  CHECK(dev.out.find("is a character device") != std::string::npos);
  auto dir = test::impsim("run " + d.dir.string() + " --bless");
  CHECK(dir.status == 2);
  CHECK(dir.out.find("a folder with no .json file under it") != std::string::npos);
  CHECK(d.names() == std::set<std::string>{"fifo.json", "stdin"});
}

TEST_CASE("--bless refuses a file with several hard links rather than split them") {
  Folder d("bless_hardlink");
  std::string a = d / "a.json", b = d / "b.json";
  write(a, wrong_nested());
  fs::create_hard_link(a, b);
  auto r = test::impsim("run " + a + " --bless");
  CAPTURE(r.out);
  CHECK(r.status == 2);
  CHECK(r.out.find("has 2 hard links") != std::string::npos);
  CHECK(fs::hard_link_count(a) == 2);
  CHECK(impsim::test::read_file(a) == wrong_nested());
}

TEST_CASE("--bless on a full disk: exit 4 saying what failed, the file as it was, no temporary left") {
  Folder d("bless_full");
  std::string s = d / "s.json";
  write(s, wrong_nested());
  // A file size limit makes every write past 512 bytes fail (EFBIG) as a
  // full disk would (ENOSPC), for root too; SIGXFSZ ignored so that the
  // write returns the error instead of killing the process.
  auto r = test::shell("trap '' XFSZ; ulimit -f 1; " + kBin + " run " + s + " --bless --json");
  CAPTURE(r.out);
  CHECK(r.status == 4);
  CHECK(r.out.find("--bless " + s + ": write failed: File too large; " + s + " is as it was") != std::string::npos);
  CHECK(r.out.find("\"kind\": \"output\"") != std::string::npos);
  CHECK(impsim::test::read_file(s) == wrong_nested());
  CHECK(d.names() == std::set<std::string>{"s.json"});
}

TEST_CASE("an output that is an input is refused before anything is opened") {
  Folder d("output_input");
  std::string s = d / "s.json";
  write(s, kNestedText);
  fs::create_hard_link(s, d / "hard.json");
  for (std::string args : {"trace " + s + " --set k=1 -o " + s, "trace " + s + " --set k=1 -o " + d / "./s.json",
                           "trace " + s + " --set k=1 -o " + d / "hard.json", "explore " + s + " -o " + s,
                           "sweep " + s + " --param k --values 1..2 --svg " + s}) {
    CAPTURE(args);
    auto r = test::impsim(args);
    CAPTURE(r.out);
    CHECK(r.status == 2);
    CHECK(impsim::test::read_file(s) == kNestedText);
  }
  auto r = test::impsim("trace " + s + " --set k=1 -o " + s);
  CHECK(r.out.find("-o " + s + ": is the scenario " + s + " (the same file): writing it would destroy the input") !=
        std::string::npos);
  // Standard input read from the file: the same file.
  auto in = test::shell(kBin + " trace - --set k=1 -o " + s + " < " + s);
  CHECK(in.status == 2);
  CHECK(impsim::test::read_file(s) == kNestedText);
}

TEST_CASE("a missing input, or a run stopped before its trace starts, leaves an existing -o file untouched") {
  Folder d("missing_input");
  std::string keep = d / "keep.txt";
  write(keep, "kept\n");
  std::string missing = d / "missing.json";
  auto r = test::impsim("trace " + missing + " -o " + keep);
  CHECK(r.status == 2);
  CHECK(impsim::test::read_file(keep) == "kept\n");
  auto j = test::impsim("trace " + missing + " -o " + keep + " --json 2>/dev/null");
  CHECK(j.status == 2);
  CHECK(nlohmann::json::parse(j.out)["error"]["kind"] == "invalid");
  CHECK(impsim::test::read_file(keep) == "kept\n");
  auto e = test::impsim("explore " + missing + " -o " + keep);
  CHECK(e.status == 2);
  CHECK(impsim::test::read_file(keep) == "kept\n");
  // A scenario stopped before its trace starts (a limit at compile time) leaves it too.
  auto limit = test::impsim("trace " + kSource + "/scenarios/nested_guards.json --set k=5 --max-nest 2 -o " + keep);
  CHECK(limit.status == 3);
  CHECK(impsim::test::read_file(keep) == "kept\n");
  // Under --quiet nothing is written either.
  auto q = test::impsim("trace " + kSource + "/scenarios/nested_guards.json --set k=1 -q -o " + keep);
  CHECK(q.status == 0);
  CHECK(impsim::test::read_file(keep) == "kept\n");
  CHECK(d.names() == std::set<std::string>{"keep.txt"});
}

TEST_CASE("outputs replace a file whole, keep its mode, and never follow a planted link") {
  Folder d("outputs");
  const std::string nested = kSource + "/scenarios/nested_guards.json";
  std::string out = d / "out.txt";
  write(out, "old\n");
  ::chmod(out.c_str(), 0640);
  auto r = test::impsim("trace " + nested + " --set k=1 -o " + out);
  CHECK(r.status == 0);
  CHECK(impsim::test::read_file(out).starts_with("# impsim trace of nested_guards"));
  CHECK(mode_of(out) == 0640);
  CHECK(test::impsim("explore " + nested + " --set k=1 -o " + d / "page.html").status == 0);
  CHECK(impsim::test::read_file(d / "page.html").starts_with("<!DOCTYPE html>"));
  CHECK(test::impsim("sweep " + nested + " --param k --values 1..3 --svg " + d / "chart.svg").status == 0);
  CHECK(impsim::test::read_file(d / "chart.svg").find("<svg") != std::string::npos);
  CHECK(d.names() == std::set<std::string>{"out.txt", "page.html", "chart.svg"});

  // A link in the folder (a pull request can carry one) must not choose the file written.
  std::string victim = d / "victim";
  write(victim, "the user's file\n");
  fs::create_symlink(victim, d / "planted.html");
  for (std::string args : {"trace " + nested + " --set k=1 -o " + d / "planted.html",
                           "explore " + nested + " --set k=1 -o " + d / "planted.html",
                           "sweep " + nested + " --param k --values 1..2 --svg " + d / "planted.html"}) {
    CAPTURE(args);
    auto p = test::impsim(args);
    CAPTURE(p.out);
    CHECK(p.status == 2);
    CHECK(p.out.find("is a symbolic link") != std::string::npos);
    CHECK(impsim::test::read_file(victim) == "the user's file\n");
    CHECK(fs::is_symlink(d / "planted.html"));
  }
  // A folder, or a hard-linked file, is refused too.
  CHECK(test::impsim("trace " + nested + " --set k=1 -o " + d.dir.string()).status == 2);
  fs::create_hard_link(out, d / "out2.txt");
  CHECK(test::impsim("trace " + nested + " --set k=1 -o " + out).status == 2);
  // A device is written as it is; a link to one (/dev/stdout) is followed.
  CHECK(test::impsim("trace " + nested + " --set k=1 -o /dev/null").status == 0);
  auto so = test::impsim("trace " + nested + " --set k=1 -o /dev/stdout");
  CHECK(so.status == 0);
  CHECK(so.out.starts_with("# impsim trace of nested_guards"));
  // Standard output redirected to a file: written through it, where the shell put it.
  std::string redirected = d / "redirected.html";
  CHECK(test::shell(kBin + " explore " + nested + " --set k=1 -o /dev/stdout > " + redirected).status == 0);
  CHECK(impsim::test::read_file(redirected).starts_with("<!DOCTYPE html>"));
}

TEST_CASE("an output that cannot be written is exit 4 and, under --json, the JSON error object") {
  const std::string nested = kSource + "/scenarios/nested_guards.json";
  for (std::string cmd : {"trace", "explore"}) {
    CAPTURE(cmd);
    auto r = test::impsim(cmd + " " + nested + " --set k=1 -o /dev/full --json 2>/dev/null");
    CAPTURE(r.out);
    CHECK(r.status == 4);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["error"]["kind"] == "output");
    CHECK(j["error"]["message"] == "-o /dev/full: write failed: No space left on device");
    CHECK(j["exit_status"] == 4);
  }
  auto svg = test::impsim("sweep " + nested + " --param k --values 1..2 --svg /dev/full --json 2>/dev/null");
  CHECK(svg.status == 4);
  CHECK(nlohmann::json::parse(svg.out)["error"]["kind"] == "output");
  // A FIFO nobody reads: an error, not a hang.
  Folder d("fifo_out");
  REQUIRE(::mkfifo((d / "out").c_str(), 0600) == 0);
  auto f = test::shell("timeout 60 " + kBin + " trace " + nested + " --set k=1 -o " + d / "out");
  CAPTURE(f.out);
  CHECK(f.status == 4);
  CHECK(f.out.find("no process is reading it") != std::string::npos);
}

TEST_CASE("--bless writes what loads: names with quotes and backslashes, counts past 2^64") {
  Folder d("bless_loads");
  std::string q = d / "q.json";
  write(q, R"({
  "impsim": 1,
  "sys_modules": {"preloaded": ["numpy"], "filler": 20},
  "tree": {"pkg": {"package": true}},
  "program": [{"find_spec": "pkg.missing", "label": "a\"b\\c"}],
  "report": [{"counter": "a\"b\\c.lookups"}]
})");
  auto b = test::impsim("run " + q + " --bless");
  CAPTURE(b.out);
  CHECK(b.status == 0);
  auto doc = nlohmann::json::parse(impsim::test::read_file(q));
  CHECK(doc["expect"]["after"]["a\"b\\c.lookups"] == 0);
  CHECK(test::impsim("run " + q).status == 0);

  // k = 40 nested guards: the released finder's count has 49 digits.
  auto nested = nlohmann::json::parse(kNestedText);
  nested.erase("sweep");
  nested.erase("expect");
  nested.erase("$schema");
  nested["params"]["k"] = 40;
  std::string k40 = d / "k40.json";
  write(k40, nested.dump(2));
  auto f = test::impsim("run " + k40 + " --bless --engine fast");
  CAPTURE(f.out);
  CHECK(f.status == 0);
  CHECK(impsim::test::read_file(k40).find("\"probe.lookups\": 2217887688014775253706633418653155893774469751200") != std::string::npos);
  auto again = test::impsim("run " + k40 + " --engine fast --json");
  CHECK(again.status == 0);
  auto j = nlohmann::json::parse(again.out);
  CHECK(j["runs"][0]["expectations"][0]["ok"] == true);
  CHECK(test::impsim("validate " + k40).status == 0);
  // One more and it fails: the count is compared exactly, not as a double.
  std::string text = impsim::test::read_file(k40);
  text.replace(text.find("751200"), 6, "751201");
  write(k40, text);
  CHECK(test::impsim("run " + k40 + " --engine fast").status == 1);
}

TEST_CASE("a scenario is read once: a FIFO runs, and under GitHub Actions a failure is annotated at its line") {
  Folder d("fifo_in");
  std::string fifo = d / "s.json", plain = d / "plain.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string text = wrong_nested();
  write(plain, text);
  int line = 1;
  for (size_t i = 0; i < text.find("[1, 4, 15, 65]"); ++i) line += text[i] == '\n';
  // The writer is bounded too: were impsim not to open the FIFO, it would wait forever.
  auto r = test::shell("timeout 60 cat " + plain + " > " + fifo + " & GITHUB_ACTIONS=true timeout 60 " + kBin +
                       " run " + fifo);
  CAPTURE(r.out);
  CHECK(r.status == 1);
  CHECK(r.out.find("::error file=" + fifo + ",line=" + std::to_string(line) + ",col=") != std::string::npos);
  CHECK(r.out.find("expected 65, got 64") != std::string::npos);
  auto ok = test::shell("timeout 60 cat " + kSource + "/scenarios/nested_guards.json > " + fifo + " & timeout 60 " +
                        kBin + " run " + fifo + " -q");
  CHECK(ok.status == 0);
}
