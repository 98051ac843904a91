#include "impsim/variant.h"

namespace impsim {

namespace {
struct Entry {
  Variant variant;
  const char* name;
  Design design;
};
const Entry kEntries[] = {
    {Variant::Before, "before", {}},
    {Variant::After, "after", {.resolving_fix = true}},
    {Variant::IdempotentEnable, "idempotent-enable", {.idempotent_enable = true}},
    {Variant::DisableAll, "disable-all", {.disable_all = true}},
    {Variant::IndexedWalk, "indexed-walk", {.resolving_fix = true, .indexed_walk = true}},
    {Variant::AfterIdempotentEnable, "after+idempotent-enable", {.resolving_fix = true, .idempotent_enable = true}},
};
}  // namespace

Design design_of(Variant v) {
  for (auto& e : kEntries)
    if (e.variant == v) return e.design;
  return {};
}

const char* variant_name(Variant v) {
  for (auto& e : kEntries)
    if (e.variant == v) return e.name;
  return "?";
}

std::optional<Variant> parse_variant(const std::string& s) {
  for (auto& e : kEntries)
    if (s == e.name) return e.variant;
  return std::nullopt;
}

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> v = [] {
    std::vector<Variant> out;
    for (auto& e : kEntries) out.push_back(e.variant);
    return out;
  }();
  return v;
}

std::string variant_list() {
  std::string s;
  for (auto& e : kEntries) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

}  // namespace impsim
