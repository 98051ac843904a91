// A hang's wait in words (include/impsim/engine/threaded_outcome.h).
#include "impsim/engine/threaded_outcome.h"

#include <fmt/format.h>

namespace impsim {

std::string hang_wait_text(const HangWait& w) {
  switch (w.kind) {
    case HangWait::Kind::GlobalLock:
      return fmt::format("thread {} waits for the global import lock, held by thread {}", w.thread, w.on);
    case HangWait::Kind::ModuleLock:
      return fmt::format("thread {} waits for the module lock of {}, held by thread {}", w.thread, w.lock, w.on);
    case HangWait::Kind::HookLock:
      return fmt::format("thread {} waits for {}, held by thread {}", w.thread, w.lock, w.on);
    case HangWait::Kind::Join:
      return fmt::format("thread {} waits for thread {} to finish (join)", w.thread, w.on);
  }
  return "thread " + w.thread + " waits";
}

std::string hang_waits_text(const std::vector<HangWait>& waits) {
  std::string out;
  for (const HangWait& w : waits) out += (out.empty() ? "" : "; ") + hang_wait_text(w);
  return out;
}

}  // namespace impsim
