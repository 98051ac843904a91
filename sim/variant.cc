#include "impsim/variant.h"

namespace impsim {

namespace {
struct Entry {
  DesignId variant;
  const char* name;
  Design design;
};
const Entry kEntries[] = {
    {DesignId::Before, "before", {}},
    {DesignId::After, "after", {.resolving_fix = true}},
    {DesignId::IdempotentEnable, "idempotent-enable", {.idempotent_enable = true}},
    {DesignId::DisableAll, "disable-all", {.disable_all = true}},
    {DesignId::IndexedWalk, "indexed-walk", {.resolving_fix = true, .indexed_walk = true}},
    {DesignId::AfterIdempotentEnable, "after+idempotent-enable", {.resolving_fix = true, .idempotent_enable = true}},
};
}  // namespace

Design design_of(Variant v) {
  for (auto& e : kEntries)
    if (e.variant == v.design) return e.design;
  return {};
}

std::string variant_name(Variant v) {
  for (auto& e : kEntries)
    if (e.variant == v.design) return v.revision ? std::string(e.name) + "@" + revision_name(*v.revision) : e.name;
  return "?";
}

std::optional<Variant> parse_variant(const std::string& s) {
  auto at = s.find('@');
  std::string design = s.substr(0, at);
  std::optional<Revision> revision;
  if (at != std::string::npos) {
    revision = parse_revision(s.substr(at + 1));
    if (!revision) return std::nullopt;
  }
  for (auto& e : kEntries)
    if (design == e.name) return Variant{e.variant, revision};
  return std::nullopt;
}

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> v = [] {
    std::vector<Variant> out;
    for (auto& e : kEntries) out.push_back(Variant{e.variant, std::nullopt});
    return out;
  }();
  return v;
}

std::string variant_list() {
  std::string s;
  for (auto& e : kEntries) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s + " (each may take @REVISION: " + revision_list() + ")";
}

}  // namespace impsim
