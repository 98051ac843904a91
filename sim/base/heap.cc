// Why large pages: reading a 50,000-module tree touches about 45 MB of heap.
// With 4 KiB pages that is 14,000 page faults, and on a virtual machine each
// costs microseconds: they were 120 of the 200 ms `impsim validate` took,
// against 75 ms of the program's own work, which itself lost time to TLB
// misses. glibc can back its heap with transparent huge pages, but only when
// told through GLIBC_TUNABLES, before the process starts. So this does what
// that tunable does, for the first 64 MiB: it grows the heap by that much in
// one request, marks the range MADV_HUGEPAGE, and hands it back to malloc,
// which carves later allocations out of it. Nothing is touched here: the
// kernel supplies a large page at the first write into each 2 MiB, so a
// small run that never reaches past the heap's first pages pays nothing.
//
// Two settings keep allocations in the range: big arrays (a name table's
// index, a tree's entries) would otherwise each be a separate mapping with
// small pages (glibc maps anything over 128 KiB on its own), and the free
// range at the top of the heap would be trimmed back to the kernel.
#include "impsim/base/heap.h"

#include "impsim/base/under_valgrind.h"

#include <cstdint>
#include <cstdlib>  // first: it defines __GLIBC__
#include <initializer_list>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#endif

namespace impsim {

void prefer_large_pages() {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && defined(MADV_HUGEPAGE)
  constexpr size_t kReserve = size_t{64} << 20;
  constexpr size_t kLargePage = size_t{2} << 20;
  constexpr rlim_t kEnough = rlim_t{1} << 30;
  // Valgrind's malloc ignores these settings, and would shadow the whole
  // reservation, byte by byte, in every process it checks.
  if (under_valgrind()) return;
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit limit{};
    if (getrlimit(resource, &limit) != 0 || (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < kEnough)) return;
  }
  // The largest threshold glibc accepts (4 MiB times the size of a long).
  if (mallopt(M_MMAP_THRESHOLD, 32 << 20) == 0) return;
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * kReserve));
  // The reservation itself must come from the heap, not a mapping of its own.
  mallopt(M_MMAP_MAX, 0);
  void* block = std::malloc(kReserve);
  mallopt(M_MMAP_MAX, 65536);  // glibc's default
  if (block == nullptr) return;
  const uintptr_t at = reinterpret_cast<uintptr_t>(block);
  const uintptr_t first = (at + kLargePage - 1) & ~(kLargePage - 1);
  const uintptr_t last = (at + kReserve) & ~(kLargePage - 1);
  // A hint: if the kernel refuses it, the heap keeps small pages.
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  std::free(block);
#endif
}

}  // namespace impsim
