// Simulated Python threads on fibers (include/impsim/engine/scheduler.h).
#include "impsim/engine/scheduler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

namespace impsim {

namespace {
constexpr size_t kNotRunnable = std::numeric_limits<size_t>::max();
// Thrown on a thread left waiting when the scheduler goes: unwinds it.
struct ThreadCancelled {};
}  // namespace

struct Scheduler::Thread {
  Scheduler* owner = nullptr;
  PyThreadId id = kNoThread;
  std::function<void()> body;
  Fiber fiber;
  State state = State::Runnable;
  bool started = false;
  // What a waiting thread waits for: the global lock, or module `module`.
  bool waits_global = false;
  int32_t module = -1;
  std::exception_ptr error;
};

Scheduler::Policy Scheduler::run_until_blocked() {
  return [](const std::vector<PyThreadId>& runnable, PyThreadId current) -> size_t {
    const auto it = std::find(runnable.begin(), runnable.end(), current);
    return it != runnable.end() ? static_cast<size_t>(it - runnable.begin()) : 0;
  };
}

Scheduler::Scheduler(Policy policy, size_t stack_bytes) : policy_(std::move(policy)), stack_bytes_(stack_bytes) {}

Scheduler Scheduler::replay(const std::string& schedule, size_t stack_bytes) {
  auto choices = std::make_shared<std::vector<PyThreadId>>();
  size_t at = 0;
  while (at < schedule.size()) {
    const size_t dot = std::min(schedule.find('.', at), schedule.size());
    PyThreadId t = 0;
    for (size_t i = at; i < dot; ++i) t = t * 10 + (schedule[i] - '0');
    choices->push_back(t);
    at = dot + 1;
  }
  auto next = std::make_shared<size_t>(0);
  const Policy fallback = run_until_blocked();
  return Scheduler(
      [choices, next, fallback](const std::vector<PyThreadId>& runnable, PyThreadId current) -> size_t {
        if (*next >= choices->size()) return fallback(runnable, current);
        const PyThreadId want = (*choices)[(*next)++];
        const auto it = std::find(runnable.begin(), runnable.end(), want);
        return it == runnable.end() ? kNotRunnable : static_cast<size_t>(it - runnable.begin());
      },
      stack_bytes);
}

Scheduler::~Scheduler() {
  cancelling_ = true;
  for (const auto& t : threads_) {
    if (!t->started || t->state == State::Done) continue;
    current_ = t->id;
    t->fiber.resume();
  }
}

PyThreadId Scheduler::spawn(std::function<void()> body) {
  auto t = std::make_unique<Thread>();
  t->owner = this;
  t->id = static_cast<PyThreadId>(threads_.size());
  t->body = std::move(body);
  threads_.push_back(std::move(t));
  return threads_.back()->id;
}

// A thread's first frame: its body, then finished for good. What the body
// throws stays with the thread (error()).
void Scheduler::entry(void* arg) {
  auto* t = static_cast<Thread*>(arg);
  try {
    t->body();
  } catch (ThreadCancelled&) {
  } catch (...) {
    t->error = std::current_exception();
  }
  t->state = State::Done;
  t->owner->threads_[static_cast<size_t>(t->id)]->fiber.suspend();  // for good
}

void Scheduler::switch_out() {
  threads_[static_cast<size_t>(current_)]->fiber.suspend();
  if (cancelling_) throw ThreadCancelled{};
}

ScheduleOutcome Scheduler::run() {
  PyThreadId last = kNoThread;  // the thread that ran last, where it stopped
  while (true) {
    std::vector<PyThreadId> runnable;
    for (const auto& t : threads_)
      if (t->state == State::Runnable) runnable.push_back(t->id);
    if (runnable.empty()) break;
    const PyThreadId reached =
        last != kNoThread && threads_[static_cast<size_t>(last)]->state == State::Runnable ? last : kNoThread;
    size_t pick = 0;
    if (runnable.size() > 1) {
      pick = policy_(runnable, reached);
      if (pick >= runnable.size()) {
        if (!bad_schedule_)
          bad_schedule_ = fmt::format("choice {}: the thread asked for cannot run there (runnable: {})", choices_ + 1,
                                      fmt::join(runnable, ", "));
        pick = run_until_blocked()(runnable, reached);
      }
      ++choices_;
      schedule_ += fmt::format("{}{}", schedule_.empty() ? "" : ".", runnable[pick]);
    }
    Thread& t = *threads_[static_cast<size_t>(runnable[pick])];
    current_ = t.id;
    if (!t.started) {
      t.started = true;
      if (!t.fiber.start(stack_bytes_, &Scheduler::entry, &t)) {
        t.error = std::make_exception_ptr(std::runtime_error("no stack could be mapped for a simulated thread"));
        t.state = State::Done;
        continue;
      }
    }
    t.fiber.resume();
    last = t.id;
    current_ = kNoThread;
  }
  ScheduleOutcome out;
  out.schedule = schedule_;
  out.bad_schedule = bad_schedule_;
  for (const auto& t : threads_) {
    if (t->state != State::Waiting) continue;
    out.hang = true;
    out.waits.push_back(describe_wait(t->id));
  }
  return out;
}

std::string Scheduler::describe_wait(PyThreadId id) const {
  const Thread& t = *threads_[static_cast<size_t>(id)];
  if (t.waits_global)
    return fmt::format("thread {} waits for the global import lock, held by thread {}", id, locks_.global_owner());
  const ModuleLock* lock = locks_.module_lock(t.module);
  return fmt::format("thread {} waits for the module lock of {}, held by thread {}", id, t.module,
                     lock ? lock->owner : kNoThread);
}

void Scheduler::point() { switch_out(); }

void Scheduler::wake(const std::vector<PyThreadId>& woken) {
  for (PyThreadId w : woken) threads_[static_cast<size_t>(w)]->state = State::Runnable;
}

LockResult Scheduler::acquire_module(int32_t m) {
  point();
  Thread& me = *threads_[static_cast<size_t>(current_)];
  while (true) {
    const LockResult r = locks_.acquire_module(me.id, m);
    if (r != LockResult::Wait) return r;
    me.state = State::Waiting;
    me.waits_global = false;
    me.module = m;
    switch_out();  // back when a release woke it: retry
  }
}

bool Scheduler::release_module(int32_t m) {
  const auto woken = locks_.release_module(current_, m);
  if (!woken) return false;
  wake(*woken);
  point();
  return true;
}

void Scheduler::acquire_global() {
  point();
  Thread& me = *threads_[static_cast<size_t>(current_)];
  while (locks_.acquire_global(me.id) == LockResult::Wait) {
    me.state = State::Waiting;
    me.waits_global = true;
    switch_out();
  }
}

bool Scheduler::release_global() {
  const auto woken = locks_.release_global(current_);
  if (!woken) return false;
  wake(*woken);
  point();
  return true;
}

std::exception_ptr Scheduler::error(PyThreadId t) const { return threads_[static_cast<size_t>(t)]->error; }

bool Scheduler::finished(PyThreadId t) const { return threads_[static_cast<size_t>(t)]->state == State::Done; }

}  // namespace impsim
