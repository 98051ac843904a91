// A threaded run's outcome in words (outcome_words.h).
#include "impsim/run/outcome_words.h"

#include <fmt/format.h>

namespace impsim {

std::string thread_end_text(const ThreadEnd& t) {
  switch (t.how) {
    case ThreadEnd::How::Returned:
      return t.thread + ": ok";
    case ThreadEnd::How::Raised:
      return fmt::format("{}: {}: {}", t.thread, t.type, t.message);
    case ThreadEnd::How::Waiting:
      return t.thread + ": waiting";
    case ThreadEnd::How::NeverStarted:
      return t.thread + ": never started";
  }
  return t.thread;
}

std::vector<std::string> thread_end_texts(const std::vector<ThreadEnd>& ends) {
  std::vector<std::string> out;
  for (const ThreadEnd& t : ends) out.push_back(thread_end_text(t));
  return out;
}

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
