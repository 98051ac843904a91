// Private to the scenario reader (sim/reader/): Reader checks one JSON value at a
// time against what the scenario format expects, and fails with the file,
// line, column and JSON pointer of the value.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impsim/base/did_you_mean.h"
#include "impsim/base/errors.h"
#include "impsim/base/unicode_names.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/scenario/names.h"
#include "impsim/scenario/scenario.h"

namespace impsim::reading {

using nlohmann::json;

inline const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "a value";
  }
}

inline std::string quoted(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// "cafe\u0301": two keys that print alike must not read alike in a message.
inline std::string ascii_quoted(const std::string& s) { return json(s).dump(-1, ' ', /*ensure_ascii=*/true); }

// Characters, not bytes: what JSON Schema's maxLength counts.
inline size_t characters(std::string_view s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

class Reader {
 public:
  Reader(const JsonSource& src, std::string file, const InputLimits& limits)
      : src_(src), file_(std::move(file)), limits_(limits) {}

  [[noreturn]] void fail(const std::string& ptr, const std::string& msg) const {
    throw InputError(file_, src_.position_of(ptr), ptr, msg);
  }
  // An error about a key itself (unknown, misplaced): at the key, where the
  // author typed it, not at its value.
  [[noreturn]] void fail_at_key(const std::string& ptr, const std::string& msg) const {
    throw InputError(file_, src_.key_position_of(ptr), ptr, msg);
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
    expect_keys(obj, ptr, allowed.begin(), allowed.end(), what);
  }
  void expect_keys(const json& obj, const std::string& ptr, const std::string_view* begin, const std::string_view* end,
                   const std::string& what) const {
    for (auto& [k, _] : obj.items()) {
      if (std::find(begin, end, k) == end) {
        std::vector<std::string_view> sorted(begin, end);
        std::sort(sorted.begin(), sorted.end());
        std::string list;
        for (auto& a : sorted) list += (list.empty() ? "" : ", ") + std::string(a);
        auto near = did_you_mean(k, std::vector<std::string>(sorted.begin(), sorted.end()));
        fail_at_key(ptr + "/" + pointer_token(k),
                    fmt::format("unknown key \"{}\" in {}{}; expected one of: {}", k, what,
                                near ? fmt::format(" (did you mean \"{}\"?)", *near) : "", list));
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
    if (!n)
      fail(ptr, fmt::format("expected {} (a Python dotted module name such as \"pkg.sub\"), found \"{}\"", what, s));
    return *n;
  }
  std::vector<std::string> names(const json& v, const std::string& ptr, const std::string& what) const {
    array(v, ptr, what);
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) out.push_back(name(v[i], ptr + "/" + std::to_string(i), "a module name"));
    return out;
  }
  // A module name a step names, which inside a `do` block may hold "{i}",
  // the iteration (1 to N): "test_{i}". Checked as the name of iteration 1
  // and kept as a template, normalised piece by piece around each "{i}"
  // (digits join nothing under NFKC, so it is every iteration's normal form).
  std::string step_name(const json& v, const std::string& ptr, const std::string& what) const;
  // A name an import binds (no dot); `example` shows the statement in the error.
  std::string identifier(const json& v, const std::string& ptr, const std::string& example) const;
  std::vector<std::pair<std::string, std::string>> from_names(const json& v, const std::string& ptr) const;
  std::vector<std::string> step_names(const json& v, const std::string& ptr, const std::string& what) const {
    array(v, ptr, what);
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(step_name(v[i], ptr + "/" + std::to_string(i), "a module name"));
    return out;
  }
  // A string with "{i}" outside a `do` block is refused where it stands.
  void check_iteration_use(const std::string& ptr, const std::string& s) const {
    if (do_depth_ == 0 && s.find("{i}") != std::string::npos)
      fail(ptr, fmt::format("\"{{i}}\" stands for the iteration of a \"do\" block (1 to its repeat), and this step "
                            "is in none; wrap the steps in {{\"do\": [...], \"repeat\": N}}, found \"{}\"",
                            s));
  }
  IntField int_field(const json& v, const std::string& ptr, const std::string& what) {
    IntField f;
    f.pointer = ptr;
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      size_t at = s.find_first_of("+-*");
      std::string param = s.substr(1, at == std::string::npos ? std::string::npos : at - 1);
      if (s.size() < 2 || s[0] != '$' || !is_dotted_name(param) || param.find('.') != std::string::npos)
        fail(ptr, fmt::format("expected {} (an integer, \"$param\" or \"$param-1\"), found \"{}\"", what, s));
      f.param = param;
      if (at != std::string::npos) {
        // One constant, decimal digits only: "$N-1", "$N+2", "$k*3".
        std::string digits = s.substr(at + 1);
        bool ok = !digits.empty() && digits.size() <= 9 && digits.find_first_not_of("0123456789") == std::string::npos;
        if (!ok)
          fail(ptr, fmt::format("expected {} as \"$param\" with one constant applied (\"${}-1\", \"${}+1\", "
                                "\"${}*2\": an operator, then 1 to 9 decimal digits), found \"{}\"",
                                what, param, param, param, s));
        f.op = s[at];
        f.operand = std::stoll(digits);
      }
      param_refs_.push_back({f.param, ptr});
      return f;
    }
    f.value = integer(v, ptr, what + " (an integer, \"$param\" or \"$param-1\")", 0);
    return f;
  }

  std::vector<Step> steps(const json& v, const std::string& ptr);
  Step step(const json& v, const std::string& ptr);
  std::vector<std::string> scope(const json& v, const std::string& ptr, bool allow_level);

  std::vector<std::pair<std::string, std::string>> param_refs_;
  std::map<std::string, std::string> labels_;  // label -> pointer
  std::vector<std::string> label_order_;
  int do_depth_ = 0;  // `do` blocks the step being read is inside
  // Functions the steps being read run in (a call's body, a thread's
  // target), where CPython refuses `lazy import`; what the outermost is.
  int function_depth_ = 0;
  std::string function_what_;
  bool lazy_used_ = false;  // a PEP 810 step was read

  const JsonSource& src() const { return src_; }
  const std::string& file() const { return file_; }
  const InputLimits& limits() const { return limits_; }

 private:
  const JsonSource& src_;
  std::string file_;
  const InputLimits& limits_;
};

// Top-level keys whose values were read some other way than from the DOM
// (read_events.cc reads "tree" and "program" straight from the text).
// read_top_keys asks it for each key in kTopKeys order, so that what one
// key's reading depends on (labels numbered tree first, then program) is
// the same whichever way the value was read.
class TopKeySource {
 public:
  virtual ~TopKeySource() = default;
  virtual bool has(std::string_view key) const = 0;
  virtual void read(std::string_view key, Reader& r, Scenario& sc) = 0;
};

// Reads a scenario from its top-level object `root`: every key of kTopKeys
// in order, from `own` when it has the key, else from `root`. `root` holds
// every other key of the file (an unknown one is refused here).
Scenario read_top_keys(Reader& r, const json& root, TopKeySource* own);

}  // namespace impsim::reading
