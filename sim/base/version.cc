#include "impsim/base/version.h"

namespace impsim {

const char* impsim_version() { return IMPSIM_VERSION; }

}  // namespace impsim
