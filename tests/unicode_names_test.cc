// Module names beyond ASCII: impsim's verdict and normal form against
// CPython 3.11's, over tests/data/identifiers.txt (every boundary of the
// identifier classes, every character NFKC changes, every composition pair,
// keywords; written by tools/gen/gen_unicode_tables from str.isidentifier() and
// unicodedata.normalize("NFKC", ...)).
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "impsim/scenario/names.h"
#include "impsim/base/unicode_names.h"
#include "test_util.h"

using namespace impsim;

namespace {

std::string utf8_of(const std::string& hex_list) {
  std::string out;
  std::istringstream in(hex_list);
  std::string h;
  while (in >> h) {
    append_utf8(out, static_cast<char32_t>(std::stoul(h, nullptr, 16)));
  }
  return out;
}

}  // namespace

TEST_CASE("module names: impsim accepts and normalises exactly as CPython 3.11 does") {
  std::ifstream in(std::string(IMPSIM_SOURCE_DIR) + "/tests/data/identifiers.txt");
  REQUIRE(in);
  std::string line;
  size_t checked = 0, accepted = 0, changed = 0, mismatches = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto tab = line.find('\t');
    REQUIRE(tab != std::string::npos);
    std::string name = utf8_of(line.substr(0, tab));
    std::string want = line.substr(tab + 1);
    std::optional<std::string> got = python_module_name(name);
    bool ok = want == "-" ? !got : got && *got == utf8_of(want);
    if (!ok && ++mismatches <= 20) {
      CAPTURE(line);
      CHECK(ok);
    }
    ++checked;
    if (got) ++accepted;
    if (got && *got != name) ++changed;
  }
  CHECK(mismatches == 0);
  CHECK(checked > 20000);
  CHECK(accepted > 5000);  // the sample is not all refusals
  CHECK(changed > 3000);   // nor all names NFKC leaves alone
}

TEST_CASE("module names: the cases the issue names") {
  CHECK(python_module_name("模块") == "模块");
  CHECK(python_module_name("模块.子模块") == "模块.子模块");
  CHECK(python_module_name("ｉｆ") == "if");  // a keyword only once normalised: CPython imports "if"
  CHECK(python_module_name("ℌ.ﬁ") == "H.fi");
  CHECK(python_module_name("cafe\u0301") == "caf\u00e9");
  CHECK_FALSE(python_module_name("if"));
  CHECK_FALSE(python_module_name("a.€"));
  CHECK_FALSE(python_module_name("\xff"));          // invalid UTF-8
  CHECK_FALSE(python_module_name("a\xc0\x80"));     // an overlong NUL
  CHECK_FALSE(python_module_name("\xed\xa0\x80"));  // a surrogate
  CHECK_FALSE(python_module_name("\u0301a"));       // a mark cannot start a name
}

TEST_CASE("a 100,000-part name interns without recursion, in memory linear in its length") {
  std::string name = "a";
  for (int i = 1; i < 100000; ++i) name += ".a";
  auto r = test::in_child([&] {
    NameTable t;
    NameId id = t.intern(name);
    bool ok = t.size() == 100000 && t.text(id) == name && t.find(name) == id && t.top(id) == t.find("a");
    return ok ? 0 : 1;
  });
  CHECK(r.status == 0);
  // Every prefix as its own string would be 10 GB; views into one copy are
  // a few MB. The bound is generous: the test process itself is in it.
  if (test::kMemoryMeasurable) CHECK(r.peak_rss_kb < 200 * 1024);
}

TEST_CASE("a Unicode scenario runs, under the names CPython would import") {
  std::string path = test::write_temp("unicode.json", R"({"impsim": 1,
    "tree": {"模块": {"package": true}, "模块.子模块": {}, "ｐｋｇ": {"package": true}, "pkg.ｓｕｂ": {}},
    "program": [{"import": "模块.子模块"}, {"import": "pkg.sub", "label": "p"}]})");
  test::Command r = test::impsim("run " + path + " --json");
  CHECK(r.status == 0);
  auto modules = nlohmann::json::parse(r.out)["runs"][0]["outcome"]["modules"];
  CHECK(modules == nlohmann::json::array({"模块", "模块.子模块", "pkg", "pkg.sub"}));
}
