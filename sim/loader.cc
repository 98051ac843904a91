#include "impsim/loader.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "impsim/counters.h"
#include "impsim/names.h"
#include "impsim/unicode_names.h"
#include "impsim/variant.h"

namespace impsim {

using nlohmann::json;

namespace {

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "a value";
  }
}

std::string quoted(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// "cafe\u0301": two keys that print alike must not read alike in a message.
std::string ascii_quoted(const std::string& s) { return json(s).dump(-1, ' ', /*ensure_ascii=*/true); }

// Characters, not bytes: what JSON Schema's maxLength counts.
size_t characters(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

const std::set<std::string> kStepKinds = {"import", "find_spec", "enable", "disable",
                                          "guard",  "block",     "call"};

class Reader {
 public:
  Reader(const JsonSource& src, std::string file, const InputLimits& limits)
      : src_(src), file_(std::move(file)), limits_(limits) {}

  [[noreturn]] void fail(const std::string& ptr, const std::string& msg) const {
    throw InputError(file_, src_.position_of(ptr), ptr, msg);
  }
  [[noreturn]] void too_long(const std::string& ptr, const std::string& what, size_t size) const {
    throw InputLimitError("max-name-length", file_, src_.position_of(ptr), ptr,
                          fmt::format("{} is {} characters long; the limit is {} (--max-name-length)", what, size,
                                      limits_.max_name_length));
  }

  // A list, not a std::set built per call: this runs once per tree entry
  // and step, and the set's allocations were a visible part of load time.
  void expect_keys(const json& obj, const std::string& ptr, std::initializer_list<std::string_view> allowed,
                   const std::string& what) const {
    for (auto& [k, _] : obj.items()) {
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
        std::vector<std::string_view> sorted(allowed);
        std::sort(sorted.begin(), sorted.end());
        std::string list;
        for (auto& a : sorted) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(ptr + "/" + pointer_token(k), fmt::format("unknown key \"{}\" in {}; expected one of: {}", k, what, list));
      }
    }
  }

  const json& object(const json& v, const std::string& ptr, const std::string& what) const {
    if (!v.is_object()) fail(ptr, fmt::format("expected {} (an object), found {}", what, type_name(v)));
    return v;
  }
  const json& array(const json& v, const std::string& ptr, const std::string& what) const {
    if (!v.is_array()) fail(ptr, fmt::format("expected {} (an array), found {}", what, type_name(v)));
    return v;
  }
  std::string string(const json& v, const std::string& ptr, const std::string& what) const {
    if (!v.is_string()) fail(ptr, fmt::format("expected {} (a string), found {}", what, type_name(v)));
    return v.get<std::string>();
  }
  bool boolean(const json& v, const std::string& ptr, const std::string& what) const {
    if (!v.is_boolean()) fail(ptr, fmt::format("expected {} (true or false), found {}", what, type_name(v)));
    return v.get<bool>();
  }
  int64_t integer(const json& v, const std::string& ptr, const std::string& what, int64_t min) const {
    if (!v.is_number_integer() && !v.is_number_unsigned())
      fail(ptr, fmt::format("expected {} (an integer), found {} {}", what, type_name(v), quoted(v)));
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      fail(ptr, fmt::format("{} is too large", what));
    int64_t x = v.get<int64_t>();
    if (x < min) fail(ptr, fmt::format("expected {} >= {}, found {}", what, min, x));
    return x;
  }
  std::string name(const json& v, const std::string& ptr, const std::string& what) const {
    std::string s = string(v, ptr, what);
    if (characters(s) > limits_.max_name_length) too_long(ptr, what, characters(s));
    std::optional<std::string> n = python_module_name(s);
    if (!n) fail(ptr, fmt::format("expected {} (a Python dotted module name such as \"pkg.sub\"), found \"{}\"", what, s));
    return *n;
  }
  std::vector<std::string> names(const json& v, const std::string& ptr, const std::string& what) const {
    array(v, ptr, what);
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) out.push_back(name(v[i], ptr + "/" + std::to_string(i), "a module name"));
    return out;
  }
  IntField int_field(const json& v, const std::string& ptr, const std::string& what) {
    IntField f;
    f.pointer = ptr;
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      if (s.size() < 2 || s[0] != '$' || !is_dotted_name(s.substr(1)) || s.find('.') != std::string::npos)
        fail(ptr, fmt::format("expected {} (an integer or \"$param\"), found \"{}\"", what, s));
      f.param = s.substr(1);
      param_refs_.push_back({f.param, ptr});
      return f;
    }
    f.value = integer(v, ptr, what + " (an integer or \"$param\")", 0);
    return f;
  }

  std::vector<Step> steps(const json& v, const std::string& ptr, bool in_nest_scope_ok = false);
  Step step(const json& v, const std::string& ptr);
  std::vector<std::string> scope(const json& v, const std::string& ptr, bool allow_level);

  std::vector<std::pair<std::string, std::string>> param_refs_;
  std::map<std::string, std::string> labels_;  // label -> pointer
  std::vector<std::string> label_order_;

 private:
  const JsonSource& src_;
  std::string file_;
  const InputLimits& limits_;
};

std::vector<std::string> Reader::scope(const json& v, const std::string& ptr, bool allow_level) {
  array(v, ptr, "a scope (a list of module names, or null for global)");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string p = ptr + "/" + std::to_string(i);
    std::string s = string(v[i], p, "a module name");
    std::string probe = s;
    if (auto at = probe.find("{i}"); at != std::string::npos) {
      if (!allow_level) fail(p, "\"{i}\" is only allowed in the scope of a guard with \"nest\"");
      for (; at != std::string::npos; at = probe.find("{i}")) probe.replace(at, 3, "1");
    }
    if (characters(s) > limits_.max_name_length) too_long(p, "a module name", characters(s));
    if (!is_dotted_name(probe))
      fail(p, fmt::format("expected a Python dotted module name (\"{{i}}\" may stand for the nesting level), found \"{}\"", s));
    // Normalised piece by piece around "{i}": the level's digits join
    // nothing under NFKC, so this is the normal form of every level's name.
    std::string normal;
    size_t from = 0;
    for (size_t at = s.find("{i}"); ; at = s.find("{i}", from)) {
      std::string_view piece = std::string_view(s).substr(from, at == std::string::npos ? at : at - from);
      normal += nfkc_identifier(piece);
      if (at == std::string::npos) break;
      normal += "{i}";
      from = at + 3;
    }
    out.push_back(std::move(normal));
  }
  return out;
}

std::vector<Step> Reader::steps(const json& v, const std::string& ptr, bool) {
  array(v, ptr, "a list of steps");
  std::vector<Step> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back(step(v[i], ptr + "/" + std::to_string(i)));
  return out;
}

Step Reader::step(const json& v, const std::string& ptr) {
  object(v, ptr, "a step");
  Step st;
  st.pointer = ptr;
  std::string kind;
  for (auto& [k, _] : v.items()) {
    if (kStepKinds.count(k)) {
      if (!kind.empty()) fail(ptr, fmt::format("a step has exactly one of import, find_spec, enable, disable, guard, block, call; found both \"{}\" and \"{}\"", kind, k));
      kind = k;
    }
  }
  if (kind.empty()) {
    for (auto& [k, _] : v.items())
      if (k != "label" && k != "repeat" && k != "nest" && k != "optional" && k != "body")
        fail(ptr + "/" + pointer_token(k), fmt::format("unknown step \"{}\"; expected one of: import, find_spec, enable, disable, guard, block, call", k));
    fail(ptr, "a step needs one of: import, find_spec, enable, disable, guard, block, call");
  }
  std::vector<std::string_view> allowed = {kind, "label", "repeat"};
  const std::string kp = ptr + "/" + kind;
  const json& body = v[kind];
  if (kind == "import" || kind == "find_spec") {
    st.kind = kind == "import" ? StepKind::Import : StepKind::FindSpec;
    st.target = name(body, kp, "a module name");
    allowed.push_back("optional");
    if (v.contains("optional")) st.optional = boolean(v["optional"], ptr + "/optional", "\"optional\"");
  } else if (kind == "call") {
    st.kind = StepKind::Call;
    st.target = name(body, kp, "the module the function is defined in");
    allowed.push_back("body");
    if (!v.contains("body")) fail(ptr, "a call step needs a \"body\" (the steps the function runs)");
  } else if (kind == "enable") {
    st.kind = StepKind::Enable;
    object(body, kp, "the arguments of enable_torch_proxy");
    expect_keys(body, kp, {"scope", "blocked_modules"}, "enable");
    if (body.contains("scope") && !body["scope"].is_null()) st.scope = scope(body["scope"], kp + "/scope", false);
    // b52ce17's keyword; on 04efefd passing it at all is a TypeError at run time.
    st.has_blocked_modules = body.contains("blocked_modules");
    if (st.has_blocked_modules && !body["blocked_modules"].is_null())
      st.block = names(body["blocked_modules"], kp + "/blocked_modules", "a list of module names to block, or null");
  } else if (kind == "disable") {
    st.kind = StepKind::Disable;
    object(body, kp, "an empty object {}");
    expect_keys(body, kp, {}, "disable");
  } else if (kind == "guard") {
    st.kind = StepKind::Guard;
    object(body, kp, "the arguments of use_torch_proxy_guard");
    expect_keys(body, kp, {"enable", "scope"}, "guard");
    if (body.contains("enable")) st.guard_enable = boolean(body["enable"], kp + "/enable", "\"enable\"");
    if (body.contains("scope") && !body["scope"].is_null())
      st.scope = scope(body["scope"], kp + "/scope", v.contains("nest"));
    allowed.push_back("body");
    allowed.push_back("nest");
    if (!v.contains("body")) fail(ptr, "a guard step needs a \"body\" (the steps inside the with block)");
  } else if (kind == "block") {
    st.kind = StepKind::Block;
    st.block = names(body, kp, "a list of module names to block");
  }
  for (auto& [k, _] : v.items()) {
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      std::string why = (k == "optional") ? "\"optional\" only goes with import and find_spec"
                        : (k == "nest")   ? "\"nest\" only goes with guard"
                        : (k == "body")   ? "\"body\" only goes with guard and call"
                        : kStepKinds.count(k) ? "" : fmt::format("unknown key \"{}\" in a {} step", k, kind);
      fail(ptr + "/" + pointer_token(k), why);
    }
  }
  if (v.contains("body")) st.body = steps(v["body"], ptr + "/body");
  if (v.contains("repeat")) st.repeat = int_field(v["repeat"], ptr + "/repeat", "\"repeat\"");
  if (v.contains("nest")) st.nest = int_field(v["nest"], ptr + "/nest", "\"nest\"");
  if (v.contains("label")) {
    std::string l = string(v["label"], ptr + "/label", "a label");
    if (l.empty() || l.find('.') != std::string::npos)
      fail(ptr + "/label", fmt::format("a label must be non-empty and contain no \".\" (counters are named LABEL.counter), found \"{}\"", l));
    if (auto it = labels_.find(l); it != labels_.end())
      fail(ptr + "/label", fmt::format("label \"{}\" is already used at {}; labels are unique in a scenario", l, it->second));
    labels_.emplace(l, ptr);
    st.label = static_cast<int>(label_order_.size());
    label_order_.push_back(l);
  }
  return st;
}

}  // namespace

Scenario load_scenario_text(const std::string& text, const std::string& file, const InputLimits& limits) {
  if (text.size() > limits.max_file_bytes)
    throw InputLimitError("max-file-bytes", file, {}, "",
                          fmt::format("the file is {} bytes; the limit is {} bytes (--max-file-bytes)", text.size(),
                                      limits.max_file_bytes));
  JsonSource src(text);
  std::optional<JsonScanProblem> problem = src.scan(limits.max_json_depth);
  if (problem && problem->too_deep)
    throw InputLimitError("max-json-depth", file, src.position_at(problem->offset), problem->pointer,
                          problem->message + " (--max-json-depth)");
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line 3, column 5: ...".
    if (auto at = what.find(": "); at != std::string::npos) what = what.substr(at + 2);
    throw InputError(file, src.position_at(e.byte == 0 ? 0 : e.byte - 1), "",
                     "invalid JSON: " + what);
  } catch (const json::exception& e) {
    // Not a syntax error but a value nlohmann cannot hold, such as a number
    // too large for a double (out_of_range.406 "number overflow parsing
    // '1E400'"): point at the text it quotes, if it can be found.
    std::string what = e.what();
    if (auto at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    size_t offset = 0;
    if (auto q = what.find('\''); q != std::string::npos)
      if (auto q2 = what.find('\'', q + 1); q2 != std::string::npos)
        if (auto found = text.find(what.substr(q + 1, q2 - q - 1)); found != std::string::npos) offset = found;
    throw InputError(file, src.position_at(offset), "", "invalid JSON: " + what);
  }
  if (problem) throw InputError(file, src.position_at(problem->offset), problem->pointer, problem->message);

  Reader r(src, file, limits);
  Scenario sc;
  sc.file = file;
  r.object(root, "", "a scenario");
  r.expect_keys(root, "",
                {"$schema", "impsim", "name", "description", "params", "sweep", "sys_modules", "tree", "blocked",
                 "program", "variants", "report", "expect", "allow_error", "expect_equivalent", "expect_outcome",
                 "revision", "cpython"},
                "a scenario");
  if (!root.contains("impsim")) r.fail("", "missing \"impsim\": the format version, 1");
  if (!root["impsim"].is_number_integer() || root["impsim"].get<int64_t>() != 1)
    r.fail("/impsim", fmt::format("this impsim reads scenario format 1; found {}", quoted(root["impsim"])));
  if (root.contains("$schema")) r.string(root["$schema"], "/$schema", "a schema address");
  if (root.contains("name")) sc.name = r.string(root["name"], "/name", "a name");
  if (root.contains("description")) sc.description = r.string(root["description"], "/description", "a description");
  if (sc.name.empty()) {
    sc.name = file;
    if (auto slash = sc.name.rfind('/'); slash != std::string::npos) sc.name = sc.name.substr(slash + 1);
    if (sc.name.ends_with(".json")) sc.name.resize(sc.name.size() - 5);
  }
  if (root.contains("params")) {
    const json& p = r.object(root["params"], "/params", "the parameters");
    for (auto& [k, v] : p.items()) {
      std::string ptr = "/params/" + pointer_token(k);
      if (!is_dotted_name(k) || k.find('.') != std::string::npos) r.fail(ptr, fmt::format("a parameter name must be an identifier, found \"{}\"", k));
      sc.params[k] = r.integer(v, ptr, "a parameter value", INT64_MIN);
      sc.param_order.push_back(k);
    }
  }
  if (root.contains("sweep")) {
    const json& s = r.object(root["sweep"], "/sweep", "the sweep");
    r.expect_keys(s, "/sweep", {"param", "values", "title"}, "the sweep");
    Sweep sw;
    if (!s.contains("param")) r.fail("/sweep", "the sweep needs \"param\"");
    sw.param = r.string(s["param"], "/sweep/param", "the swept parameter's name");
    if (!sc.params.count(sw.param))
      r.fail("/sweep/param", fmt::format("the sweep names parameter \"{}\", which \"params\" does not define", sw.param));
    if (!s.contains("values")) r.fail("/sweep", "the sweep needs \"values\"");
    r.array(s["values"], "/sweep/values", "the swept values");
    if (s["values"].empty()) r.fail("/sweep/values", "the sweep needs at least one value");
    // Every value is a run of every variant, each kept for the report.
    if (s["values"].size() > limits.max_sweep_values)
      throw InputLimitError("max-sweep-values", file, src.position_of("/sweep/values"), "/sweep/values",
                            fmt::format("the sweep has {} values; the limit is {} (--max-sweep-values)",
                                        s["values"].size(), limits.max_sweep_values));
    for (size_t i = 0; i < s["values"].size(); ++i)
      sw.values.push_back(r.integer(s["values"][i], "/sweep/values/" + std::to_string(i), "a swept value", INT64_MIN));
    sw.title = s.contains("title") ? r.string(s["title"], "/sweep/title", "a title") : sw.param;
    sc.sweep = sw;
  }
  if (root.contains("sys_modules")) {
    const json& m = r.object(root["sys_modules"], "/sys_modules", "the starting sys.modules");
    r.expect_keys(m, "/sys_modules", {"preloaded", "filler", "torch"}, "sys_modules");
    if (m.contains("preloaded")) sc.preloaded = r.names(m["preloaded"], "/sys_modules/preloaded", "the preloaded module names");
    if (m.contains("filler")) sc.filler = r.int_field(m["filler"], "/sys_modules/filler", "the filler count");
    if (m.contains("torch")) sc.torch_modules = r.names(m["torch"], "/sys_modules/torch", "the real torch module names");
    std::set<std::string> seen;
    for (size_t i = 0; i < sc.preloaded.size(); ++i) {
      std::string ptr = "/sys_modules/preloaded/" + std::to_string(i);
      if (sc.preloaded[i] == "torch" || sc.preloaded[i].starts_with("torch."))
        r.fail(ptr, fmt::format("\"{}\" is a torch name; real torch modules go in /sys_modules/torch", sc.preloaded[i]));
      if (!seen.insert(sc.preloaded[i]).second) r.fail(ptr, fmt::format("\"{}\" is listed twice", sc.preloaded[i]));
    }
    for (size_t i = 0; i < sc.torch_modules.size(); ++i) {
      std::string ptr = "/sys_modules/torch/" + std::to_string(i);
      if (!(sc.torch_modules[i] == "torch" || sc.torch_modules[i].starts_with("torch.")))
        r.fail(ptr, fmt::format("expected a torch name (\"torch\" or \"torch.*\"), found \"{}\"", sc.torch_modules[i]));
      if (!seen.insert(sc.torch_modules[i]).second) r.fail(ptr, fmt::format("\"{}\" is listed twice", sc.torch_modules[i]));
    }
  }
  if (!root.contains("tree")) r.fail("", "missing \"tree\": the package tree PathFinder can find (may be {})");
  {
    const json& t = r.object(root["tree"], "/tree", "the package tree");
    if (t.size() > limits.max_tree_entries)
      throw InputLimitError("max-tree-entries", file, src.position_of("/tree"), "/tree",
                            fmt::format("the tree has {} entries; the limit is {} (--max-tree-entries)", t.size(),
                                        limits.max_tree_entries));
    // normalised name -> (is a package, the key that gave it); sized up
    // front, as growing these tables was a visible part of load time.
    std::unordered_map<std::string, std::pair<bool, const std::string*>> packages;
    packages.reserve(t.size());
    sc.tree.reserve(t.size());
    std::vector<std::string> pointers;
    pointers.reserve(t.size());
    for (auto& [k, v] : t.items()) {
      std::string ptr = "/tree/" + pointer_token(k);
      if (characters(k) > limits.max_name_length) r.too_long(ptr, "a tree key", characters(k));
      std::optional<std::string> name = python_module_name(k);
      if (!name) r.fail(ptr, fmt::format("a tree key must be a Python dotted module name, found \"{}\"", k));
      auto [entry, fresh] = packages.try_emplace(*name, false, &k);
      if (!fresh)
        r.fail(ptr, fmt::format("{} and {} are the same module, \"{}\", once normalised as Python "
                                "normalises identifiers (NFKC)", ascii_quoted(*entry->second.second), ascii_quoted(k), *name));
      if (name->starts_with("_impsim_filler_")) r.fail(ptr, "names starting with _impsim_filler_ are reserved for filler modules");
      r.object(v, ptr, "a tree entry {\"package\": bool, \"body\": [steps]}");
      r.expect_keys(v, ptr, {"package", "body"}, "a tree entry");
      TreeEntry e;
      e.name = *name;
      pointers.push_back(ptr);
      if (v.contains("package")) e.package = r.boolean(v["package"], ptr + "/package", "\"package\"");
      if (v.contains("body")) e.body = r.steps(v["body"], ptr + "/body");
      entry->second.first = e.package;
      sc.tree.push_back(std::move(e));
    }
    for (size_t i = 0; i < sc.tree.size(); ++i) {
      const TreeEntry& e = sc.tree[i];
      auto dot = e.name.rfind('.');
      if (dot == std::string::npos) continue;
      std::string parent = e.name.substr(0, dot);
      auto it = packages.find(parent);
      const std::string& ptr = pointers[i];
      if (it == packages.end())
        r.fail(ptr, fmt::format("\"{}\" needs its parent \"{}\" in the tree (as a package)", e.name, parent));
      if (!it->second.first)
        r.fail(ptr, fmt::format("\"{}\" is inside \"{}\", which is not a package; give \"{}\" \"package\": true",
                                e.name, parent, parent));
    }
  }
  if (root.contains("blocked")) sc.blocked = r.names(root["blocked"], "/blocked", "the blocked module names");
  if (!root.contains("program")) r.fail("", "missing \"program\": the top-level steps");
  sc.program = r.steps(root["program"], "/program");
  if (root.contains("variants")) {
    r.array(root["variants"], "/variants", "the variants to run");
    if (root["variants"].empty()) r.fail("/variants", "name at least one variant");
    sc.variants.clear();
    for (size_t i = 0; i < root["variants"].size(); ++i) {
      std::string ptr = "/variants/" + std::to_string(i);
      std::string v = r.string(root["variants"][i], ptr, "a variant");
      if (!parse_variant(v)) r.fail(ptr, fmt::format("unknown variant \"{}\"; expected one of: {}", v, variant_list()));
      if (std::find(sc.variants.begin(), sc.variants.end(), v) != sc.variants.end())
        r.fail(ptr, fmt::format("variant \"{}\" is listed twice", v));
      sc.variants.push_back(v);
    }
  }
  sc.labels = r.label_order_;
  auto check_counter = [&](const std::string& c, const std::string& ptr) {
    auto dot = c.find('.');
    std::string counter = dot == std::string::npos ? c : c.substr(dot + 1);
    if (dot != std::string::npos && !r.labels_.count(c.substr(0, dot)))
      r.fail(ptr, fmt::format("\"{}\" names label \"{}\", which no step has", c, c.substr(0, dot)));
    if (!is_counter_name(counter))
      r.fail(ptr, fmt::format("unknown counter \"{}\"; expected {}, optionally after \"LABEL.\"", counter, counter_list()));
  };
  if (root.contains("report")) {
    r.array(root["report"], "/report", "the report rows");
    for (size_t i = 0; i < root["report"].size(); ++i) {
      std::string ptr = "/report/" + std::to_string(i);
      const json& row = r.object(root["report"][i], ptr, "a report row {\"counter\", \"title\"}");
      r.expect_keys(row, ptr, {"counter", "title"}, "a report row");
      if (!row.contains("counter")) r.fail(ptr, "a report row needs \"counter\"");
      ReportRow rr;
      rr.counter = r.string(row["counter"], ptr + "/counter", "a counter name");
      check_counter(rr.counter, ptr + "/counter");
      rr.title = row.contains("title") ? r.string(row["title"], ptr + "/title", "a title") : rr.counter;
      sc.report.push_back(rr);
    }
  }
  if (root.contains("expect")) {
    const json& ex = r.object(root["expect"], "/expect", "the expectations (variant -> counter -> value)");
    for (auto& [variant, counters] : ex.items()) {
      std::string vptr = "/expect/" + pointer_token(variant);
      if (std::find(sc.variants.begin(), sc.variants.end(), variant) == sc.variants.end())
        r.fail(vptr, fmt::format("expectations for variant \"{}\", which this scenario does not run", variant));
      r.object(counters, vptr, "counter -> expected value");
      for (auto& [counter, value] : counters.items()) {
        std::string ptr = vptr + "/" + pointer_token(counter);
        check_counter(counter, ptr);
        Expectation e{variant, counter, {}, ptr};
        size_t want = sc.sweep ? sc.sweep->values.size() : 1;
        if (value.is_array()) {
          if (value.size() != want)
            r.fail(ptr, fmt::format("expected {} value(s), one per sweep value, found {}", want, value.size()));
          for (size_t i = 0; i < value.size(); ++i) {
            if (value[i].is_null()) e.values.push_back(std::nullopt);
            else e.values.push_back(static_cast<uint64_t>(r.integer(value[i], ptr + "/" + std::to_string(i), "an expected count", 0)));
          }
        } else {
          if (sc.sweep) r.fail(ptr, fmt::format("the scenario sweeps {} values: expected a list of {}", want, want));
          e.values.push_back(static_cast<uint64_t>(r.integer(value, ptr, "an expected count", 0)));
        }
        sc.expect.push_back(std::move(e));
      }
    }
  }
  if (root.contains("revision")) {
    std::string v = r.string(root["revision"], "/revision", "the finder revision");
    sc.revision = parse_revision(v);
    if (!sc.revision) r.fail("/revision", fmt::format("unknown finder revision \"{}\"; expected one of: {}", v, revision_list()));
  }
  if (root.contains("cpython")) {
    std::string v = r.string(root["cpython"], "/cpython", "the CPython version");
    sc.cpython = parse_cpython(v);
    if (!sc.cpython) r.fail("/cpython", fmt::format("unknown CPython version \"{}\"; expected one of: {}", v, cpython_list()));
  }
  if (root.contains("allow_error")) sc.allow_error = r.boolean(root["allow_error"], "/allow_error", "\"allow_error\"");
  if (root.contains("expect_outcome")) {
    const json& eo = r.object(root["expect_outcome"], "/expect_outcome",
                              "variant -> \"identical\" or \"differs\" (against the first variant)");
    size_t want = sc.sweep ? sc.sweep->values.size() : 1;
    for (auto& [variant, value] : eo.items()) {
      std::string ptr = "/expect_outcome/" + pointer_token(variant);
      if (std::find(sc.variants.begin(), sc.variants.end(), variant) == sc.variants.end())
        r.fail(ptr, fmt::format("an outcome verdict for variant \"{}\", which this scenario does not run", variant));
      if (variant == sc.variants.front())
        r.fail(ptr, fmt::format("\"{}\" is the first variant, the one the others are compared with", variant));
      Scenario::OutcomeExpectation e{variant, {}, ptr};
      auto verdict = [&](const json& v, const std::string& p) {
        std::string x = r.string(v, p, "a verdict");
        if (x != "identical" && x != "differs") r.fail(p, fmt::format("expected \"identical\" or \"differs\", found \"{}\"", x));
        return x;
      };
      if (value.is_array()) {
        if (value.size() != want) r.fail(ptr, fmt::format("expected {} verdict(s), one per sweep value, found {}", want, value.size()));
        for (size_t i = 0; i < value.size(); ++i) e.verdicts.push_back(verdict(value[i], ptr + "/" + std::to_string(i)));
      } else {
        e.verdicts.push_back(verdict(value, ptr));
      }
      sc.expect_outcome.push_back(std::move(e));
    }
  }
  if (root.contains("expect_equivalent"))
    sc.expect_equivalent = r.boolean(root["expect_equivalent"], "/expect_equivalent", "\"expect_equivalent\"");
  for (auto& [param, ptr] : r.param_refs_)
    if (!sc.params.count(param))
      r.fail(ptr, fmt::format("\"${}\" names a parameter that \"params\" does not define", param));
  return sc;
}

namespace {

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

[[noreturn]] void too_large(const std::string& path, const std::string& size, size_t limit) {
  throw InputLimitError("max-file-bytes", display_name(path), {}, "",
                        fmt::format("the file is {} bytes; the limit is {} bytes (--max-file-bytes)", size, limit));
}

}  // namespace

std::string read_scenario_file(const std::string& path, const InputLimits& limits) {
  const std::string name = display_name(path);
  auto system_error = [&](const char* what) {
    return InputError(name, {}, "", fmt::format("{}: {}", what, std::strerror(errno)));
  };
  int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw system_error("cannot open the file");
  struct Closer {
    int fd;
    ~Closer() {
      if (fd != STDIN_FILENO) ::close(fd);
    }
  } closer{fd};
  struct stat st{};
  if (::fstat(fd, &st) != 0) throw system_error("cannot read the file");
  if (S_ISDIR(st.st_mode)) throw InputError(name, {}, "", "is a directory; expected a scenario file (JSON)");
  std::string text;
  if (S_ISREG(st.st_mode)) {
    // A regular file is refused on its size, before a byte is read.
    if (static_cast<uint64_t>(st.st_size) > limits.max_file_bytes)
      too_large(path, std::to_string(st.st_size), limits.max_file_bytes);
    text.reserve(static_cast<size_t>(st.st_size));
  }
  // Pipes, standard input and devices have no size: read them as streams,
  // never holding more than the limit plus one chunk.
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw system_error("cannot read the file");
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > limits.max_file_bytes)
      too_large(path, fmt::format("more than {}", limits.max_file_bytes), limits.max_file_bytes);
  }
  return text;
}

Scenario load_scenario_file(const std::string& path, const InputLimits& limits) {
  return load_scenario_text(read_scenario_file(path, limits), display_name(path), limits);
}

}  // namespace impsim
