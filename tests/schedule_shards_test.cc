// Shard documents are input from other machines (a CI matrix's artifacts):
// `schedules --merge` reads them as it reads a stranger's scenario. Each
// way a shard could make the merged report lie is refused with the file,
// its line and column and the JSON pointer, and nothing is printed of the
// merge (docs/security.md, "Shards").
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "test_util.h"

// Named, not anonymous: the sanitizer build compiles the tests in batches
// (a unity build), where another file's helpers of the same name meet these.
namespace schedule_shards_test {

namespace test = impsim::test;
using impsim::test::read_file;
using impsim::test::write_temp;
using nlohmann::ordered_json;

const std::string kThreads = impsim::test::kSource + "/tests/data/threads/";

// The shards I/N of `args` (a scenario and its flags), written in `dir`.
std::vector<std::string> shards(const std::string& args, int n, const std::string& dir, const std::string& stem = "s") {
  std::vector<std::string> out;
  for (int i = 1; i <= n; ++i) {
    const std::string path = fmt::format("{}/{}{}.json", dir, stem, i);
    const auto made = test::impsim(fmt::format("schedules {} --shard {}/{} --format json -o {}", args, i, n, path));
    // 1 where the part reaches a hang, a _DeadlockError or an exception
    // the scenario does not accept (the gate); the shard is written either way.
    REQUIRE(made.status <= 1);
    REQUIRE(!read_file(path).empty());
    out.push_back(path);
  }
  return out;
}

// Shard `path` with `edit` applied to its document, written anew.
std::string forged(const std::string& path, const std::string& name, const std::function<void(ordered_json&)>& edit) {
  ordered_json doc = ordered_json::parse(read_file(path));
  edit(doc);
  return write_temp(name, doc.dump(2));
}


void refused(const std::string& files, int status, const std::string& says) {
  const auto r = impsim::test::shell_split(impsim::test::kBin + " schedules --merge " + files);
  CAPTURE(files);
  CAPTURE(r.err);
  CHECK(r.status == status);
  CHECK(r.out.empty());  // no part of a merge is printed
  CHECK(r.err.find(says) != std::string::npos);
}


TEST_CASE("shards of two scenarios made under one file name do not merge: the scenario digest differs") {
  const std::string dir = impsim::test::scratch_subdir("two_scenarios");
  // ci.json is one scenario when shard 1 is made and another for shard 2.
  const std::string ci = dir + "/ci.json";
  impsim::test::shell("cp " + kThreads + "two_waiters.json " + ci);
  const auto first = shards(ci, 2, dir, "a");
  impsim::test::shell("cp " + kThreads + "cross_import.json " + ci);
  const auto second = shards(ci, 2, dir, "b");
  refused(first[0] + " " + second[1], 2,
          "b2.json:6:24: at /shard_of/scenario_sha256: shard 2/2 of " + ci + " was made from other content");
}

TEST_CASE("shards searched with other options, or by another impsim, do not merge: the field is named") {
  const std::string dir = impsim::test::scratch_subdir("options");
  const std::string file = kThreads + "cross_import.json --variant before";
  const auto two = shards(file, 2, dir, "p2_");
  const auto one = shards(file + " --preemption-bound 1", 2, dir, "p1_");
  refused(two[0] + " " + one[1], 2, "at /shard_of/options/preemption_bound: shard 2/2 of");
  refused(two[0] + " " + one[1], 2, "was searched with options/preemption_bound 1, shard 1/2 in");
  const auto events = shards(file + " --max-events 99999", 2, dir, "e_");
  refused(two[0] + " " + events[1], 2, "at /shard_of/options/limits/max_events");
  const auto set = shards(file + " --cpython 3.12", 2, dir, "c_");
  refused(two[0] + " " + set[1], 2, "at /shard_of/options/cpython");
  // The identity changed by hand: its digest no longer matches.
  refused(two[0] + " " + forged(two[1], "edited.json", [](ordered_json& d) {
            d["shard_of"]["options"]["preemption_bound"] = 1;
          }),
          2, "at /shard_of/digest: the digest does not match");
  // Another impsim, and the digest made to match.
  refused(two[0] + " " + forged(two[1], "other_impsim.json", [](ordered_json& d) {
            d["shard_of"]["impsim"] = "9.9.9";
          }),
          2, "at /shard_of/digest");
  // A plain search's document is not a shard.
  const std::string whole = write_temp("whole.json", test::impsim("schedules " + file + " --format json").out);
  refused(whole, 2, "no \"shard_of\"");
}

TEST_CASE("a shard's counts cannot wrap, go negative or fail to add up, and every field is range-checked") {
  const std::string dir = impsim::test::scratch_subdir("counts");
  const auto s = shards(kThreads + "cross_import.json --variant before", 3, dir);
  const std::string rest = " " + s[1] + " " + s[2];
  auto with = [&](const std::string& name, const std::function<void(ordered_json&)>& edit) {
    return forged(s[0], name, edit) + rest;
  };
  // 2^64 - 1 schedules used to wrap the merged total to 361.
  refused(with("wrap.json", [](ordered_json& d) { d["searches"][0]["schedules"] = UINT64_MAX; }), 2,
          "at /searches/0/schedules: \"schedules\": 18446744073709551615 is out of range; expected an integer from "
          "0 to 10000");
  refused(with("sum.json", [](ordered_json& d) { d["searches"][0]["outcomes"][0]["schedules"] = 1; }), 2,
          "but the outcomes' schedules add up to");
  refused(with("negative.json", [](ordered_json& d) { d["searches"][0]["outcomes"][0]["preemptions"] = -5; }), 2,
          "\"preemptions\": -5 is out of range; expected an integer from 0 to");
  // 2^63 was printed as k=-9223372036854775808.
  refused(with("param.json",
               [](ordered_json& d) { d["searches"][0]["params"]["k"] = uint64_t{9223372036854775808ULL}; }),
          2, "\"k\": 9223372036854775808 is out of range");
  refused(with("float.json", [](ordered_json& d) { d["searches"][0]["schedules"] = 1e30; }), 2,
          "is out of range; expected an integer from 0 to 10000");
  refused(with("string.json", [](ordered_json& d) { d["searches"][0]["schedules"] = "554"; }), 2,
          "\"554\" is not an integer");
  refused(with("unknown.json", [](ordered_json& d) { d["searches"][0]["outcomes"][0]["extra"] = 1; }), 2,
          "at /searches/0/outcomes/0/extra: an unknown key");
  refused(with("dup_outcome.json",
               [](ordered_json& d) {
                 auto& o = d["searches"][0]["outcomes"];
                 o[1]["outcome"] = o[0]["outcome"];
                 o[1]["threaded"] = o[0]["threaded"];
               }),
          2, "an outcome listed twice");
  // The line beside the data is for people: one that says otherwise than
  // the data would print otherwise than the unsplit search.
  refused(with("line.json",
               [](ordered_json& d) {
                 auto& o = d["searches"][0]["outcomes"][0];
                 o["threaded"]["counters"]["asks"] = "7";
               }),
          2, "\"outcome\" is not the line its \"threaded\" outcome reads as");
  refused(with("count.json",
               [](ordered_json& d) { d["searches"][0]["outcomes"][0]["threaded"]["counters"]["asks"] = "-1"; }),
          2, "\"asks\" is not a count");
  refused(with("ended.json",
               [](ordered_json& d) { d["searches"][0]["outcomes"][0]["threaded"]["threads"][0]["ended"] = "vanished"; }),
          2, "an unknown end \"vanished\"");
  // A shard of an impsim that wrote outcomes only as lines: refused, as it
  // cannot be merged with the data of this one's.
  refused(with("old.json", [](ordered_json& d) { d["searches"][0]["outcomes"][0].erase("threaded"); }), 2,
          "no \"threaded\": an outcome only as a line");
  refused(with("thread.json", [](ordered_json& d) { d["searches"][0]["outcomes"][0]["schedule"] = "0.99"; }), 2,
          "choice 2 is thread 99");
  refused(with("kind.json",
               [](ordered_json& d) {
                 d["searches"][0]["search"] = "random";
                 d["searches"][0]["seed"] = 0;
                 d["searches"][0].erase("preemption_bound");
               }),
          2, "\"search\" is \"random\", but the document's shard_of options say \"exhaustive\"");
}

TEST_CASE("a shard's hang is data: each wait's fields are checked, and waits written as sentences are refused") {
  const std::string dir = impsim::test::scratch_subdir("hang");
  const auto s = shards(kThreads + "join_in_body.json --variant before", 1, dir);
  const ordered_json doc = ordered_json::parse(read_file(s[0]));
  size_t hung = 0;
  while (doc["searches"][0]["outcomes"][hung]["threaded"]["hang"].empty()) ++hung;
  const std::string at = fmt::format("at /searches/0/outcomes/{}/threaded/hang/", hung);
  const ordered_json& waits = doc["searches"][0]["outcomes"][hung]["threaded"]["hang"];
  CHECK(waits.dump() ==
        R"([{"thread":"main","waits_for":"join","joins":"w"},)"
        R"({"thread":"w","waits_for":"module_lock","module":"a","held_by":"main"}])");
  auto hang = [&](const std::string& name, const std::function<void(ordered_json&)>& edit) {
    return forged(s[0], name, [&](ordered_json& d) { edit(d["searches"][0]["outcomes"][hung]["threaded"]["hang"]); });
  };
  // What an impsim that wrote the waits as its sentences left: refused, as
  // the merge would have to parse them back.
  refused(hang("sentences.json",
               [](ordered_json& h) {
                 h[1] = "thread w waits for the module lock of a, held by thread main";
               }),
          2, at + "1: a wait as a sentence");
  refused(hang("kind.json", [](ordered_json& h) { h[0]["waits_for"] = "nap"; }), 2,
          at + "0/waits_for: an unknown wait \"nap\"");
  refused(hang("holder.json", [](ordered_json& h) { h[0]["held_by"] = "w"; }), 2, at + "0/held_by: an unknown key");
  refused(hang("module.json", [](ordered_json& h) { h[1].erase("module"); }), 2, "no \"module\"");
  // Another module's lock reads as another line than the one beside it.
  refused(hang("other.json", [](ordered_json& h) { h[1]["module"] = "b"; }), 2,
          "\"outcome\" is not the line its \"threaded\" outcome reads as");
  // A wait names the outcome's own threads, and only a waiting one waits.
  refused(hang("stranger.json", [](ordered_json& h) { h[1]["thread"] = "x\n::add-mask::"; }), 2,
          at + "1/thread: a wait of a thread that \"threads\" does not list as waiting");
  refused(hang("nobody.json", [](ordered_json& h) { h[1]["held_by"] = "nobody"; }), 2,
          at + "1/held_by: a wait on a thread that \"threads\" does not list");
}

TEST_CASE("a shard file is bounded as a scenario is: --max-file-bytes and --max-json-depth") {
  const std::string dir = impsim::test::scratch_subdir("bounds");
  const auto s = shards(kThreads + "cross_import.json --variant before", 2, dir);
  // A 40 MB shard used to merge whatever --max-file-bytes said.
  const std::string big = forged(s[1], "big.json", [](ordered_json& d) {
    d["searches"][0]["outcomes"][0]["outcome"] = std::string(20'000'000, 'x');
  });
  refused(s[0] + " " + big, 3, "limit max-file-bytes reached");
  refused(s[0] + " " + big + " --max-file-bytes 1000", 3, "limit max-file-bytes reached");
  std::string deep = "[";
  for (int i = 0; i < 2000; ++i) deep += "[";
  refused(write_temp("deep.json", deep), 3, "limit max-json-depth reached");
}

TEST_CASE("--shard takes its numbers as every integer flag does: no wrap past 2^32") {
  const std::string file = kThreads + "cross_import.json";
  // 4294967298/4294967299 used to be searched as shard 2/3.
  test::impsim_says("schedules " + file + " --shard 4294967298/4294967299 --format json", 2,
              "--shard 4294967298/4294967299: 4294967299 is out of range; expected I/N with 1 <= I <= N <= 100000");
  test::impsim_says("schedules " + file + " --shard 0/3 --format json", 2, "0 is out of range");
  test::impsim_says("schedules " + file + " --shard 1/-3 --format json", 2, "-3 is out of range");
  test::impsim_says("schedules " + file + " --shard 1/3/4 --format json", 2, "is not an integer");
  test::impsim_says("schedules " + file + " --seed -1", 2, "--seed: -1 is out of range; expected an integer from 0 to");
  test::impsim_says("schedules " + file + " --seed 18446744073709551616", 2, "is out of range");
  test::impsim_says("trace " + file + " --max-lines -1", 2, "--max-lines: -1 is out of range");
  test::impsim_says("explore " + file + " --max-bytes -1 -o x.html", 2, "--max-bytes: -1 is out of range");
  test::impsim_says("run " + file + " --set k=9223372036854775808", 2,
              "--set k=9223372036854775808: 9223372036854775808 is out of range");
}

}  // namespace schedule_shards_test
