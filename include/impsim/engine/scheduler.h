// Simulated Python threads, one schedule at a time.
//
// Each simulated thread runs on a fiber of its own (base/fiber.h), so a
// thread stopped in the middle of the engine's recursion keeps its C++
// frames while another runs. One runs at a time. The running thread gives
// the others a turn only at a scheduling point: point(), which the import
// locks (import_locks.h) pass before each acquire and after each release.
// There the scheduler asks its policy which runnable thread goes on; the
// choices made where there was a choice (two threads or more able to run)
// are the schedule, a string such as "0.1.1.0" that replay() runs again,
// choice for choice.
//
// The scheduler only picks who runs: it owns no lock. A thread that must
// wait (for a lock the interpreter's ImportLocks finds held, or in join())
// is blocked, saying what it waits for, until wake() makes it runnable
// again; a lock's waiter then retries, as `_ModuleLock.acquire` loops.
// When no thread can run and some still wait, the run is a hang: CPython
// would wait forever (the global import lock is outside its deadlock
// check), and the outcome says who waits for what, held by whom, by id:
// the engine, which knows the names, makes them a ThreadedOutcome's waits.
//
// The engine runs a threaded scenario's Python threads on it
// (sim/engine/threads.cc); the schedule searches run it once per schedule.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "impsim/base/fiber.h"

namespace impsim {

// A simulated Python thread, 0 the main thread.
using PyThreadId = int32_t;
inline constexpr PyThreadId kNoThread = -1;

// What a blocked thread waits for: the global import lock, a module's
// `_ModuleLock`, the end of a thread it joins, or a hook's own
// threading.Lock / RLock. The scheduler's hangs and a trace's waits say it.
enum class WaitKind : uint8_t { GlobalLock, ModuleLock, Join, HookLock };

struct ScheduleOutcome;

class Scheduler {
 public:
  // What a blocked thread waits for: the global import lock, a module's
  // lock (`module`) or a hook's lock (`module` its index), held by `on`, or
  // the end of thread `on` (a join). The holder stays while it waits: only
  // the holder's last release wakes it.
  struct Wait {
    WaitKind kind = WaitKind::GlobalLock;
    int32_t module = -1;  // ModuleLock: the module; HookLock: the hook lock
    PyThreadId on = kNoThread;
  };
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
  // Unwinds the threads left waiting now, while what their frames refer to
  // is still there (the destructor does it otherwise).
  void cancel();

  // threading.Thread(target=body).start(): a new runnable thread. Callable
  // before run() and from a running thread.
  PyThreadId spawn(std::function<void()> body);
  // Runs the threads until every one has finished or none can run.
  ScheduleOutcome run();

  // Each thread's stack from here on (a program sets it before it spawns:
  // it knows how deep its threads recurse). A stack that cannot be mapped
  // (a memory cap) stops the run: the threads started are unwound and
  // run() throws ResourceError, naming the thread.
  void set_stack_bytes(size_t bytes) { stack_bytes_ = bytes; }
  // What a thread's body throws: by default it stays with the thread
  // (error()) and the others go on. Set, it stops the run at once: the
  // other threads are unwound and run() rethrows it. The engine sets it:
  // its threads catch every Python exception themselves, so what escapes
  // one (out of memory) leaves no run to report.
  void stop_on_error(bool stop) { stop_on_error_ = stop; }
  // For measuring frames (tests/stack_budget_test.cc): the most stack any
  // thread touched, measured as each finished (Fiber::touched), on a stack
  // whose pages were given back before the thread began, so that a pooled
  // stack's kept top does not count (system calls a thread, so off unless
  // asked for).
  void measure_stacks(bool on) { measure_stacks_ = on; }
  size_t deepest_stack() const { return deepest_stack_; }
  // Called with a thread's id each time the scheduler is about to resume
  // it, before its fiber runs: the engine installs that thread's state.
  void on_resume(std::function<void(PyThreadId)> f) { on_resume_ = std::move(f); }
  // Called each time a thread passes a scheduling point (resumed there, or
  // let go on at once): a program that records the schedule's points.
  void on_point(std::function<void()> f) { on_point_ = std::move(f); }
  // Called in the running thread as it is blocked (`waiting` true) and
  // once it is woken (false), with what it waits for: a trace shows the
  // waits. Unset, a wait costs nothing more.
  void on_wait(std::function<void(const Wait&, bool waiting)> f) { on_wait_ = std::move(f); }
  // What an error naming a thread calls it (default: "thread 1").
  void name_threads_with(std::function<std::string(PyThreadId)> thread) { thread_name_ = std::move(thread); }

  // From a running thread.
  PyThreadId current() const { return current_; }
  void point();
  // Thread.join(): returns once thread `t` has finished; in between the
  // running thread waits, and a join nothing can end is part of a hang.
  void join(PyThreadId t);
  // The running thread stops being runnable until wake() names it: what it
  // waits for is `what`, which a hang reports. Returns once it runs again.
  void block(const Wait& what);
  // The blocked `threads` can run again (the caller then passes a point).
  void wake(const std::vector<PyThreadId>& threads);

  // What a thread's body threw, if it did (it finished there).
  std::exception_ptr error(PyThreadId t) const;
  bool finished(PyThreadId t) const;
  size_t threads() const { return threads_.size(); }

 private:
  Scheduler(Policy policy, size_t stack_bytes, std::optional<std::string> bad_schedule);
  enum class State { Runnable, Waiting, Done };
  struct Thread;
  static void entry(void* arg);
  ScheduleOutcome run_threads();
  // Back to run(): the thread stays as its state says.
  void switch_out();
  std::string thread_text(PyThreadId t) const;

  Policy policy_;
  size_t stack_bytes_;
  std::vector<std::unique_ptr<Thread>> threads_;
  PyThreadId current_ = kNoThread;
  std::string schedule_;
  size_t choices_ = 0;
  std::optional<std::string> bad_schedule_;
  bool cancelling_ = false;
  bool stop_on_error_ = false;
  bool measure_stacks_ = false;
  size_t deepest_stack_ = 0;
  std::function<void(PyThreadId)> on_resume_;
  std::function<void()> on_point_;
  std::function<void(const Wait&, bool)> on_wait_;
  std::function<std::string(PyThreadId)> thread_name_;
};

struct ScheduleOutcome {
  bool hang = false;
  // A thread left waiting in a hang: what it waits for (Scheduler::Wait).
  struct Waiting {
    PyThreadId thread = kNoThread;
    Scheduler::Wait wait;
  };
  // For a hang: each waiting thread, by id.
  std::vector<Waiting> waits;
  // The choices made, replayable (Scheduler::replay).
  std::string schedule;
  // Where a replayed schedule could not be followed: what went wrong.
  std::optional<std::string> bad_schedule;
};

}  // namespace impsim
