#include "impsim/base/under_valgrind.h"

#include <cstdlib>
#include <string_view>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>  // RUNNING_ON_VALGRIND: a macro, nothing to link
#endif

namespace impsim {

bool under_valgrind() {
#if defined(RUNNING_ON_VALGRIND)
  if (RUNNING_ON_VALGRIND) return true;
#endif
  const char* preload = std::getenv("LD_PRELOAD");
  return preload && std::string_view(preload).find("vgpreload") != std::string_view::npos;
}

}  // namespace impsim
