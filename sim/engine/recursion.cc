#include "impsim/engine/recursion.h"

namespace impsim {

// Measured with the default recursion limit (1000) by
// tools/check/recursion_depth on 3.9.18, 3.10.13, 3.11.2, 3.11.7, 3.12.1
// and 3.13.0, and on the WebAssembly builds of 3.12.7, 3.13.2, 3.14.2 and
// 3.15.0rc1. Up to 3.11 a C call counts as a frame: _find_spec's lock
// context (__enter__, then _imp.acquire_lock) needs two frames above it,
// an import chain's module lock one more than the chain. 3.12 counts
// Python frames only; 3.13 lets util.find_spec's call of _find_spec go
// two frames past the limit, and a hook calling itself never raises there;
// 3.14 and 3.15 are 3.12 again. 3.13.16 took 3.14's _find_and_load_unlocked
// into 3.13: no interpreter of it here, so it is not modelled.
RecursionRule recursion_rule(CPython v) {
  RecursionRule r;
  switch (v) {
    case CPython::V3_9:
    case CPython::V3_10:
    case CPython::V3_11:
      r = {.modelled = true,
           .search_via_import = 999,
           .search_via_find_spec = 1000,
           .finder_after_search = 998,
           .hook_from_hook = 1000,
           .body_frames = 7,
           .create_module_frames = 5,
           .call_suffix = true};
      if (v != CPython::V3_11) r.hook_suffix = " in comparison";
      break;
    case CPython::V3_12:
    case CPython::V3_14:
    case CPython::V3_14_4:
    case CPython::V3_15:
      r = {.modelled = true,
           .search_via_import = 997,
           .search_via_find_spec = 1000,
           .finder_after_search = 999,
           .hook_from_hook = 1000,
           .body_frames = 6,
           .create_module_frames = 5,
           .call_suffix = false};
      break;
    case CPython::V3_13:
    case CPython::V3_13_13:  // gh-143650 adds no frame on these paths
      r = {.modelled = true,
           .search_via_import = 997,
           .search_via_find_spec = 1002,
           .finder_after_search = 999,
           .hook_from_hook = 0,
           .body_frames = 6,
           .create_module_frames = 5,
           .call_suffix = false};
      break;
    case CPython::V3_13_16:
      break;
  }
  return r;
}

}  // namespace impsim
