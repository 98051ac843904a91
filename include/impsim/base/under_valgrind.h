// Whether the process runs under valgrind, which follows a program only on
// terms of its own: its malloc ignores glibc's settings, and it shadows every
// byte of a stack or reservation that the process maps.
#pragma once

namespace impsim {

// valgrind's own client request where the build had its header; otherwise
// the preload library valgrind puts in front of every process it runs, so a
// binary built before valgrind was installed still knows.
bool under_valgrind();

}  // namespace impsim
