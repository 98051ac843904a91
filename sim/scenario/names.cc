#include "impsim/scenario/names.h"

#include <algorithm>

#include "impsim/scenario/counters.h"
#include "impsim/base/unicode_names.h"

namespace impsim {

int32_t NameTable::atom_of(std::string_view part) {
  auto [it, fresh] = atoms_.try_emplace(part, static_cast<int32_t>(atom_text_.size()));
  if (fresh) atom_text_.push_back(part);
  return it->second;
}

NameId NameTable::add(NameId parent, int32_t atom, std::string_view text) {
  NameId id = static_cast<NameId>(view_.size());
  view_.push_back(text);
  parent_.push_back(parent);
  last_atom_.push_back(atom);
  is_torch_.push_back(parent == kNoName ? atom == torch_atom_ : is_torch_[parent]);
  child_.emplace((static_cast<uint64_t>(static_cast<uint32_t>(parent + 1)) << 32) | static_cast<uint32_t>(atom), id);
  return id;
}

NameId NameTable::intern(std::string_view name) {
  if (NameId id = find(name); id != kNoName) return id;
  // Something is new: keep the whole text once; every part and ancestor is a
  // view into it. Ancestors are created before their children, as before.
  auto buf = std::make_unique<char[]>(name.size());
  std::copy(name.begin(), name.end(), buf.get());
  std::string_view full(buf.get(), name.size());
  storage_.push_back(std::move(buf));
  if (torch_atom_ < 0) torch_atom_ = atom_of("torch");
  NameId node = kNoName;
  size_t start = 0;
  while (true) {
    size_t dot = full.find('.', start);
    size_t end = dot == std::string_view::npos ? full.size() : dot;
    int32_t atom = atom_of(full.substr(start, end - start));
    auto key = (static_cast<uint64_t>(static_cast<uint32_t>(node + 1)) << 32) | static_cast<uint32_t>(atom);
    auto it = child_.find(key);
    node = it != child_.end() ? it->second : add(node, atom, full.substr(0, end));
    if (dot == std::string_view::npos) return node;
    start = dot + 1;
  }
}

NameId NameTable::intern_child(NameId parent, int32_t atom) {
  auto key = (static_cast<uint64_t>(static_cast<uint32_t>(parent + 1)) << 32) | static_cast<uint32_t>(atom);
  if (auto it = child_.find(key); it != child_.end()) return it->second;
  return intern(std::string(view_[parent]) + "." + std::string(atom_text_[atom]));
}

NameId NameTable::find(std::string_view name) const {
  NameId node = kNoName;
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    size_t end = dot == std::string_view::npos ? name.size() : dot;
    auto atom = atoms_.find(name.substr(start, end - start));
    if (atom == atoms_.end()) return kNoName;
    auto key = (static_cast<uint64_t>(static_cast<uint32_t>(node + 1)) << 32) | static_cast<uint32_t>(atom->second);
    auto it = child_.find(key);
    if (it == child_.end()) return kNoName;
    node = it->second;
    if (dot == std::string_view::npos) return node;
    start = dot + 1;
  }
}

const std::string& NameTable::text(NameId id) const {
  auto [it, fresh] = text_.try_emplace(id);
  if (fresh) it->second = view_[id];
  return it->second;
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
  // Most names are rejected on length or first letter, before the search:
  // every keyword is 2 to 8 ASCII letters starting with a-y, F, N or T.
  if (s.size() < 2 || s.size() > 8 || !((s[0] >= 'a' && s[0] <= 'y') || s[0] == 'F' || s[0] == 'N' || s[0] == 'T'))
    return false;
  static constexpr std::string_view kKeywords[] = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break",
      "class", "continue", "def", "del", "elif", "else", "except", "finally", "for",
      "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not",
      "or", "pass", "raise", "return", "try", "while", "with", "yield"};
  return std::find(std::begin(kKeywords), std::end(kKeywords), s) != std::end(kKeywords);
}

bool is_dotted_name(std::string_view s) { return python_module_name(s).has_value(); }

std::optional<std::string> python_module_name(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool ascii = true;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty() || is_keyword(part)) return std::nullopt;
    // ASCII, the common case, needs no tables; and keywords are matched
    // before normalisation, as CPython's parser does ("ｉｆ" imports "if").
    if (std::all_of(part.begin(), part.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
      auto head = [](char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
      if (!head(part[0]) ||
          !std::all_of(part.begin(), part.end(), [&](char c) { return head(c) || (c >= '0' && c <= '9'); }))
        return std::nullopt;
    } else {
      ascii = false;
      if (!is_unicode_identifier(part)) return std::nullopt;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return ascii ? std::string(s) : nfkc_identifier(s);
}

}  // namespace impsim
