#include "impsim/scenario/axes.h"

namespace impsim {

namespace {
struct CPythonEntry {
  CPython key;
  const char* name;
  bool snapshot;
  LegacyFinders legacy;
};
const CPythonEntry kVersions[] = {
    {CPython::V3_9, "3.9", false, LegacyFinders::Reached},
    {CPython::V3_10, "3.10", false, LegacyFinders::ReachedWithWarning},
    {CPython::V3_11, "3.11", false, LegacyFinders::ReachedWithWarning},
    {CPython::V3_12, "3.12", false, LegacyFinders::Skipped},
    {CPython::V3_13, "3.13", false, LegacyFinders::Skipped},
    {CPython::V3_14, "3.14", true, LegacyFinders::Skipped},
};

// The two tables share one shape: a key, its name, what it switches.
template <class Table, class Key>
const auto* entry_of(const Table& table, Key key) {
  for (auto& e : table)
    if (e.key == key) return &e;
  return &table[0];
}

template <class Table>
auto key_named(const Table& table, const std::string& name) -> std::optional<decltype(table[0].key)> {
  for (auto& e : table)
    if (name == e.name) return e.key;
  return std::nullopt;
}

template <class Table>
std::vector<std::string> names_of(const Table& table) {
  std::vector<std::string> out;
  for (auto& e : table) out.emplace_back(e.name);
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

RevisionRules rules_of(Revision r) { return entry_of(kRevisions, r)->rules; }
const char* revision_name(Revision r) { return entry_of(kRevisions, r)->name; }
std::optional<Revision> parse_revision(const std::string& s) { return key_named(kRevisions, s); }
std::vector<std::string> revision_names() { return names_of(kRevisions); }
std::string revision_list() { return joined(revision_names()); }

bool find_spec_iterates_snapshot(CPython v) { return entry_of(kVersions, v)->snapshot; }
LegacyFinders legacy_finders(CPython v) { return entry_of(kVersions, v)->legacy; }
const char* cpython_name(CPython v) { return entry_of(kVersions, v)->name; }
std::optional<CPython> parse_cpython(const std::string& s) { return key_named(kVersions, s); }
std::vector<std::string> cpython_names() { return names_of(kVersions); }
std::string cpython_list() { return joined(cpython_names()); }

}  // namespace impsim
