#include "impsim/scenario/axes.h"

#include <utility>

namespace impsim {

namespace {
struct CPythonEntry {
  CPython key;
  const char* name;
  const char* minor;
  int first_patch;  // the line's releases: X.Y.first_patch to the next line's first
  bool snapshot;    // gh-130094
  bool recheck;     // gh-143650
  bool threads;
  LegacyFinders legacy;
};
// Where each fix first shipped, from CPython's Misc/NEWS.d: gh-130094 in
// 3.14.0a6 and 3.13.16; gh-143650 in 3.15.0a6, 3.14.4 and 3.13.13.
const CPythonEntry kVersions[] = {
    {CPython::V3_9, "3.9", "3.9", 0, false, false, true, LegacyFinders::Reached},
    {CPython::V3_10, "3.10", "3.10", 0, false, false, true, LegacyFinders::ReachedWithWarning},
    {CPython::V3_11, "3.11", "3.11", 0, false, false, true, LegacyFinders::ReachedWithWarning},
    {CPython::V3_12, "3.12", "3.12", 0, false, false, true, LegacyFinders::Skipped},
    {CPython::V3_13, "3.13", "3.13", 0, false, false, true, LegacyFinders::Skipped},
    {CPython::V3_13_13, "3.13.13", "3.13", 13, false, true, true, LegacyFinders::Skipped},
    {CPython::V3_13_16, "3.13.16", "3.13", 16, true, true, true, LegacyFinders::Skipped},
    {CPython::V3_14, "3.14", "3.14", 0, true, false, true, LegacyFinders::Skipped},
    {CPython::V3_14_4, "3.14.4", "3.14", 4, true, true, true, LegacyFinders::Skipped},
    {CPython::V3_15, "3.15", "3.15", 0, true, true, false, LegacyFinders::Skipped},
};

// "X.Y.P" with an optional pre-release tag (a1, b2, rc1): X.Y and P.
std::optional<std::pair<std::string, int>> split_release(const std::string& s) {
  const size_t dot = s.rfind('.');
  if (dot == std::string::npos || s.find('.') == dot) return std::nullopt;
  size_t i = dot + 1;
  int patch = 0;
  size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && digits < 3) patch = patch * 10 + (s[i++] - '0'), ++digits;
  if (digits == 0 || (digits > 1 && s[dot + 1] == '0')) return std::nullopt;
  if (i < s.size()) {
    const std::string tag = s.substr(i);
    size_t t = tag.rfind("rc", 0) == 0 ? 2 : (tag[0] == 'a' || tag[0] == 'b') ? 1 : 0;
    if (t == 0 || t == tag.size() || tag.size() > t + 2) return std::nullopt;
    for (size_t k = t; k < tag.size(); ++k)
      if (tag[k] < '0' || tag[k] > '9') return std::nullopt;
  }
  return std::make_pair(s.substr(0, dot), patch);
}

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
bool reimports_initialising_parent(CPython v) { return entry_of(kVersions, v)->snapshot; }
bool rechecks_module_after_wait(CPython v) { return entry_of(kVersions, v)->recheck; }
bool threads_modelled(CPython v) { return entry_of(kVersions, v)->threads; }
LegacyFinders legacy_finders(CPython v) { return entry_of(kVersions, v)->legacy; }
const char* cpython_name(CPython v) { return entry_of(kVersions, v)->name; }
const char* cpython_minor(CPython v) { return entry_of(kVersions, v)->minor; }
std::optional<CPython> parse_cpython(const std::string& s) {
  if (auto key = key_named(kVersions, s)) return key;
  auto release = split_release(s);
  if (!release) return std::nullopt;
  std::optional<CPython> line;
  for (auto& e : kVersions)
    if (release->first == e.minor && release->second >= e.first_patch) line = e.key;
  return line;
}
std::vector<std::string> cpython_names() { return names_of(kVersions); }
std::string cpython_list() { return joined(cpython_names()); }

}  // namespace impsim
