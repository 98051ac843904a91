// Interned dotted module names and interned name sets.
//
// Every name the engine can meet is known once the scenario is loaded, so it
// is interned up front: the hot path then compares integers, never strings.
// A NameSet (the finder's scope, its blocked list) is interned the same way,
// so saving and restoring a scope in a guard is an integer copy.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace impsim {

using NameId = int32_t;
inline constexpr NameId kNoName = -1;

class NameTable {
 public:
  // Interns `name` and all of its dotted ancestors.
  NameId intern(std::string_view name);
  NameId find(std::string_view name) const;  // kNoName when unknown

  const std::string& text(NameId id) const { return text_[id]; }
  NameId parent(NameId id) const { return parent_[id]; }
  // The last dotted component, interned on its own ("a.b.c" -> "c").
  int32_t last_atom(NameId id) const { return last_atom_[id]; }
  // `torch` or `torch.*`: the finder's _is_torch_module.
  bool is_torch(NameId id) const { return is_torch_[id]; }
  NameId top(NameId id) const;
  size_t size() const { return text_.size(); }

 private:
  std::vector<std::string> text_;
  std::vector<NameId> parent_;
  std::vector<int32_t> last_atom_;
  std::vector<char> is_torch_;
  std::unordered_map<std::string, NameId> index_;
  std::unordered_map<std::string, int32_t> atoms_;
};

// True when `name` is `module` or inside it (name == m or name.startswith(m + ".")).
bool is_or_inside(const NameTable& names, NameId name, NameId module);

// A valid Python dotted name: identifiers joined by single dots.
bool is_dotted_name(std::string_view s);

}  // namespace impsim
