#include "impsim/scenario/variant.h"

#include <algorithm>

#include "impsim/base/did_you_mean.h"

namespace impsim {

namespace {
// Hook designs (docs/designs.md, "Designs for hooks"): snake_case, as the
// hook language's own words.
const DesignEntry kHookEntries[] = {
    {DesignId::AsIs, "as_is", {}},
    {DesignId::IdempotentInstall, "idempotent_install", {}},
    {DesignId::RemoveAll, "remove_all", {}},
    {DesignId::SkipSelf, "skip_self", {}},
    {DesignId::CallNext, "call_next", {}},
    {DesignId::GuardGlobalSet, "guard_global_set", {}},
    {DesignId::GuardObjectSet, "guard_object_set", {}},
    {DesignId::GuardThreadSet, "guard_thread_set", {}},
    {DesignId::GuardFlag, "guard_flag", {}},
    {DesignId::GuardRemoveSelf, "guard_remove_self", {}},
    {DesignId::UnlockAfterExec, "unlock_after_exec", {}},
};

// Every design of `table` on the run's revision, in the table's order.
template <size_t N>
std::vector<Variant> variants_of(const DesignEntry (&table)[N]) {
  std::vector<Variant> out;
  for (auto& e : table) out.push_back(Variant{e.id, std::nullopt, {}});
  return out;
}

// "before, after, ..." for messages.
template <size_t N>
std::string names_of(const DesignEntry (&table)[N]) {
  std::string s;
  for (auto& e : table) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

const DesignEntry* entry_of(DesignId d) {
  for (auto& e : kPaddleDesigns)
    if (e.id == d) return &e;
  for (auto& e : kHookEntries)
    if (e.id == d) return &e;
  return nullptr;
}
}  // namespace

Design design_of(Variant v) {
  const DesignEntry* e = entry_of(v.design);
  return e ? e->design : Design{};
}

std::string variant_name(Variant v) {
  const DesignEntry* e = entry_of(v.design);
  if (!e) return "?";
  std::string name = e->name;
  if (!v.hook_target.empty()) name += ":" + v.hook_target;
  return v.revision ? name + "@" + revision_name(*v.revision) : name;
}

std::vector<std::string> variant_names(const std::vector<Variant>& vs) {
  std::vector<std::string> out;
  for (const Variant& v : vs) out.push_back(variant_name(v));
  return out;
}

bool is_hook_design(DesignId d) {
  for (auto& e : kHookEntries)
    if (e.id == d) return true;
  return false;
}

std::optional<Variant> parse_variant(const std::string& s) {
  // DESIGN[:HOOK][@REVISION]: a hook design may name a revision too, for
  // the torch proxy finder a hook scenario runs (compare --revisions).
  auto at = s.find('@');
  std::string design = s.substr(0, at);
  std::optional<Revision> revision;
  if (at != std::string::npos) {
    revision = parse_revision(s.substr(at + 1));
    if (!revision) return std::nullopt;
  }
  if (auto colon = design.find(':'); colon != std::string::npos) {
    std::string target = design.substr(colon + 1);
    if (target.empty()) return std::nullopt;
    for (auto& e : kHookEntries)
      if (design.substr(0, colon) == e.name && e.id != DesignId::AsIs) return Variant{e.id, revision, target};
    return std::nullopt;
  }
  for (auto& e : kHookEntries)
    if (design == e.name) return Variant{e.id, revision, {}};
  for (auto& e : kPaddleDesigns)
    if (design == e.name) return Variant{e.id, revision, {}};
  return std::nullopt;
}

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> v = variants_of(kPaddleDesigns);
  return v;
}

const std::vector<Variant>& all_hook_variants() {
  static const std::vector<Variant> v = variants_of(kHookEntries);
  return v;
}

std::string hook_variant_list() {
  return names_of(kHookEntries) + " (each fix may take :HOOK to apply to that hook only)";
}

std::vector<std::string> design_names() {
  std::vector<std::string> out;
  for (auto& e : kPaddleDesigns) out.emplace_back(e.name);
  for (auto& e : kHookEntries) out.emplace_back(e.name);
  return out;
}

std::optional<std::string> nearest_variant(const std::string& s) {
  // The design and its "@REVISION" or ":HOOK" are each corrected on their own.
  const size_t cut = s.find_first_of("@:");
  const std::string design = s.substr(0, cut);
  std::string rest = cut == std::string::npos ? "" : s.substr(cut);
  const std::vector<std::string> designs = design_names();
  std::optional<std::string> d =
      std::find(designs.begin(), designs.end(), design) != designs.end() ? design : did_you_mean(design, designs);
  if (!d) return std::nullopt;
  if (rest.starts_with('@') && !parse_revision(rest.substr(1))) {
    std::optional<std::string> r = did_you_mean(rest.substr(1), revision_names());
    if (!r) return std::nullopt;
    rest = "@" + *r;
  }
  const std::string guess = *d + rest;
  if (guess == s || !parse_variant(guess)) return std::nullopt;
  return guess;
}

std::string nearest_variant_note(const std::string& s, char quote) {
  std::optional<std::string> near = nearest_variant(s);
  return near ? std::string(" (did you mean ") + quote + *near + quote + "?)" : "";
}

std::string variant_list() { return names_of(kPaddleDesigns) + " (each may take @REVISION: " + revision_list() + ")"; }

}  // namespace impsim
