// A progress line on standard error for anything that runs longer than
// about a second, shown only when standard error is a terminal (never in a
// CI log or a pipe) and not under --quiet. It is erased when done.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace impsim::cli {

class Progress {
 public:
  // `enabled`: the caller's say (false under --quiet); a terminal is checked here.
  explicit Progress(bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // What is running now ("nested_guards.json: k=3 (3 of 12)").
  void set(std::string what);

 private:
  void tick();
  bool on_ = false;
  bool shown_ = false;
  bool stop_ = false;
  std::string what_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace impsim::cli
