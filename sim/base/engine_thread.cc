// One engine thread per process (include/impsim/base/engine_thread.h). Creating a
// thread with a 1 GiB reserved stack cost 22-35 us of CPU per run, most of
// a small run's time, and varied widely with the machine's load.
#include "impsim/base/engine_thread.h"

#include <pthread.h>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>  // RUNNING_ON_VALGRIND: a macro, nothing to link
#endif

#include <algorithm>

#include <condition_variable>
#include <exception>
#include <mutex>

namespace impsim {

namespace {

// The engine recurses once per nested body, lookup and guard, and each level
// is several C++ frames (larger still under AddressSanitizer): the default
// 8 MiB main stack overflows before --max-body-depth 200 under ASan. The
// thread's stack is sized for the largest depth limits (1000 bodies, 1000
// lookups, 10000 guards); the memory is only reserved, and pages are
// touched only as deep as a run goes.
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
size_t engine_stack() {
#if defined(RUNNING_ON_VALGRIND)
  if (RUNNING_ON_VALGRIND) return std::min(kEngineStack, size_t{63} << 20);
#endif
  return kEngineStack;
}

class EngineThread {
 public:
  // False if the thread could not be created.
  bool start() {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, engine_stack());
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

  bool on_it() const { return pthread_equal(pthread_self(), thread_); }

  void run(const std::function<void()>& job) {
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

// Never destroyed: the thread waits on it until the process ends.
EngineThread* engine_thread() {
  static EngineThread* const t = [] {
    auto* e = new EngineThread;
    if (e->start()) return e;
    delete e;
    return static_cast<EngineThread*>(nullptr);
  }();
  return t;
}

}  // namespace

void run_on_engine_stack(const std::function<void()>& job) {
  EngineThread* t = engine_thread();
  if (!t || t->on_it()) {
    job();  // no thread to be had, or already on it
    return;
  }
  t->run(job);
}

}  // namespace impsim
