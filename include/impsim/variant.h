// The finder designs impsim can run side by side. Each is the released
// finder plus a set of changes; docs/designs.md has the one-line change
// each makes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace impsim {

enum class Variant {
  Before,                // as released
  After,                 // the reentrancy fix (the reference PR)
  IdempotentEnable,      // enable inserts the finder only when it is absent
  DisableAll,            // disable removes every copy, not one
  IndexedWalk,           // the fix, plus toggles that visit only torch names
  AfterIdempotentEnable  // the fix and idempotent enable together
};

struct Design {
  bool resolving_fix = false;      // find_spec returns None for a name it is resolving
  bool idempotent_enable = false;  // sys.meta_path.insert only when P is absent
  bool disable_all = false;        // remove every occurrence of P
  bool indexed_walk = false;       // a walk examines only the torch names
};

Design design_of(Variant v);
const char* variant_name(Variant v);
std::optional<Variant> parse_variant(const std::string& s);
// Every variant, in the order the docs list them.
const std::vector<Variant>& all_variants();
// "before, after, idempotent-enable, ..." for messages.
std::string variant_list();

}  // namespace impsim
