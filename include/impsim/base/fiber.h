// A fiber: a stack of its own, and a switch onto it and back that a thread
// makes without the kernel. The engine runs on one (engine_stack.h); a
// simulated program with several Python threads needs one per thread,
// switched at every lock, find_spec and exec_module boundary, so the switch
// has to cost nanoseconds, not the microseconds of a system call.
//
// Two ways to switch, the same interface:
//   Registers: the callee-saved registers, the floating-point control words
//     and the stack pointer saved and loaded by a few instructions of
//     assembly (x86-64 System V, without shadow stacks). About 14 ns a
//     switch on these 2-core virtual machines (`impsim_bench --switch`).
//   Ucontext: glibc's swapcontext, which also saves and restores the
//     signal mask with two system calls. About 1.1 us a switch; every
//     other machine.
// Both are tested on machines that have both (tests/fiber_test.cc), in the
// AddressSanitizer build too, which is told of each switch.
#pragma once

#include <cstddef>

#include <ucontext.h>

namespace impsim {

// The bytes of the stack [bottom, bottom + size) touched from its top: down
// to its lowest page in memory, the pages below it untouched (a stack grows
// down, one frame after another, so what it reached is contiguous).
size_t stack_touched(const void* bottom, size_t size);

class Fiber {
 public:
  enum class Switch { Registers, Ucontext };
  // The fastest switch this build has.
  static Switch fastest();

  // What the fiber runs, from its own stack. It must never return: it
  // suspends when done, and is resumed for more or never again.
  using Entry = void (*)(void* arg);

  Fiber() = default;
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;
  ~Fiber();

  // Maps `size` bytes of stack (reserved, touched only as deep as the
  // fiber goes) with a guard page below, so an overflow faults instead of
  // writing over what lies there. False if it could not be mapped, if the
  // fiber was started before, or if this build lacks the switch asked for.
  bool start(size_t size, Entry entry, void* arg, Switch how = fastest());
  // From the thread's own stack (or another fiber): runs the fiber until it
  // suspends. A fiber is resumed by one context at a time.
  void resume();
  // From the fiber: back to whoever resumed it.
  void suspend();
  // How deep the stack has been touched, from its top: the bytes down to
  // its lowest page in memory (mincore). A stack kept for reuse keeps its
  // top pages, so this is at least what an earlier fiber left there. For
  // measuring frames (tests/stack_budget_test.cc), not for the hot path.
  size_t touched() const;
  // Gives the stack's pages back to the system, but its top `keep` bytes
  // (where a suspended fiber's frames are): the next touched() measures
  // what runs after. Never while the fiber runs.
  void give_back(size_t keep);
  // The stack's size, as start() rounded it (0 before start).
  size_t size() const { return stack_size_; }

 private:
  bool make_ucontext();
  // Saves this side (save_sp or save) and runs the other (load_sp or load),
  // whose stack is `size` bytes above `bottom`.
  void switch_from(void** save_sp, void* load_sp, ucontext_t* save, ucontext_t* load, const void* bottom, size_t size,
                   bool on_fiber);
  // The fiber's first frame, whichever the switch: calls the entry, which
  // never returns. Neither marked nor inferred [[noreturn]] (noipa):
  // AddressSanitizer unpoisons the stack before a call to such a function,
  // and on a fiber's first frame it would do so before it has been told of
  // the switch.
  [[gnu::noipa]] static void enter(Fiber* self);
  // makecontext's function: the Fiber's address in two halves.
  static void enter_ucontext(unsigned high, unsigned low);

  Switch how_ = Switch::Registers;
  void* base_ = nullptr;  // the mapping, guard page included
  size_t mapped_ = 0;
  // AddressSanitizer is told of every switch: the stack switched to, and
  // the one the fiber was resumed from (it can differ each time).
  void* stack_bottom_ = nullptr;
  size_t stack_size_ = 0;
  const void* caller_bottom_ = nullptr;
  size_t caller_size_ = 0;
  // Registers: the saved stack pointers, each pointing at the registers
  // pushed below it.
  void* fiber_sp_ = nullptr;
  void* caller_sp_ = nullptr;
  // Ucontext: the two contexts, and what enter_ucontext is to call.
  ucontext_t fiber_{}, caller_{};
  Entry entry_ = nullptr;
  void* arg_ = nullptr;
};

}  // namespace impsim
