// Simulated Python threads on fibers (include/impsim/engine/scheduler.h).
#include "impsim/engine/scheduler.h"

#include "impsim/base/errors.h"
#include "impsim/base/number.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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
  Wait waits_for;  // while Waiting
  std::exception_ptr error;
};

size_t Scheduler::until_blocked_pick(const std::vector<PyThreadId>& runnable, PyThreadId current) {
  const auto it = std::find(runnable.begin(), runnable.end(), current);
  return it != runnable.end() ? static_cast<size_t>(it - runnable.begin()) : 0;
}

Scheduler::Policy Scheduler::run_until_blocked() { return &Scheduler::until_blocked_pick; }

Scheduler::Scheduler(Policy policy, size_t stack_bytes) : policy_(std::move(policy)), stack_bytes_(stack_bytes) {}

Scheduler::Scheduler(Policy policy, size_t stack_bytes, std::optional<std::string> bad_schedule)
    : policy_(std::move(policy)), stack_bytes_(stack_bytes), bad_schedule_(std::move(bad_schedule)) {}

// A schedule is thread ids joined by dots. Anything else is refused whole:
// a misread choice would replay another run and call it this one.
std::optional<std::vector<PyThreadId>> Scheduler::parse_schedule(const std::string& schedule, std::string* why) {
  std::vector<PyThreadId> choices;
  for (size_t at = 0; !schedule.empty();) {
    const size_t dot = std::min(schedule.find('.', at), schedule.size());
    // Nine digits at most: far past any thread a scenario has (16), and
    // never near a wrap.
    const std::optional<PyThreadId> t =
        parse_integer_as<PyThreadId>(std::string_view(schedule).substr(at, dot - at), 0, 999'999'999);
    if (!t) {
      if (why)
        *why = fmt::format(
            "not a schedule: choice {} is not a thread number (a schedule is thread numbers joined by dots, e.g. "
            "0.1.1.0)",
            choices.size() + 1);
      return std::nullopt;
    }
    choices.push_back(*t);
    if (dot == schedule.size()) break;
    at = dot + 1;
  }
  return choices;
}

Scheduler Scheduler::replay(const std::string& schedule, size_t stack_bytes) {
  std::string why;
  std::optional<std::vector<PyThreadId>> parsed = parse_schedule(schedule, &why);
  auto choices = std::make_shared<std::vector<PyThreadId>>(parsed.value_or(std::vector<PyThreadId>{}));
  std::optional<std::string> bad;
  if (!parsed) bad = why;
  auto next = std::make_shared<size_t>(0);
  return Scheduler(
      [choices, next](const std::vector<PyThreadId>& runnable, PyThreadId current) -> size_t {
        if (*next >= choices->size()) return until_blocked_pick(runnable, current);
        const PyThreadId want = (*choices)[(*next)++];
        const auto it = std::find(runnable.begin(), runnable.end(), want);
        return it == runnable.end() ? kNotRunnable : static_cast<size_t>(it - runnable.begin());
      },
      stack_bytes, std::move(bad));
}

Scheduler::~Scheduler() { cancel(); }

void Scheduler::cancel() {
  cancelling_ = true;
  for (const auto& t : threads_) {
    if (!t->started || t->state == State::Done) continue;
    current_ = t->id;
    if (on_resume_) on_resume_(t->id);
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
  if (t->owner->measure_stacks_) t->owner->deepest_stack_ = std::max(t->owner->deepest_stack_, t->fiber.touched());
  for (const auto& other : t->owner->threads_)
    if (other->state == State::Waiting && other->waits_for.kind == WaitKind::Join && other->waits_for.on == t->id)
      other->state = State::Runnable;
  t->fiber.suspend();  // for good
}

void Scheduler::switch_out() {
  threads_[static_cast<size_t>(current_)]->fiber.suspend();
  if (cancelling_) throw ThreadCancelled{};
}

// Whatever leaves run() by an exception (the policy's, a thread's under
// stop_on_error, a stack that could not be mapped) leaves no thread
// suspended mid-run: each is unwound first, while what its frames refer
// to is still there. Outside the handler: unwinding switches fibers.
ScheduleOutcome Scheduler::run() {
  std::exception_ptr failed;
  try {
    return run_threads();
  } catch (...) {
    failed = std::current_exception();
  }
  cancel();
  std::rethrow_exception(failed);
}

ScheduleOutcome Scheduler::run_threads() {
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
        pick = until_blocked_pick(runnable, reached);
      }
      ++choices_;
      schedule_ += fmt::format("{}{}", schedule_.empty() ? "" : ".", runnable[pick]);
    }
    Thread& t = *threads_[static_cast<size_t>(runnable[pick])];
    current_ = t.id;
    if (on_resume_) on_resume_(t.id);
    if (!t.started) {
      t.started = true;
      if (!t.fiber.start(stack_bytes_, &Scheduler::entry, &t)) {
        const int err = errno != 0 ? errno : ENOMEM;
        t.state = State::Done;  // it never ran: nothing of it to unwind
        throw ResourceError(fmt::format(
            "out of memory: no {} MiB of address space for the stack of {} ({}); the depth limits "
            "(--max-body-depth, --max-lookup-depth, --max-guard-depth) size each thread's stack: lower them, or "
            "raise the memory limit (ulimit -v, the container's)",
            (stack_bytes_ + (size_t{1} << 20) - 1) >> 20, thread_text(t.id), std::strerror(err)));
      }
      // A stack taken from the pool keeps the top an earlier fiber touched
      // (fiber.cc), which would floor what this thread is measured to use
      // at that much: all of it goes back but the page with the first frame
      // start() wrote.
      if (measure_stacks_) t.fiber.give_back(1);
    }
    t.fiber.resume();
    last = t.id;
    current_ = kNoThread;
    if (stop_on_error_ && t.state == State::Done && t.error) std::rethrow_exception(t.error);
  }
  ScheduleOutcome out;
  out.schedule = schedule_;
  out.bad_schedule = bad_schedule_;
  for (const auto& t : threads_) {
    if (t->state != State::Waiting) continue;
    out.hang = true;
    // Each holder is the one the thread blocked on: a lock is released to
    // another owner only after its waiters are woken.
    out.waits.push_back({t->id, t->waits_for});
  }
  return out;
}

std::string Scheduler::thread_text(PyThreadId t) const {
  return thread_name_ ? thread_name_(t) : fmt::format("thread {}", t);
}

void Scheduler::point() {
  switch_out();
  if (on_point_) on_point_();
}

void Scheduler::wake(const std::vector<PyThreadId>& threads) {
  for (PyThreadId w : threads) threads_[static_cast<size_t>(w)]->state = State::Runnable;
}

void Scheduler::block(const Wait& what) {
  Thread& me = *threads_[static_cast<size_t>(current_)];
  me.state = State::Waiting;
  me.waits_for = what;
  if (on_wait_) on_wait_(what, true);
  switch_out();
  if (on_wait_) on_wait_(what, false);
}

void Scheduler::join(PyThreadId t) {
  while (threads_[static_cast<size_t>(t)]->state != State::Done) block({WaitKind::Join, -1, t});
}

std::exception_ptr Scheduler::error(PyThreadId t) const { return threads_[static_cast<size_t>(t)]->error; }

bool Scheduler::finished(PyThreadId t) const { return threads_[static_cast<size_t>(t)]->state == State::Done; }

}  // namespace impsim
