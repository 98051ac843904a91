// CPython's RecursionError for a finder that re-enters the import system
// without a guard (docs/model.md, "Where the behaviour above was silent",
// Recursion). The engine keeps a count of the Python frames the real
// interpreter would have open (PyThread::py_depth: the program's top level
// is frame 1) and, at each search and each hook
// call, asks the version's rule whether the interpreter gets that far with
// the default recursion limit (1000). The figures are measured on the real
// interpreters by tools/check/recursion_depth; 3.14 is not measured, so it
// keeps --max-lookup-depth.
#pragma once

#include <cstdint>

#include "impsim/scenario/axes.h"

namespace impsim {

// How a search was entered: each way is a chain of importlib frames between
// the frame that asks and _find_spec.
enum class SearchEntry : uint8_t {
  ImportStatement,  // `import x`: _find_and_load, _find_and_load_unlocked
  FindSpec          // importlib.util.find_spec(x): util.find_spec
};

struct RecursionRule {
  bool modelled = false;
  // _find_spec at frame depth d is entered through a chain iff d <= the chain's bound.
  int64_t search_via_import = 0;
  int64_t search_via_find_spec = 0;
  // A finder is called from _find_spec at depth d iff d <= this (its lock
  // context's __enter__ and the call itself need the room).
  int64_t finder_after_search = 0;
  // A hook called directly by a hook (`call`) at depth d runs iff d <= this;
  // 0: not modelled (3.13.0 does not raise: it grows until killed), so
  // --max-lookup-depth bounds it.
  int64_t hook_from_hook = 0;
  // Frames from a module's importer to its body: _find_and_load,
  // _find_and_load_unlocked, _load_unlocked, exec_module,
  // _call_with_frames_removed, exec and the body's own frame.
  int64_t body_frames = 0;
  // Frames from a module's importer to an import a served loader's
  // create_module makes: _find_and_load, _find_and_load_unlocked,
  // _load_unlocked, module_from_spec and create_module (whose import
  // statements run in its frame).
  int64_t create_module_frames = 0;
  // 3.9 to 3.11 name the C call that ran out of room: " while calling a
  // Python object" (but a Python frame pushed by an import chain says nothing).
  bool call_suffix = false;
  // What a hook called by a hook says when it finds no room: 3.9 and 3.10
  // name the comparison its claims test makes first (" in comparison").
  const char* hook_suffix = "";
};

// Frames of each entry chain, _find_spec excluded.
inline int64_t entry_frames(SearchEntry e) { return e == SearchEntry::ImportStatement ? 2 : 1; }

RecursionRule recursion_rule(CPython v);

}  // namespace impsim
