// Interned dotted module names and interned name sets.
//
// Every name the engine can meet is known once the scenario is loaded, so it
// is interned up front: the hot path then compares integers, never strings.
// A NameSet (the finder's scope, its blocked list) is interned the same way,
// so saving and restoring a scope in a guard is an integer copy.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "impsim/base/flat_map.h"

namespace impsim {

using NameId = int32_t;
inline constexpr NameId kNoName = -1;

class NameTable {
 public:
  // Interns `name` and all of its dotted ancestors. Linear in the name's
  // length: the text is stored once, ancestors are views into it, and the
  // index is by (parent, last part), so no ancestor is hashed or copied whole.
  NameId intern(std::string_view name);
  // Interns `parent` + "." + the part `atom` names (last_atom of some name).
  NameId intern_child(NameId parent, int32_t atom);
  NameId find(std::string_view name) const;  // kNoName when unknown
  // Room for `n` names, and as many parts, without growing: a scenario
  // says how many it has (its tree entries, above all), and growing the
  // indexes moved every name interned so far at each doubling.
  void reserve(size_t n);

  // The name as text, built on first use: reports ask for few names, and
  // the ancestors of a long name would otherwise cost its length each.
  // Not safe to call from two threads at once (one engine runs at a time).
  const std::string& text(NameId id) const;
  std::string_view view(NameId id) const { return view_[id]; }
  NameId parent(NameId id) const { return parent_[id]; }
  // The last dotted component, interned on its own ("a.b.c" -> "c").
  int32_t last_atom(NameId id) const { return last_atom_[id]; }
  // `torch` or `torch.*`: the finder's _is_torch_module.
  bool is_torch(NameId id) const { return is_torch_[id]; }
  NameId top(NameId id) const;
  size_t size() const { return view_.size(); }

 private:
  NameId add(NameId parent, int32_t atom, std::string_view text);
  int32_t atom_of(std::string_view part);
  int32_t atom_of(std::string_view part, uint64_t hash);  // hash: atoms_.hash(part)
  std::string_view store(std::string_view text);          // a copy that lives as long as the table
  static uint64_t child_key(NameId parent, int32_t atom) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(parent + 1)) << 32) | static_cast<uint32_t>(atom);
  }

  std::vector<std::unique_ptr<char[]>> storage_;  // blocks holding each new full name once
  char* block_at_ = nullptr;                      // the free end of the last block
  size_t block_left_ = 0;
  std::vector<std::string_view> view_;  // into storage_
  std::vector<NameId> parent_;
  std::vector<int32_t> last_atom_;
  std::vector<char> is_torch_;
  // Filled by text(), only for the names asked for: a slot per name would
  // cost 32 bytes for every ancestor of every name.
  mutable std::unordered_map<NameId, std::string> text_;
  FlatMap<uint64_t, NameId> child_;           // (parent + 1, atom) -> name
  FlatMap<std::string_view, int32_t> atoms_;  // views into storage_
  std::vector<std::string_view> atom_text_;
  int32_t torch_atom_ = -1;
};

// `torch` or `torch.*`, as text: the finder's _is_torch_module.
inline bool is_torch_name(std::string_view name) { return name == "torch" || name.starts_with("torch."); }

// True when `name` is `module` or inside it (name == m or name.startswith(m + ".")).
bool is_or_inside(const NameTable& names, NameId name, NameId module);

// The module name CPython 3.11 uses for the dotted name `s` (UTF-8), or
// nullopt when its parser would refuse it: each part an identifier
// (PEP 3131, str.isidentifier()) that is not a keyword, and the whole
// NFKC-normalised as the parser normalises identifiers ("ｍｏｄ" -> "mod").
std::optional<std::string> python_module_name(std::string_view s);
bool is_dotted_name(std::string_view s);  // python_module_name(s) has a value

}  // namespace impsim
