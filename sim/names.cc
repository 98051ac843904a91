#include "impsim/names.h"

#include <algorithm>

#include "impsim/counters.h"

namespace impsim {

NameId NameTable::intern(std::string_view name) {
  if (auto it = index_.find(std::string(name)); it != index_.end()) return it->second;
  NameId parent = kNoName;
  std::string_view last = name;
  if (auto dot = name.rfind('.'); dot != std::string_view::npos) {
    parent = intern(name.substr(0, dot));
    last = name.substr(dot + 1);
  }
  auto [atom_it, _] = atoms_.try_emplace(std::string(last), static_cast<int32_t>(atoms_.size()));
  NameId id = static_cast<NameId>(text_.size());
  text_.emplace_back(name);
  parent_.push_back(parent);
  last_atom_.push_back(atom_it->second);
  is_torch_.push_back(name == "torch" || name.starts_with("torch."));
  index_.emplace(std::string(name), id);
  return id;
}

NameId NameTable::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? kNoName : it->second;
}

NameId NameTable::top(NameId id) const {
  while (parent_[id] != kNoName) id = parent_[id];
  return id;
}

bool is_or_inside(const NameTable& names, NameId name, NameId module) {
  for (NameId n = name; n != kNoName; n = names.parent(n))
    if (n == module) return true;
  return false;
}

static bool is_keyword(std::string_view s) {
  static constexpr std::string_view kKeywords[] = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break",
      "class", "continue", "def", "del", "elif", "else", "except", "finally", "for",
      "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not",
      "or", "pass", "raise", "return", "try", "while", "with", "yield"};
  return std::find(std::begin(kKeywords), std::end(kKeywords), s) != std::end(kKeywords);
}

// ASCII identifiers only: scenario names become file names and import
// statements in tools/crosscheck, so anything exotic is refused up front.
static bool is_identifier(std::string_view s) {
  if (s.empty() || is_keyword(s)) return false;
  auto head = [](char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!head(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return head(c) || (c >= '0' && c <= '9'); });
}

bool is_dotted_name(std::string_view s) {
  if (s.empty()) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (!is_identifier(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace impsim
