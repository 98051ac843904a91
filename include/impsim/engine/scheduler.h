// Simulated Python threads, one schedule at a time.
//
// Each simulated thread runs on a fiber of its own (base/fiber.h), so a
// thread stopped in the middle of the engine's recursion keeps its C++
// frames while another runs. One runs at a time. The running thread gives
// the others a turn only at a scheduling point: point(), and each lock
// operation (before an acquire, after a release). There the scheduler asks
// its policy which runnable thread goes on; the choices made where there
// was a choice (two threads or more able to run) are the schedule, a
// string such as "0.1.1.0" that replay() runs again, choice for choice.
//
// A thread that must wait for a lock (import_locks.h) is parked until a
// release wakes it; it then retries, as `_ModuleLock.acquire` loops. When
// no thread can run and some still wait, the run is a hang: CPython would
// wait forever (the global import lock is outside its deadlock check), and
// the outcome says who waits for what, held by whom.
//
// Nothing in a run uses this yet: the engine's threads come next
// (docs/threads.md).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "impsim/base/fiber.h"
#include "impsim/engine/import_locks.h"

namespace impsim {

struct ScheduleOutcome {
  bool hang = false;
  // For a hang: one line per waiting thread, e.g. "thread 1 waits for the
  // module lock of 3, held by thread 0".
  std::vector<std::string> waits;
  // The choices made, replayable (Scheduler::replay).
  std::string schedule;
  // Where a replayed schedule could not be followed: what went wrong.
  std::optional<std::string> bad_schedule;
};

class Scheduler {
 public:
  // Which thread goes on at a scheduling point: an index into `runnable`
  // (the threads able to run, by id), given the thread that reached the
  // point (kNoThread when it finished or waits).
  using Policy = std::function<size_t(const std::vector<PyThreadId>& runnable, PyThreadId current)>;
  // The thread that reached the point goes on while it can; else the
  // runnable thread of lowest id.
  static Policy run_until_blocked();
  // run_until_blocked's pick: the index of `current` in `runnable`, else 0.
  static size_t until_blocked_pick(const std::vector<PyThreadId>& runnable, PyThreadId current);

  explicit Scheduler(Policy policy = run_until_blocked(), size_t stack_bytes = size_t{1} << 20);
  // Follows `schedule` (as ScheduleOutcome::schedule writes it) at each
  // choice; past its end, run_until_blocked. A string that is not a
  // schedule is followed not at all, and said in bad_schedule.
  static Scheduler replay(const std::string& schedule, size_t stack_bytes = size_t{1} << 20);
  // The thread ids of a schedule string; nullopt (and why) for a string
  // that is not one.
  static std::optional<std::vector<PyThreadId>> parse_schedule(const std::string& schedule, std::string* why = nullptr);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  // Unwinds the threads left waiting (a hang), so what their frames hold
  // is freed.
  ~Scheduler();

  // threading.Thread(target=body).start(): a new runnable thread. Callable
  // before run() and from a running thread.
  PyThreadId spawn(std::function<void()> body);
  // Runs the threads until every one has finished or none can run.
  ScheduleOutcome run();

  // From a running thread.
  PyThreadId current() const { return current_; }
  void point();
  // `_ModuleLock.acquire`: returns once the lock is taken (Acquired) or
  // the wait would deadlock (Deadlock: the caller raises _DeadlockError);
  // in between the thread waits and others run.
  LockResult acquire_module(int32_t m);
  // `_ModuleLock.release`; false where CPython raises RuntimeError.
  bool release_module(int32_t m);
  // `_imp.acquire_lock()` / `_imp.release_lock()`.
  void acquire_global();
  bool release_global();

  const ImportLocks& locks() const { return locks_; }
  // What a thread's body threw, if it did (it finished there).
  std::exception_ptr error(PyThreadId t) const;
  bool finished(PyThreadId t) const;

 private:
  Scheduler(Policy policy, size_t stack_bytes, std::optional<std::string> bad_schedule);
  enum class State { Runnable, Waiting, Done };
  struct Thread;
  static void entry(void* arg);
  // Back to run(): the thread stays as its state says.
  void switch_out();
  void wait();
  bool released(const std::optional<std::vector<PyThreadId>>& woken);
  std::string describe_wait(PyThreadId t) const;

  Policy policy_;
  size_t stack_bytes_;
  ImportLocks locks_;
  std::vector<std::unique_ptr<Thread>> threads_;
  PyThreadId current_ = kNoThread;
  std::string schedule_;
  size_t choices_ = 0;
  std::optional<std::string> bad_schedule_;
  bool cancelling_ = false;
};

}  // namespace impsim
