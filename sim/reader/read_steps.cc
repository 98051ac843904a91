// The steps of a scenario (tree bodies and the program): one function per
// step kind's checks, shared by every place steps appear.
#include <set>

#include "read_hooks.h"
#include "reader.h"

namespace impsim::reading {

namespace {

const std::set<std::string> kStepKinds = {"import", "find_spec", "import_module",    "enable",
                                          "disable", "guard",   "block",          "call",
                                          "start",  "join",      "do",            "lazy_import",
                                          "use",    "set_lazy_imports", "set_lazy_imports_filter", "lazy_from",
                                          "__lazy_modules__", "resolve"};

// What a misspelt step kind may have meant: every kind, the sys.meta_path
// steps' too.
std::vector<std::string> step_words() {
  std::vector<std::string> out(kStepKinds.begin(), kStepKinds.end());
  const std::string_view list = meta_path_step_list();  // "install, uninstall, ..."
  for (size_t at = 0; at < list.size();) {
    size_t comma = std::min(list.find(", ", at), list.size());
    out.emplace_back(list.substr(at, comma - at));
    at = comma + 2;
  }
  return out;
}

// Every step kind, for the errors that list them: the sys.meta_path steps
// too, so that a hook scenario's author sees the steps it is written with.
const std::string& step_kind_list() {
  static const std::string list =
      "import, find_spec, import_module, enable, disable, guard, block, call, start, join, do, lazy_import, "
      "lazy_from, use, resolve, set_lazy_imports, set_lazy_imports_filter, __lazy_modules__, or a sys.meta_path "
      "step: " +
      std::string(meta_path_step_list());
  return list;
}

// `unknown key "lable" in an import step (did you mean "label"?); expected one of: ...`
std::string unknown_step_key(const std::string& key, const std::string& kind,
                             const std::vector<std::string_view>& allowed) {
  std::vector<std::string> keys(allowed.begin(), allowed.end());
  std::sort(keys.begin(), keys.end());
  const bool vowel = std::string_view("aeiou").find(kind.front()) != std::string_view::npos;
  return fmt::format("unknown key \"{}\" in {} {} step{}; expected one of: {}", key, vowel ? "an" : "a", kind,
                     did_you_mean_note(key, keys, '"'), name_list(keys));
}

// A name template as iteration (or nest level) 1 spells it: what the
// name checks test.
std::string iteration_probe(std::string s) {
  for (size_t at = s.find("{i}"); at != std::string::npos; at = s.find("{i}", at)) s.replace(at, 3, "1");
  return s;
}

// A name template normalised piece by piece around "{i}": the digits that
// replace it join nothing under NFKC, so this is the normal form of every
// iteration's name.
std::string normal_template(const std::string& s) {
  std::string normal;
  size_t from = 0;
  for (size_t at = s.find("{i}");; at = s.find("{i}", from)) {
    std::string_view piece = std::string_view(s).substr(from, at == std::string::npos ? at : at - from);
    normal += nfkc_identifier(piece);
    if (at == std::string::npos) break;
    normal += "{i}";
    from = at + 3;
  }
  return normal;
}

}  // namespace

std::vector<std::string> Reader::scope(const json& v, const std::string& ptr, bool allow_level) {
  array(v, ptr, "a scope (a list of module names, or null for global)");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string p = ptr + "/" + std::to_string(i);
    std::string s = string(v[i], p, "a module name");
    if (!allow_level && s.find("{i}") != std::string::npos)
      fail(p, "\"{i}\" is only allowed in the scope of a guard with \"nest\"");
    if (characters(s) > limits_.max_name_length) too_long(p, "a module name", characters(s));
    if (!is_dotted_name(iteration_probe(s)))
      fail(p, fmt::format(
                  "expected a Python dotted module name (\"{{i}}\" may stand for the nesting level), found \"{}\"", s));
    out.push_back(normal_template(s));
  }
  return out;
}

std::string Reader::step_name(const json& v, const std::string& ptr, const std::string& what) const {
  std::string s = string(v, ptr, what);
  if (s.find("{i}") == std::string::npos) return name(v, ptr, what);
  check_iteration_use(ptr, s);
  if (characters(s) > limits_.max_name_length) too_long(ptr, what, characters(s));
  if (!is_dotted_name(iteration_probe(s)))
    fail(ptr, fmt::format("expected {} (a Python dotted module name such as \"pkg.sub\"; \"{{i}}\" may stand for "
                          "the do block's iteration, as in \"test_{{i}}\"), found \"{}\"",
                          what, s));
  return normal_template(s);
}

std::string Reader::identifier(const json& v, const std::string& ptr, const std::string& example) const {
  std::string s = string(v, ptr, "the name the import binds (an identifier)");
  if (characters(s) > limits_.max_name_length) too_long(ptr, "a name", characters(s));
  if (!is_dotted_name(s) || s.find('.') != std::string::npos)
    fail(ptr, fmt::format("expected an identifier ({}), found \"{}\"", example, s));
  return nfkc_identifier(s);
}

// `lazy from m import a, b as c`'s names: "a", "b as c".
std::vector<std::pair<std::string, std::string>> Reader::from_names(const json& v, const std::string& ptr) const {
  array(v, ptr, "a list of the names imported (\"sub\", or \"other as o\")");
  if (v.empty()) fail(ptr, "expected at least one name: `lazy from m import` needs what it imports");
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string p = ptr + "/" + std::to_string(i);
    const std::string s = string(v[i], p, "a name imported (\"sub\", or \"other as o\")");
    if (s == "*") fail(p, "CPython refuses this: \"SyntaxError: lazy from ... import * is not allowed\"");
    const size_t as = s.find(" as ");
    const json what = s.substr(0, as);
    const std::string name = identifier(what, p, "lazy from m import a");
    const std::string bind = as == std::string::npos ? name : identifier(json(s.substr(as + 4)), p, "lazy from m import a as b");
    out.emplace_back(name, bind);
  }
  return out;
}

std::vector<Step> Reader::steps(const json& v, const std::string& ptr) {
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
    if (kStepKinds.count(k) || is_meta_path_step(k)) {
      if (!kind.empty())
        fail(ptr, fmt::format("a step has exactly one of {}; found both \"{}\" and \"{}\"", step_kind_list(), kind, k));
      kind = k;
    }
  }
  if (kind.empty()) {
    for (auto& [k, _] : v.items())
      if (k != "label" && k != "repeat" && k != "nest" && k != "optional" && k != "body")
        fail_at_key(ptr + "/" + pointer_token(k), fmt::format("unknown step \"{}\"{}; expected one of: {}", k,
                                                       did_you_mean_note(k, step_words(), '"'), step_kind_list()));
    fail(ptr, "a step needs one of: " + step_kind_list());
  }
  std::vector<std::string_view> allowed = {kind, "label", "repeat"};
  const std::string kp = ptr + "/" + kind;
  const json& body = v[kind];
  if (kind == "import" || kind == "find_spec" || kind == "import_module") {
    st.kind = kind == "import" ? StepKind::Import : kind == "find_spec" ? StepKind::FindSpec : StepKind::ImportModule;
    st.target = step_name(body, kp, "a module name");
    allowed.push_back("optional");
    if (v.contains("optional")) st.optional = boolean(v["optional"], ptr + "/optional", "\"optional\"");
  } else if (kind == "call") {
    st.kind = StepKind::Call;
    st.target = step_name(body, kp, "the module the function is defined in");
    allowed.push_back("body");
    if (!v.contains("body")) fail(ptr, "a call step needs a \"body\" (the steps the function runs)");
  } else if (kind == "enable") {
    st.kind = StepKind::Enable;
    object(body, kp, "the arguments of enable_torch_proxy");
    expect_keys(body, kp, {"scope", "blocked_modules"}, "enable");
    StepDetail& d = st.mutable_detail();
    if (body.contains("scope") && !body["scope"].is_null()) d.scope = scope(body["scope"], kp + "/scope", false);
    // b52ce17's keyword; on 04efefd passing it at all is a TypeError at run time.
    d.has_blocked_modules = body.contains("blocked_modules");
    if (d.has_blocked_modules && !body["blocked_modules"].is_null())
      d.block = names(body["blocked_modules"], kp + "/blocked_modules", "a list of module names to block, or null");
  } else if (kind == "disable") {
    st.kind = StepKind::Disable;
    object(body, kp, "an empty object {}");
    expect_keys(body, kp, {}, "disable");
  } else if (kind == "guard") {
    st.kind = StepKind::Guard;
    object(body, kp, "the arguments of use_torch_proxy_guard");
    expect_keys(body, kp, {"enable", "scope"}, "guard");
    if (body.contains("enable"))
      st.mutable_detail().guard_enable = boolean(body["enable"], kp + "/enable", "\"enable\"");
    if (body.contains("scope") && !body["scope"].is_null())
      st.mutable_detail().scope = scope(body["scope"], kp + "/scope", v.contains("nest"));
    allowed.push_back("body");
    allowed.push_back("nest");
    if (!v.contains("body")) fail(ptr, "a guard step needs a \"body\" (the steps inside the with block)");
  } else if (kind == "start" || kind == "join") {
    // Which thread: checked against "threads" once the whole file is read.
    st.kind = kind == "start" ? StepKind::Start : StepKind::Join;
    st.mutable_detail().thread = string(body, kp, "a thread's name");
  } else if (kind == "do") {
    // The block's steps are its value: read below, once "repeat" is known good.
    st.kind = StepKind::Do;
  } else if (kind == "block") {
    st.kind = StepKind::Block;
    st.mutable_detail().block = names(body, kp, "a list of module names to block");
  } else if (kind == "lazy_import" || kind == "lazy_from") {
    // CPython 3.15 compiles `lazy import` at module level only: the
    // program, a module body, and the with and for blocks inside them.
    st.kind = kind == "lazy_import" ? StepKind::LazyImport : StepKind::LazyFrom;
    st.target = name(body, kp, "a module name");
    if (function_depth_ > 0)
      fail(kp, fmt::format("a {} runs inside a function here ({}), where CPython refuses it: "
                           "\"SyntaxError: lazy import not allowed inside functions\"; lazy-import the name at the "
                           "module's top level and \"use\" it here",
                           kind, function_what_));
    if (st.kind == StepKind::LazyImport) {
      allowed.push_back("as");
      if (v.contains("as"))
        st.mutable_detail().bind_as = identifier(v["as"], ptr + "/as", "lazy import a.b as c");
    } else {
      if (st.target == "__future__")
        fail(kp, "CPython refuses this: \"SyntaxError: lazy from __future__ import is not allowed\"");
      allowed.push_back("names");
      if (!v.contains("names"))
        fail(ptr, "a lazy_from step needs \"names\": what it imports, e.g. [\"sub\", \"other as o\"] for `lazy "
                  "from m import sub, other as o`");
      st.mutable_detail().from_names = from_names(v["names"], ptr + "/names");
    }
    lazy_used_ = true;
  } else if (kind == "__lazy_modules__") {
    // A module global: in a function it would only bind a local.
    st.kind = StepKind::SetLazyModules;
    if (function_depth_ > 0)
      fail(kp, fmt::format("__lazy_modules__ is set inside a function here ({}), where it binds a local that no "
                           "import reads; set it at the module's top level",
                           function_what_));
    st.mutable_detail().block = names(body, kp, "a list of module names (`__lazy_modules__ = [\"a.b\", \"m\"]`)");
    lazy_used_ = true;
  } else if (kind == "use" || kind == "resolve") {
    // resolve: the global's own value, read through globals() (which
    // resolves nothing), then its resolve().
    st.kind = kind == "use" ? StepKind::Use : StepKind::Resolve;
    st.target = kind == "use" ? name(body, kp, "a dotted name to read (\"m\", \"a.b.c\")")
                              : identifier(body, kp, "globals()['m'].resolve()");
    allowed.push_back("optional");
    if (v.contains("optional")) st.optional = boolean(v["optional"], ptr + "/optional", "\"optional\"");
    lazy_used_ = true;
  } else if (kind == "set_lazy_imports") {
    st.kind = StepKind::SetLazyImports;
    const std::string mode = string(body, kp, "a mode: \"normal\" or \"all\"");
    // 3.15.0rc1 refuses every other value (ValueError: mode must be 'normal' or 'all').
    if (mode != "normal" && mode != "all")
      fail(kp, fmt::format("unknown mode \"{}\"; CPython 3.15 takes \"normal\" or \"all\" (\"none\" was removed "
                           "before 3.15.0)",
                           mode));
    st.mutable_detail().lazy_all = mode == "all";
    lazy_used_ = true;
  } else if (kind == "set_lazy_imports_filter") {
    st.kind = StepKind::SetLazyFilter;
    if (!body.is_null()) {
      object(body, kp, "a filter {\"eager\": [module names it answers False for]}, or null (no filter)");
      expect_keys(body, kp, {"eager"}, "set_lazy_imports_filter");
      if (!body.contains("eager")) fail(kp, "a filter needs \"eager\": the module names it answers False for");
      st.mutable_detail().filter_eager = names(body["eager"], kp + "/eager", "a list of module names");
    }
    lazy_used_ = true;
  } else {
    read_meta_path_step(*this, v, ptr, kind, st, allowed);  // read_hooks.cc
  }
  for (auto& [k, _] : v.items()) {
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      std::string why = (k == "optional" && (kind == "lazy_import" || kind == "lazy_from"))
                            ? "\"optional\" would put the lazy import inside try/except, where CPython refuses it "
                              "(\"SyntaxError: lazy import not allowed inside try/except blocks\")"
                        : (k == "optional") ? "\"optional\" only goes with import, find_spec, import_module, use and "
                                              "resolve"
                        : (k == "nest")   ? "\"nest\" only goes with guard"
                        : (k == "body")   ? "\"body\" only goes with guard and call (a do block's steps are "
                                            "its value: {\"do\": [...]})"
                        : kStepKinds.count(k) || is_meta_path_step(k) ? ""
                                                                      : unknown_step_key(k, kind, allowed);
      fail_at_key(ptr + "/" + pointer_token(k), why);
    }
  }
  if (v.contains("body")) {
    // A call's steps are a function's: no lazy import there.
    const bool function = st.kind == StepKind::Call;
    if (function && function_depth_++ == 0) function_what_ = "the function of a call step at " + ptr;
    st.body = steps(v["body"], ptr + "/body");
    if (function) --function_depth_;
  }
  if (st.kind == StepKind::Do) {
    ++do_depth_;
    st.body = steps(body, kp);
    --do_depth_;
  }
  if (v.contains("repeat")) st.mutable_detail().repeat = int_field(v["repeat"], ptr + "/repeat", "\"repeat\"");
  if (v.contains("nest")) st.mutable_detail().nest = int_field(v["nest"], ptr + "/nest", "\"nest\"");
  if (v.contains("label")) {
    std::string l = string(v["label"], ptr + "/label", "a label");
    if (l.empty() || l.find('.') != std::string::npos)
      fail(ptr + "/label",
           fmt::format(
               "a label must be non-empty and contain no \".\" (counters are named LABEL.counter), found \"{}\"", l));
    if (auto it = labels_.find(l); it != labels_.end())
      fail(ptr + "/label",
           fmt::format("label \"{}\" is already used at {}; labels are unique in a scenario", l, it->second));
    labels_.emplace(l, ptr);
    st.label = static_cast<int>(label_order_.size());
    label_order_.push_back(l);
  }
  return st;
}

}  // namespace impsim::reading
