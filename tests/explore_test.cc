// impsim explore's page (its data, not its looks: tests/browser/ drives it
// in Chromium), the finder's reasons in the text trace, and the module-body
// nesting of the DOT tree.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>

#include "impsim/reader/read_scenario.h"
#include "impsim/trace/trace_formats.h"
#include "test_util.h"
#include "trace_test_util.h"

using impsim::test::kSource;

using namespace impsim;

namespace {


std::string read_file(const std::string& path) { return test::read_file(path); }

std::string write(const std::string& scenario, TraceFormat format, Params set = {}, TraceOptions topt = {}) {
  return test::traced(kSource + "/" + scenario, format, std::move(set), topt);
}

// The page's data: the JSON the writer put after `const DATA = `.
nlohmann::json page_data(const std::string& page) {
  const std::string start = "const DATA = ";
  size_t a = page.find(start);
  REQUIRE(a != std::string::npos);
  a += start.size();
  size_t b = page.find(";\n</script>", a);
  REQUIRE(b != std::string::npos);
  return nlohmann::json::parse(page.substr(a, b - a));
}

// What the page computes: events per variant (a fold row stands for its
// events) and the counters after the last row.
struct Replay {
  uint64_t events = 0;
  std::map<std::string, uint64_t> counters;
};
Replay replay(const nlohmann::json& variant) {
  Replay r;
  const std::map<std::string, std::string> inc = {{"q", "asks"},  {"u", "suppressed"}, {"n", "lookups"},
                                                  {"o", "toggles"}, {"w", "walks"},      {"p", "comparisons"}};
  for (const auto& row : variant["rows"]) {
    r.events += row[0] == "F" ? row[2].get<uint64_t>() : 1;
    const auto& d = row.back();
    if (!d.is_object()) continue;
    for (auto& [k, name] : inc)
      if (d.contains(k)) r.counters[name] += d[k].get<uint64_t>();
    if (d.contains("d")) r.counters["max_depth"] = d["d"].get<uint64_t>();
  }
  return r;
}

}  // namespace

TEST_CASE("explore: one self-contained page, nothing fetched") {
  std::string page = write("tests/golden/nested_guards.json", TraceFormat::Explore, {{"k", 2}});
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("/*IMPSIM_DATA*/") == std::string::npos);
  for (const char* outside : {"http://", "https://", "<link", " src=", "import(", "fetch("}) {
    CAPTURE(outside);
    CHECK(page.find(outside) == std::string::npos);
  }
  // A reader's page, not the template's source: no developer comment, no
  // file of impsim's named.
  CHECK(page.find("<!--") == std::string::npos);
  CHECK(page.find("sim/trace") == std::string::npos);
  CHECK(page.find(".cc") == std::string::npos);
  nlohmann::json d = page_data(page);
  CHECK(d["variants"].size() == 2);
  CHECK(d["reasons"]["in-scope"] == "in scope: P looks it up itself, to mark it enabled");
}

TEST_CASE("explore: every event is a row or inside a fold, and the rows end at the run's counters") {
  for (bool fold : {true, false}) {
    // A swept parameter is set: explore runs one value, run the whole sweep.
    for (auto [file, k] : std::vector<std::pair<const char*, int64_t>>{{"scenarios/nested_guards.json", 3},
                                                                       {"scenarios/seed_incident.json", 7},
                                                                       {"scenarios/import_chain.json", 3},
                                                                       {"scenarios/blocked_marks_differ.json", 2}}) {
      CAPTURE(fold);
      CAPTURE(file);
      TraceOptions o;
      o.fold = fold;
      o.max_bytes = 0;
      nlohmann::json d = page_data(write(file, TraceFormat::Explore, {{"k", k}}, o));
      // Counted independently: the JSON report of the same run.
      RunOptions ro;
      ro.overrides = {{"k", k}};
      auto ran = test::run_json(read_file(kSource + "/" + file), ro);
      for (const auto& v : d["variants"]) {
        CAPTURE(v["name"].get<std::string>());
        Replay r = replay(v);
        CHECK(r.events == v["events"].get<uint64_t>());
        CHECK(v["cut"] == "");
        const VariantRun& vr = test::variant_run(ran->run, *parse_variant(v["name"].get<std::string>()));
        for (const CounterInfo& ci : kCounters) {
          const std::string name(ci.name);
          CAPTURE(name);
          CHECK(std::to_string(r.counters[name]) == (vr.counters.*ci.field).text());
          CHECK(v["totals"][name] == (vr.counters.*ci.field).text());
        }
      }
    }
  }
}

TEST_CASE("explore: folding keeps the seed incident small, a cut page says what it left out") {
  std::string page = write("scenarios/seed_incident.json", TraceFormat::Explore);
  CHECK(page.size() < 5'000'000);
  nlohmann::json d = page_data(page);
  size_t folds = 0;
  for (const auto& row : d["variants"][0]["rows"]) folds += row[0] == "F";
  CHECK(folds > 0);
  // Without folding, 2,000 bytes of rows: cut, and the page says where.
  TraceOptions o;
  o.fold = false;
  o.max_bytes = 2000;
  nlohmann::json cut = page_data(write("scenarios/seed_incident.json", TraceFormat::Explore, {}, o));
  const std::string said = cut["variants"][0]["cut"];
  CHECK(said.find("cut at --max-bytes 2,000 after ") != std::string::npos);
  CHECK(said.find("more events not shown") != std::string::npos);
  Replay r = replay(cut["variants"][0]);
  CHECK(r.events < cut["variants"][0]["events"].get<uint64_t>());
}

// The expectations below follow the finder's source (find_spec's test order,
// use_torch_proxy_guard's entry test); tools/check/crosscheck_reasons checks every
// reason against the real source's branches on random programs.
TEST_CASE("reasons: the text trace says why P answered and what each guard did") {
  std::string t = write("tests/golden/nested_guards.json", TraceFormat::Text, {{"k", 2}});
  // pkg is in both guards' scope: P looks it up itself.
  CHECK(t.find("P (copy 1 of 2).find_spec('pkg') [in scope: P looks it up itself, to mark it enabled]") !=
        std::string::npos);
  // The lookup's own guard (enable=False) removes a copy.
  CHECK(t.find("guard: the lookup's guard (enable=False) toggles: P is in sys.meta_path, so disable_torch_proxy "
               "removes one copy") != std::string::npos);
  // SpecificModuleLoader.exec_module's guard (enable=True, no scope) while P
  // is scoped: _modify_scope_of_torch_proxy switches P to global.
  CHECK(t.find("guard: the loader's guard around the module body (enable=True) toggles: P is there, scoped, and no "
               "scope is asked, so enable_torch_proxy adds a copy and switches P to global") != std::string::npos);
  // The inner loader's guard then finds P global with no scope asked: nothing.
  CHECK(t.find("guard: the loader's guard around the module body (enable=True) does nothing: P is already as asked "
               "and globally enabled, no scope asked") != std::string::npos);
  CHECK(t.find("guard exit: the loader's guard around the module body: nothing to undo") != std::string::npos);
  // A suppressed ask keeps its one reason.
  CHECK(t.find("-> None (suppressed: the fix sees this name is being resolved)") != std::string::npos);
  CHECK(t.find("[suppressed") == std::string::npos);

  // torch_in_scope: torch is imported from a scoped package: what the cache serves.
  std::string torch = write("scenarios/torch_in_scope.json", TraceFormat::Text, {}, TraceOptions{.max_lines = 0});
  CHECK(torch.find("not globally enabled, no calling module marked enabled") != std::string::npos);
  // A walk that moves torch modules to the cache says so.
  CHECK(torch.find("(torch modules moved to the cache, which holds") != std::string::npos);
}

TEST_CASE("dot: a statement inside a module body hangs under that body") {
  std::string d = write("scenarios/import_chain.json", TraceFormat::Dot);
  // body of pkg -> its statement `import pkg.a` -> the lookups it caused.
  auto id_of = [&](const std::string& label_start) {
    size_t at = d.find("[label=\"" + label_start);
    REQUIRE(at != std::string::npos);
    size_t begin = d.rfind('\n', at) + 1;
    return d.substr(begin + 4, at - 1 - (begin + 4));
  };
  std::string body = id_of("body of pkg\"");
  std::string statement = id_of("/tree/pkg/body/0\\nimport pkg.a");
  CHECK(d.find("    " + body + " -> " + statement + ";") != std::string::npos);
  CHECK(d.find("folders are module bodies") != std::string::npos);
  // A scenario without bodies that lead to lookups keeps its legend.
  CHECK(write("tests/golden/nested_guards.json", TraceFormat::Dot, {{"k", 2}}).find("folders") == std::string::npos);
}

TEST_CASE("impsim explore on the command line") {
  std::string out = test::write_temp("cli_explore.html", "");
  auto r = test::impsim("explore " + kSource + "/tests/golden/nested_guards.json --set k=1 -o " + out);
  CHECK(r.status == 0);
  CHECK(read_file(out) == write("tests/golden/nested_guards.json", TraceFormat::Explore, {{"k", 1}}));
  // Without -o the page goes to standard output (here a pipe), never to a terminal.
  auto piped = test::impsim("explore " + kSource + "/tests/golden/nested_guards.json --set k=1");
  CHECK(piped.status == 0);
  CHECK(piped.out == read_file(out));
  CHECK(test::shell("script -qec '" + std::string(IMPSIM_BINARY) + " explore " + kSource + "/" +
                    "tests/golden/nested_guards.json' /dev/null")
            .out.find("not text for a terminal") != std::string::npos);
  CHECK(test::impsim("explore " + kSource + "/tests/golden/nested_guards.json --engine fast -o " + out).status == 2);
  CHECK(test::impsim("explore " + kSource + "/tests/golden/nested_guards.json --set q=1 -o " + out).status == 2);
  CHECK(test::impsim("explore " + kSource + "/tests/golden/nested_guards.json -o /nonexistent/dir/x.html").status == 4);
  // A hook scenario: the page draws its list of finder objects.
  auto hooks = test::impsim("explore " + kSource + "/scenarios/zoo/six_moves.json -o " + out);
  CHECK(hooks.status == 0);
  CHECK(read_file(out) == write("scenarios/zoo/six_moves.json", TraceFormat::Explore));
}

// Hook scenarios: the rows carry sys.meta_path as finder objects and the
// hook counters; replayed, they end where `impsim run` ends (counted
// independently, by the report of the same run).
TEST_CASE("explore: a hook scenario's rows end at the run's hook counters and sys.meta_path") {
  for (const std::string& file : test::shipped_scenarios()) {
    if (file.find("/zoo/") == std::string::npos) continue;
    for (bool fold : {true, false}) {
      CAPTURE(file);
      CAPTURE(fold);
      TraceOptions o;
      o.fold = fold;
      o.max_bytes = 0;
      nlohmann::json d = page_data(test::traced(file, TraceFormat::Explore, {}, o));
      REQUIRE(d.contains("finders"));
      // At the scenario's defaults: explore does not run a sweep.
      RunOptions ro;
      ro.overrides = parse_scenario_file(file).params;
      auto ran = test::run_json(read_file(file), ro);
      for (const auto& v : d["variants"]) {
        CAPTURE(v["name"].get<std::string>());
        const VariantRun& vr = test::variant_run(ran->run, *parse_variant(v["name"].get<std::string>()));
        uint64_t events = 0, searches = 0, calls = 0, depth = 0;
        std::map<std::string, uint64_t> by;
        int64_t meta = -1;
        for (const auto& row : v["rows"]) {
          events += row[0] == "F" ? row[2].get<uint64_t>() : 1;
          if (row[0] == "a") CHECK(row.size() == 6);  // the object's id, the list's length, the change
          const auto& delta = row.back();
          if (!delta.is_object()) continue;
          for (auto& [k, x] : delta.items()) {
            if (k == "e") searches += x.get<uint64_t>();
            if (k == "j") calls += x.get<uint64_t>();
            if (k == "z") depth = x.get<uint64_t>();
            if (k == "f") meta = x.get<int64_t>();
            if (k[0] == '@') by[d["finders"][std::stoul(k.substr(1))][0].get<std::string>()] += x.get<uint64_t>();
          }
        }
        CHECK(events == v["events"].get<uint64_t>());
        CHECK(searches == vr.hooks.searches.u64());
        CHECK(calls == vr.hooks.finder_calls.u64());
        CHECK(depth == vr.hooks.max_depth.u64());
        CHECK(v["totals"]["searches"] == vr.hooks.searches.text());
        for (size_t i = 0; i < vr.finder_ids().size(); ++i)
          if (!vr.finder_ids()[i].empty()) CHECK(by[vr.finder_ids()[i]] == vr.hooks.by_object[i].u64());
        // The last sys.meta_path the rows set is the run's final one.
        REQUIRE(meta >= 0);
        std::string ids;
        for (const std::string& id : vr.outcome.meta_path) {
          size_t at = 0;
          while (d["finders"][at][0] != id) ++at;
          ids += (ids.empty() ? "" : ",") + std::to_string(at);
        }
        CHECK(d["strings"][static_cast<size_t>(meta)] == ids);
      }
    }
  }
  // A Paddle page carries none of it.
  CHECK(!page_data(write("tests/golden/nested_guards.json", TraceFormat::Explore, {{"k", 1}})).contains("finders"));
}

// A lazy scenario (PEP 810): the statement is a row where no finder is
// asked, and the search it put off opens under the read that resolves it,
// with the text trace's sentence for each as the row's why.
TEST_CASE("explore: a lazy import's statement and its resolution are rows apart, the import nested in the resolution") {
  const std::string file = "scenarios/lazy/guards_then_first_use.json";
  const std::string page = write(file, TraceFormat::Explore, {{"k", 2}});
  const std::string text = write(file, TraceFormat::Text, {{"k", 2}});
  nlohmann::json d = page_data(page);
  CHECK(d["lazy"]["bound"] == "statement bound");
  CHECK(d["lazy"]["resolve"] == "resolution");
  for (const auto& v : d["variants"]) {
    CAPTURE(v["name"].get<std::string>());
    const auto& rows = v["rows"];
    const size_t none = rows.size();
    size_t bound = none, resolve = none;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i][0] == "y" && bound == none) bound = i;
      if (rows[i][0] == "z" && resolve == none) resolve = i;
    }
    REQUIRE(bound < resolve);
    REQUIRE(resolve + 1 < rows.size());
    CHECK(rows[bound][1] == "bound");
    CHECK(d["names"][rows[bound][2].get<size_t>()] == "pkg");
    CHECK(rows[resolve][1] == "resolve");
    CHECK(d["names"][rows[resolve][2].get<size_t>()] == "pkg");
    const std::string why = rows[resolve][3];
    CHECK(why.rfind("resolved here, at the first read of `pkg`: the lazy object imports pkg now", 0) == 0);
    CHECK(text.find("  " + why + "\n") != std::string::npos);
    CHECK(text.find("  " + rows[bound][3].get<std::string>() + "\n") != std::string::npos);
    // Between the statement and the read no finder is asked; pkg's import
    // is the resolution's first row, inside the step of the first read.
    for (size_t i = bound; i < resolve; ++i) CHECK(rows[i][0] != "a");
    CHECK(rows[resolve + 1][0] == "i");
    CHECK(d["names"][rows[resolve + 1][1].get<size_t>()] == "pkg");
    std::vector<size_t> open;
    size_t end = none, step = none;
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string k = rows[i][0];
      if (i == resolve && !open.empty()) step = open.back();
      if (k.size() == 1 && std::string("siaglbz").find(k[0]) != std::string::npos) open.push_back(i);
      if (k.size() == 1 && std::string("SIAGLBZ").find(k[0]) != std::string::npos) {
        REQUIRE(!open.empty());
        if (k == "Z") CHECK(rows[open.back()][0] == "z");
        if (open.back() == resolve) end = i;
        open.pop_back();
      }
    }
    CHECK(open.empty());
    REQUIRE(step != none);
    CHECK(rows[step][0] == "s");
    CHECK(rows[step][2].get<std::string>().find("[first_read]") != std::string::npos);
    REQUIRE(end != none);
    bool asked = false;
    for (size_t i = resolve; i < end; ++i) asked = asked || rows[i][0] == "a";
    CHECK(asked);
    CHECK(replay(v).events == v["events"].get<uint64_t>());
  }
  // The page's code for lazy rows is in this page and in no page without them.
  CHECK(page.find("lazyText") != std::string::npos);
  CHECK(write("tests/golden/nested_guards.json", TraceFormat::Explore, {{"k", 1}}).find("lazyText") ==
        std::string::npos);
  // An attribute imported through sys.lazy_modules, and a resolution that
  // raises: each "z" row is closed, and its why is the text trace's line.
  for (const char* other :
       {"tests/data/lazy/import_deferred_past_probes.json", "tests/data/lazy/failing_lazy_retried.json"}) {
    CAPTURE(other);
    const std::string t = write(other, TraceFormat::Text);
    nlohmann::json o = page_data(write(other, TraceFormat::Explore));
    std::map<std::string, int> kinds;
    int unclosed = 0;
    for (const auto& v : o["variants"])
      for (const auto& r : v["rows"]) {
        if (r[0] == "y" || r[0] == "z") {
          ++kinds[r[1].get<std::string>()];
          CHECK(t.find("  " + r[3].get<std::string>() + "\n") != std::string::npos);
        }
        if (r[0] == "z") ++unclosed;
        if (r[0] == "Z") --unclosed;
      }
    CHECK(unclosed == 0);
    CHECK(kinds["resolve"] > 0);
    if (std::string(other).find("deferred") != std::string::npos) CHECK(kinds["attribute"] > 0);
  }
}
