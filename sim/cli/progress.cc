#include "progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "impsim/base/escape.h"

namespace impsim::cli {

Progress::Progress(bool enabled) : on_(enabled && isatty(STDERR_FILENO) != 0) {
  if (!on_) return;
  start_ = std::chrono::steady_clock::now();
  thread_ = std::thread([this] { tick(); });
}

Progress::~Progress() {
  if (!on_) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (shown_) {
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

void Progress::set(std::string what) {
  if (!on_) return;
  std::lock_guard lock(mu_);
  what_ = std::move(what);
}

void Progress::tick() {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (s < 1.0) continue;  // a run shorter than a second shows nothing
    // what_ names the file (and a sweep's parameter): escaped, so that the
    // only control sequences on the line are the progress line's own.
    fmt::print(stderr, "\r\033[Kimpsim: {} ({:.0f} s)", what_.empty() ? "running" : terminal_text(what_), s);
    std::fflush(stderr);
    shown_ = true;
  }
}

}  // namespace impsim::cli
