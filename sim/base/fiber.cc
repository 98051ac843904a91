// Fibers (include/impsim/base/fiber.h): the stack, and the two switches.
//
// The register switch follows the System V x86-64 calling convention: a
// call may clobber every register but rbx, rbp, r12-r15, the stack pointer
// and the control bits of MXCSR and the x87 control word, so a switch that
// looks to the compiler like a call need save only those. It pushes them
// on the stack it leaves, stores the stack pointer, loads the other's and
// pops what that one pushed. A new fiber's stack starts as if it had
// switched away just before its first instruction: the pushed registers
// carry the entry and its argument, and the return address is a trampoline
// that calls the entry. Nothing is saved that a switch does not clobber:
// the signal mask stays the thread's (swapcontext's two system calls for
// it were nearly all of its cost).
//
// A shadow stack (Intel CET) would refuse the trampoline's return, so a
// build that asks for one switches with swapcontext, as does every other
// machine.
#include "impsim/base/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__x86_64__) && defined(__linux__) && !(defined(__CET__) && (__CET__ & 2))
#define IMPSIM_FIBER_REGISTERS 1
#else
#define IMPSIM_FIBER_REGISTERS 0
#endif

#if IMPSIM_FIBER_REGISTERS
// impsim_fiber_switch(save, load): pushes the callee-saved state, stores the
// stack pointer in *save, loads `load` and pops the state found there.
// impsim_fiber_start: where a new fiber's first switch returns to; rbx holds
// what it calls (Fiber::enter), r12 its argument (the fiber). The CFI marks
// it as the stack's outermost frame, for debuggers and profilers; the entry
// must not return.
extern "C" void impsim_fiber_switch(void** save, void* load);
extern "C" void impsim_fiber_start();
asm(R"(
    .text
    .p2align 4
    .globl impsim_fiber_switch
    .hidden impsim_fiber_switch
    .type impsim_fiber_switch, @function
impsim_fiber_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size impsim_fiber_switch, .-impsim_fiber_switch

    .p2align 4
    .globl impsim_fiber_start
    .hidden impsim_fiber_start
    .type impsim_fiber_start, @function
impsim_fiber_start:
    .cfi_startproc
    .cfi_undefined rip
    movq %r12, %rdi
    callq *%rbx
    ud2
    .cfi_endproc
    .size impsim_fiber_start, .-impsim_fiber_start
)");
#endif

namespace impsim {

namespace {

// AddressSanitizer keeps a shadow of the stack it thinks is current: before a
// switch it learns the stack switched to, and after it, on the new stack,
// that the switch is done (and, on a fiber's side, where it came from).
#if defined(__SANITIZE_ADDRESS__)
// A fiber that is never finished leaves its frames' red zones poisoned, and
// a later mapping at the same addresses (or the next fiber on a pooled
// stack) would inherit them. Only the part the fiber touched can hold any
// (stack_touched). Unpoisoning all of a 1 GiB stack writes 128 MiB of
// shadow, which made a schedule search under the sanitizer 100 times
// slower than without it; asking mincore for all of it, and reading its
// answer, was still a third. A touched page the kernel swapped out would
// end the walk early; the sanitizer's build runs the tests, on machines
// that do not swap.
void forget_stack(void* bottom, size_t size) {
  const size_t touched = stack_touched(bottom, size);
  if (touched > 0) __asan_unpoison_memory_region(static_cast<char*>(bottom) + (size - touched), touched);
}
void before_switch(void** fake_stack, const void* bottom, size_t size) {
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
}
void after_switch(void* fake_stack, const void** from_bottom, size_t* from_size) {
  __sanitizer_finish_switch_fiber(fake_stack, from_bottom, from_size);
}
#else
void forget_stack(void*, size_t) {}
void before_switch(void**, const void*, size_t) {}
void after_switch(void*, const void**, size_t*) {}
#endif

// Stacks kept for the next fiber of the same size: a schedule search runs
// its program thousands of times, each run on fresh fibers, and a fresh
// 1 GiB mapping with its guard page, faulted in and unmapped again, cost
// more than the run itself (two thirds of a search's time was the
// kernel's). A kept stack keeps its top pages (where every fiber runs);
// deeper ones are given back, so what stays resident is small.
constexpr size_t kPooledStacks = 16;
constexpr size_t kKeptTop = size_t{256} << 10;

struct Mapping {
  void* base;
  size_t mapped;
};

std::vector<Mapping>& pool() {
  static thread_local std::vector<Mapping> stacks;
  return stacks;
}

void* take_pooled(size_t mapped) {
  std::vector<Mapping>& p = pool();
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i].mapped == mapped) {
      void* base = p[i].base;
      p[i] = p.back();
      p.pop_back();
      return base;
    }
  return nullptr;
}

void release_stack(void* base, size_t mapped, size_t page) {
  const bool keep = pool().size() < kPooledStacks;  // forget_stack cleared the sanitizer's view of it
  if (!keep) {
    munmap(base, mapped);
    return;
  }
  if (mapped > page + kKeptTop) madvise(static_cast<char*>(base) + page, mapped - page - kKeptTop, MADV_DONTNEED);
  pool().push_back(Mapping{base, mapped});
}

}  // namespace

// mincore is asked a mebibyte at a time, downwards, until a mebibyte has no
// page in memory (no frame is that large).
size_t stack_touched(const void* bottom, size_t size) {
  constexpr size_t kChunk = size_t{1} << 20;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident(kChunk / page + 1);
  const char* const base = static_cast<const char*>(bottom);
  size_t low = size;  // the lowest touched byte found
  for (size_t top = size; top > 0;) {
    const size_t len = std::min(kChunk, top), from = top - len;
    if (mincore(const_cast<char*>(base + from), len, resident.data()) != 0) return size;  // no answer: all of it
    size_t i = 0;
    const size_t pages = (len + page - 1) / page;
    while (i < pages && !(resident[i] & 1)) ++i;
    if (i == pages) break;
    low = from + i * page;
    top = from;
  }
  return size - low;
}

size_t Fiber::touched() const { return base_ ? stack_touched(stack_bottom_, stack_size_) : 0; }

void Fiber::give_back(size_t keep) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  keep = (keep + page - 1) / page * page;
  if (base_ && stack_size_ > keep) madvise(stack_bottom_, stack_size_ - keep, MADV_DONTNEED);
}

Fiber::Switch Fiber::fastest() { return IMPSIM_FIBER_REGISTERS ? Switch::Registers : Switch::Ucontext; }

Fiber::~Fiber() {
  if (!base_) return;
  forget_stack(stack_bottom_, stack_size_);
  release_stack(base_, mapped_, static_cast<size_t>(sysconf(_SC_PAGESIZE)));
}

bool Fiber::start(size_t size, Entry entry, void* arg, Switch how) {
  if (base_ || (how == Switch::Registers && !IMPSIM_FIBER_REGISTERS)) return false;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size = (size + page - 1) / page * page;
  void* base = take_pooled(size + page);  // its guard page is in place
  if (!base) {
    base = mmap(nullptr, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                -1, 0);
    if (base == MAP_FAILED) return false;
    if (mprotect(base, page, PROT_NONE) != 0) {
      munmap(base, size + page);
      return false;
    }
  }
  char* const bottom = static_cast<char*>(base) + page;
  stack_bottom_ = bottom;
  stack_size_ = size;
  how_ = how;
  entry_ = entry;
  arg_ = arg;
  if (how == Switch::Ucontext && !make_ucontext()) {
    munmap(base, size + page);
    return false;
  }
#if IMPSIM_FIBER_REGISTERS
  if (how == Switch::Registers) {
    // What impsim_fiber_switch pops, lowest address first: the control
    // words, r15, r14, r13, r12 (the argument: this fiber), rbx (what the
    // trampoline calls: enter), rbp, and the return address. The
    // trampoline then calls with the stack 16-byte aligned, as the ABI
    // wants at a call.
    auto* top = reinterpret_cast<uint64_t*>(reinterpret_cast<uintptr_t>(bottom + size) & ~uintptr_t{15});
    uint64_t* sp = top - 8;
    uint32_t mxcsr = 0;
    uint16_t x87 = 0;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(x87));
    sp[0] = mxcsr | (uint64_t{x87} << 32);
    sp[1] = sp[2] = sp[3] = 0;
    sp[4] = reinterpret_cast<uint64_t>(this);
    sp[5] = reinterpret_cast<uint64_t>(&Fiber::enter);
    sp[6] = 0;
    sp[7] = reinterpret_cast<uint64_t>(&impsim_fiber_start);
    fiber_sp_ = sp;
  }
#endif
  base_ = base;
  mapped_ = size + page;
  return true;
}

// Apart from start: getcontext returns twice, as setjmp does, and the
// compiler then fears for start's locals.
bool Fiber::make_ucontext() {
  if (getcontext(&fiber_) != 0) return false;
  fiber_.uc_stack.ss_sp = stack_bottom_;
  fiber_.uc_stack.ss_size = stack_size_;
  fiber_.uc_link = nullptr;
  const uint64_t self = reinterpret_cast<uintptr_t>(this);
  makecontext(&fiber_, reinterpret_cast<void (*)()>(&Fiber::enter_ucontext), 2, static_cast<unsigned>(self >> 32),
              static_cast<unsigned>(self));
  return true;
}

void Fiber::resume() { switch_from(&caller_sp_, fiber_sp_, &caller_, &fiber_, stack_bottom_, stack_size_, false); }

void Fiber::suspend() { switch_from(&fiber_sp_, caller_sp_, &fiber_, &caller_, caller_bottom_, caller_size_, true); }

void Fiber::switch_from(void** save_sp, void* load_sp, ucontext_t* save, ucontext_t* load, const void* bottom,
                        size_t size, bool on_fiber) {
  void* fake_stack = nullptr;
  before_switch(&fake_stack, bottom, size);
#if IMPSIM_FIBER_REGISTERS
  if (how_ == Switch::Registers)
    impsim_fiber_switch(save_sp, load_sp);
  else
#endif
    swapcontext(save, load);
  // Back: on the fiber, from whichever stack resumed it this time.
  after_switch(fake_stack, on_fiber ? &caller_bottom_ : nullptr, on_fiber ? &caller_size_ : nullptr);
}

void Fiber::enter(Fiber* self) {
  after_switch(nullptr, &self->caller_bottom_, &self->caller_size_);
  self->entry_(self->arg_);
  std::abort();  // an entry must not return: there is nowhere to return to
}

// makecontext passes its function ints, and the Fiber's address does not
// fit one.
void Fiber::enter_ucontext(unsigned high, unsigned low) {
  enter(reinterpret_cast<Fiber*>(static_cast<uintptr_t>((uint64_t{high} << 32) | low)));
}

}  // namespace impsim
