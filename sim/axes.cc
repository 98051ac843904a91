#include "impsim/axes.h"

namespace impsim {

namespace {
struct RevisionEntry {
  Revision revision;
  const char* name;
  RevisionRules rules;
};
const RevisionEntry kRevisions[] = {
    {Revision::B52ce17, "b52ce17",
     {.guard_saves_copy = true, .swap_drops_proxies = true, .cached_spec_is_package = true, .enable_takes_blocked = true}},
    {Revision::R04efefd, "04efefd",
     {.guard_saves_copy = false,
      .swap_drops_proxies = false,
      .cached_spec_is_package = false,
      .enable_takes_blocked = false}},
};

struct CPythonEntry {
  CPython version;
  const char* name;
  bool snapshot;
};
const CPythonEntry kVersions[] = {
    {CPython::V3_9, "3.9", false},   {CPython::V3_10, "3.10", false}, {CPython::V3_11, "3.11", false},
    {CPython::V3_12, "3.12", false}, {CPython::V3_13, "3.13", false}, {CPython::V3_14, "3.14", true},
};
}  // namespace

RevisionRules rules_of(Revision r) {
  for (auto& e : kRevisions)
    if (e.revision == r) return e.rules;
  return kRevisions[0].rules;
}

const char* revision_name(Revision r) {
  for (auto& e : kRevisions)
    if (e.revision == r) return e.name;
  return "?";
}

std::optional<Revision> parse_revision(const std::string& s) {
  for (auto& e : kRevisions)
    if (s == e.name) return e.revision;
  return std::nullopt;
}

std::string revision_list() {
  std::string s;
  for (auto& e : kRevisions) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

bool find_spec_iterates_snapshot(CPython v) {
  for (auto& e : kVersions)
    if (e.version == v) return e.snapshot;
  return false;
}

const char* cpython_name(CPython v) {
  for (auto& e : kVersions)
    if (e.version == v) return e.name;
  return "?";
}

std::optional<CPython> parse_cpython(const std::string& s) {
  for (auto& e : kVersions)
    if (s == e.name) return e.version;
  return std::nullopt;
}

std::string cpython_list() {
  std::string s;
  for (auto& e : kVersions) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

}  // namespace impsim
