// The engine's stack (include/impsim/base/engine_stack.h), in one of two forms.
//
// A normal build switches the calling thread onto a stack of its own (a
// fiber, base/fiber.h) and back when the job is done. It used to hand each
// job to a second thread and wait: on these virtual machines the wake-up
// and the wait cost 19 us of CPU per run, about a third of a small run
// (seed_incident's `after`, 8 lookups) and the most of what made the step
// engine's short runs slower than its long ones against a bare replay.
// swapcontext then cost 2 us a run, nearly all of it two system calls for
// the signal mask; the fiber's own switch saves only registers.
//
// Under AddressSanitizer and valgrind the job still goes to a thread: both
// follow a thread's stack on their own, where a switched stack would need
// annotating for each (ASan's fiber calls, valgrind's stack registration),
// and their runs are the slow, checking ones anyway.
//
// Either way the stack is made once per process and reused: creating a
// thread with a 1 GiB reserved stack cost 22-35 us of CPU per run. Its
// size is what the runs' depth limits need (engine/stack_budget.h), not a
// fixed 1 GiB: under a memory cap (ulimit -v, a container's limit) a
// reservation that fails is a ResourceError, never a run on a stack too
// small for it (there used to be a fallback to the caller's own stack).
#include "impsim/base/engine_stack.h"

#include "impsim/base/fiber.h"
#include "impsim/base/under_valgrind.h"

#include <fmt/format.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>

#include "impsim/base/errors.h"

namespace impsim {

namespace {

// What a job may be given at most: the depth flags' maxima need a few
// hundred MiB (engine/stack_budget.h); past this a request is a bug.
constexpr size_t kLargestStack = size_t{16} << 30;
// The top of the stack kept by engine_stack_forget_touched: the stack's
// own loop waits there.
constexpr size_t kEngineKeptTop = size_t{64} << 10;

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

size_t round_to_pages(size_t bytes) {
  const size_t page = page_size();
  return (std::max(bytes, kEngineKeptTop * 2) + page - 1) / page * page;
}

[[noreturn]] void no_stack(size_t bytes, int err) {
  throw ResourceError(fmt::format(
      "out of memory: no {} MiB of address space for the engine's stack ({}); the depth limits (--max-body-depth, "
      "--max-lookup-depth, --max-guard-depth) size it: lower them, or raise the memory limit (ulimit -v, the "
      "container's)",
      (bytes + (size_t{1} << 20) - 1) >> 20, std::strerror(err)));
}

class EngineStack {
 public:
  virtual ~EngineStack() = default;
  // True while the calling thread is running a job on this stack.
  virtual bool on_it() const = 0;
  virtual size_t size() const = 0;
  virtual void run(const std::function<void()>& job) = 0;
  virtual size_t touched() const = 0;
  virtual void forget_touched() = 0;
};

// The calling thread, switched onto a stack of its own.
class SwitchedStack final : public EngineStack {
 public:
  // False if the stack could not be mapped (errno says why).
  bool start(size_t bytes) { return fiber_.start(bytes, &SwitchedStack::serve, this); }

  bool on_it() const override { return on_it_; }
  size_t size() const override { return fiber_.size(); }

  void run(const std::function<void()>& job) override {
    std::lock_guard turn(turn_);  // one job at a time
    job_ = &job;
    error_ = nullptr;
    on_it_ = true;
    fiber_.resume();
    on_it_ = false;
    if (error_) std::rethrow_exception(error_);
  }

  size_t touched() const override { return fiber_.touched(); }
  void forget_touched() override { fiber_.give_back(kEngineKeptTop); }

 private:
  // The stack's own loop: each job runs from here, and its exception is
  // caught here, before the switch back (no exception crosses stacks).
  [[noreturn]] static void serve(void* arg) {
    auto* self = static_cast<SwitchedStack*>(arg);
    for (;;) {
      try {
        (*self->job_)();
      } catch (...) {
        self->error_ = std::current_exception();
      }
      self->fiber_.suspend();
    }
  }

  // Per thread: the thread that switched is the one on the stack, and
  // another thread's job waits its turn instead of running in place.
  static inline thread_local bool on_it_ = false;
  std::mutex turn_;
  Fiber fiber_;
  const std::function<void()>* job_ = nullptr;
  std::exception_ptr error_;
};

// A second thread, which runs each job while the caller waits.
class EngineThread final : public EngineStack {
 public:
  // False if the thread could not be created (errno says why).
  bool start(size_t bytes) {
    size_ = bytes;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, bytes);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int rc = pthread_create(&thread, &attr, [](void* self) -> void* {
      static_cast<EngineThread*>(self)->serve();
      return nullptr;
    }, this);
    pthread_attr_destroy(&attr);
    if (rc == 0) thread_ = thread;
    errno = rc;
    return rc == 0;
  }

  bool on_it() const override { return pthread_equal(pthread_self(), thread_); }
  size_t size() const override { return size_; }
  // Not measured: the thread's stack is the sanitizer's or valgrind's to
  // shadow, and those builds are not where frames are sized.
  size_t touched() const override { return 0; }
  void forget_touched() override {}

  void run(const std::function<void()>& job) override {
    std::lock_guard turn(turn_);  // one job at a time
    std::unique_lock lock(mutex_);
    job_ = &job;
    error_ = nullptr;
    done_ = false;
    wake_.notify_one();
    finished_.wait(lock, [&] { return done_; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  [[noreturn]] void serve() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return job_ != nullptr; });
      const std::function<void()>* job = job_;
      lock.unlock();
      std::exception_ptr error;
      try {
        (*job)();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      job_ = nullptr;
      error_ = error;
      done_ = true;
      finished_.notify_one();
    }
  }

  pthread_t thread_{};
  size_t size_ = 0;
  std::mutex turn_;
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  const std::function<void()>* job_ = nullptr;
  std::exception_ptr error_;
  bool done_ = false;
};


// The stack jobs run on, replaced by a larger one when a job needs more.
// A replaced stack is left as it is (its loop waits for ever): a process
// grows its stack a few times at most, since the limits are a command's.
// Never destroyed: a thread's stack lives until the process ends.
std::mutex stack_mutex;
EngineStack* current_stack = nullptr;

EngineStack* engine_stack(size_t bytes) {
  std::lock_guard lock(stack_mutex);
  if (current_stack && current_stack->size() >= bytes) return current_stack;
  if (bytes > kLargestStack) no_stack(bytes, ENOMEM);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  if (!under_valgrind()) {
    auto switched = std::make_unique<SwitchedStack>();
    if (!switched->start(bytes)) no_stack(bytes, errno != 0 ? errno : ENOMEM);
    current_stack = switched.release();
    return current_stack;
  }
#endif
  auto thread = std::make_unique<EngineThread>();
  if (!thread->start(bytes)) no_stack(bytes, errno != 0 ? errno : ENOMEM);
  current_stack = thread.release();
  return current_stack;
}

}  // namespace

bool checked_stack_build() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#else
  return under_valgrind();
#endif
}

void run_on_engine_stack(size_t bytes, const std::function<void()>& job) {
  bytes = round_to_pages(bytes);
  if (checked_stack_build()) bytes = std::min(bytes, kCheckedEngineStackCeiling);
  EngineStack* const on = [] {
    std::lock_guard lock(stack_mutex);
    return current_stack;
  }();
  if (on && on->on_it()) {
    job();  // already on it
    return;
  }
  engine_stack(bytes)->run(job);
}

size_t engine_stack_touched() {
  std::lock_guard lock(stack_mutex);
  return current_stack ? current_stack->touched() : 0;
}

void engine_stack_forget_touched() {
  std::lock_guard lock(stack_mutex);
  if (current_stack) current_stack->forget_touched();
}

}  // namespace impsim
