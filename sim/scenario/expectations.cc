#include "impsim/scenario/expectations.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "impsim/base/did_you_mean.h"
#include "impsim/base/json_scan.h"
#include "impsim/base/ratio.h"
#include "impsim/base/text.h"

namespace impsim {

namespace {

constexpr std::array<const char*, 5> kOps = {"<=", "<", ">=", ">", "=="};

// "1/1000", "0.001", "250": the exact fraction, or nullopt.
std::optional<Fraction> parse_fraction(const std::string& s) {
  auto digits = [](std::string_view t, uint64_t& out) {
    if (t.empty() || t.size() > 18 || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    std::from_chars(t.data(), t.data() + t.size(), out);
    return true;
  };
  Fraction f;
  if (auto slash = s.find('/'); slash != std::string::npos) {
    if (!digits(std::string_view(s).substr(0, slash), f.num) || !digits(std::string_view(s).substr(slash + 1), f.den) ||
        f.den == 0)
      return std::nullopt;
    return f;
  }
  auto dot = s.find('.');
  std::string whole = s.substr(0, dot), frac = dot == std::string::npos ? "" : s.substr(dot + 1);
  if (frac.size() > 12) return std::nullopt;
  uint64_t w = 0, fr = 0;
  if (!digits(whole.empty() ? "0" : whole, w) || (!frac.empty() && !digits(frac, fr))) return std::nullopt;
  f.den = 1;
  for (size_t i = 0; i < frac.size(); ++i) f.den *= 10;
  if (w > UINT64_MAX / f.den / 2) return std::nullopt;
  f.num = w * f.den + fr;
  return f;
}

std::string fraction_text(const Fraction& f) {
  return f.den == 1 ? std::to_string(f.num) : fmt::format("{}/{}", f.num, f.den);
}

}  // namespace

Budget parse_budget(const nlohmann::json& value, const std::string& ptr, const std::vector<Variant>& variants,
                    const std::function<void(const std::string&, const std::string&, BudgetFault)>& fail) {
  Budget b;
  if (value.contains("ratio_to")) {
    const auto& r = value["ratio_to"];
    if (!r.is_string()) fail(ptr + "/ratio_to", "expected the variant the ratio is to (a string)", BudgetFault::AtValue);
    const std::string name = r.get<std::string>();
    b.ratio_to = parse_variant(name);
    if (!b.ratio_to || std::find(variants.begin(), variants.end(), *b.ratio_to) == variants.end())
      fail(ptr + "/ratio_to", fmt::format("\"{}\" is not a variant this scenario runs{}", name,
                                          did_you_mean_note(name, variant_names(variants), '"')),
           BudgetFault::AtValue);
  }
  for (auto& [key, v] : value.items()) {
    if (key == "ratio_to") continue;
    std::string p = ptr + "/" + pointer_token(key);
    if (std::find(kOps.begin(), kOps.end(), key) == kOps.end())
      fail(p, fmt::format("unknown key \"{}\" in a budget{}; expected one of: <=, <, >=, >, ==, ratio_to", key,
                          did_you_mean_note(key, {"<=", "<", ">=", ">", "==", "ratio_to"}, '"')),
           BudgetFault::AtKey);
    std::optional<Fraction> f;
    if (v.is_number_unsigned()) f = Fraction{v.get<uint64_t>(), 1};
    else if (v.is_number_float() && b.ratio_to && v.get<double>() >= 0) f = parse_fraction(fmt::format("{}", v.get<double>()));
    else if (v.is_string() && b.ratio_to) f = parse_fraction(v.get<std::string>());
    if (!f)
      fail(p, !b.ratio_to
                  ? "expected a count (an integer >= 0)"
                  : "expected a ratio >= 0: an integer, a decimal (0.001) or a fraction as a string (\"1/1000\")",
           BudgetFault::AtValue);
    b.bounds.push_back({key, *f});
  }
  if (b.bounds.empty())
    fail(ptr, "expected a budget: at least one of <=, <, >=, >, == (such as {\"<=\": 20}), optionally with ratio_to",
         BudgetFault::AtValue);
  return b;
}

bool budget_holds(const Budget& b, const Count& actual, const std::optional<Count>& baseline) {
  if (b.ratio_to && (!baseline || *baseline == 0)) return false;
  for (const Bound& bound : b.bounds) {
    // actual / base  OP  num / den  <=>  actual * den  OP  num * base
    Count lhs = actual * Count(bound.value.den);
    Count rhs = Count(bound.value.num) * (!b.ratio_to ? Count(1) : *baseline);
    auto c = lhs <=> rhs;
    bool ok = bound.op == "<=" ? c <= 0 : bound.op == "<" ? c < 0 : bound.op == ">=" ? c >= 0 : bound.op == ">" ? c > 0 : c == 0;
    if (!ok) return false;
  }
  return true;
}

std::string budget_text(const Budget& b) {
  std::string out;
  for (const Bound& bound : b.bounds) {
    std::string v = !b.ratio_to ? grouped(bound.value.num) : ratio_text(bound.value.num, bound.value.den);
    if (bound.value.den != 1 && !b.ratio_to) v = fraction_text(bound.value);
    out += (out.empty() ? "" : " and ") + bound.op + " " + v;
  }
  if (b.ratio_to) out += " of " + variant_name(*b.ratio_to);
  return out;
}

nlohmann::ordered_json budget_json(const Budget& b) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (b.ratio_to) j["ratio_to"] = variant_name(*b.ratio_to);
  for (const Bound& bound : b.bounds) {
    if (bound.value.den == 1) j[bound.op] = bound.value.num;
    else j[bound.op] = fraction_text(bound.value);
  }
  return j;
}

}  // namespace impsim
