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
// thread with a 1 GiB reserved stack cost 22-35 us of CPU per run.
#include "impsim/base/engine_stack.h"

#include "impsim/base/fiber.h"
#include "impsim/base/under_valgrind.h"

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>

namespace impsim {

namespace {

// The engine recurses once per nested body, lookup and guard, and each level
// is several C++ frames (larger still under AddressSanitizer): the default
// 8 MiB main stack overflows before --max-body-depth 200 under ASan. The
// stack is sized for the largest depth limits (1000 bodies, 1000 lookups,
// 10000 guards); the memory is only reserved, and pages are touched only as
// deep as a run goes.
// AddressSanitizer mishandles exceptions unwinding on stacks past 64 MiB
// (google/sanitizers#189), so a sanitized build stays just under that.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kEngineStack = size_t{63} << 20;
#else
constexpr size_t kEngineStack = size_t{1} << 30;
#endif

// Valgrind's memcheck gives every byte of a new thread's stack a shadow: a
// 1 GiB stack cost it 4 s of CPU per process, and tools/check/memcheck runs
// hundreds. Under valgrind the stack is the sanitized build's, which holds
// the default limits (not the depth flags' maxima).
size_t engine_stack_size() { return under_valgrind() ? std::min(kEngineStack, size_t{63} << 20) : kEngineStack; }

class EngineStack {
 public:
  virtual ~EngineStack() = default;
  // True while the calling thread is running a job on this stack.
  virtual bool on_it() const = 0;
  virtual void run(const std::function<void()>& job) = 0;
};

// The calling thread, switched onto a stack of its own.
class SwitchedStack final : public EngineStack {
 public:
  // False if the stack could not be mapped.
  bool start() { return fiber_.start(kEngineStack, &SwitchedStack::serve, this); }

  bool on_it() const override { return on_it_; }

  void run(const std::function<void()>& job) override {
    std::lock_guard turn(turn_);  // one job at a time
    job_ = &job;
    error_ = nullptr;
    on_it_ = true;
    fiber_.resume();
    on_it_ = false;
    if (error_) std::rethrow_exception(error_);
  }

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
  // False if the thread could not be created.
  bool start() {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, engine_stack_size());
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int rc = pthread_create(&thread, &attr, [](void* self) -> void* {
      static_cast<EngineThread*>(self)->serve();
      return nullptr;
    }, this);
    pthread_attr_destroy(&attr);
    if (rc == 0) thread_ = thread;
    return rc == 0;
  }

  bool on_it() const override { return pthread_equal(pthread_self(), thread_); }

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
  std::mutex turn_;
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  const std::function<void()>* job_ = nullptr;
  std::exception_ptr error_;
  bool done_ = false;
};

// Never destroyed: its stack lives until the process ends (the thread's
// waits on it).
EngineStack* engine_stack() {
  static EngineStack* const s = []() -> EngineStack* {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    if (!under_valgrind()) {
      auto* switched = new SwitchedStack;
      if (switched->start()) return switched;
      delete switched;
    }
#endif
    auto* thread = new EngineThread;
    if (thread->start()) return thread;
    delete thread;
    return nullptr;
  }();
  return s;
}

}  // namespace

void run_on_engine_stack(const std::function<void()>& job) {
  EngineStack* s = engine_stack();
  if (!s || s->on_it()) {
    job();  // no engine stack to be had, or already on it
    return;
  }
  s->run(job);
}

}  // namespace impsim
