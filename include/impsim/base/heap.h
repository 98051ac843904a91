// How the process's heap is laid out: one call at the start of main, before
// the scenario is read. Nothing here changes what impsim computes; it decides
// how many page faults loading a big scenario costs.
#pragma once

namespace impsim {

// Reserves the first 64 MiB of heap growth in one piece and asks the kernel
// to back it with large pages (2 MiB, transparent huge pages), and keeps
// allocations up to 32 MiB inside it. Does nothing where the C library is
// not glibc, under a sanitizer or valgrind, where the kernel offers no large pages, or
// where an address-space or data limit (ulimit -v, -d) is below 1 GiB: the
// reservation would use up a budget the user set.
void prefer_large_pages();

}  // namespace impsim
