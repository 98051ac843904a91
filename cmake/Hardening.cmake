# Build options for hostile-input work (docs/limits.md, docs/fuzzing.md).
#   IMPSIM_SANITIZE=ON  everything built with AddressSanitizer + UBSan
#   IMPSIM_FUZZ=ON      clang only: also the libFuzzer target fuzz_scenario
# Included before any target is defined, so the flags reach every target.
option(IMPSIM_SANITIZE "Build everything with -fsanitize=address,undefined" OFF)
option(IMPSIM_FUZZ "Build the libFuzzer target fuzz/fuzz_scenario (clang only)" OFF)

if(IMPSIM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "IMPSIM_FUZZ=ON needs clang: configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  set(IMPSIM_SANITIZE ON)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(IMPSIM_SANITIZE)
  # UBSan without its alignment and null checks: they sit on every pointer
  # dereference, and were half of this build's CPU (769 s against 412 s
  # on 2 cores) and a third of the binary's (11.6 MB of check data against
  # 23.4 MB, which the leak check scans at each of the suite's thousands of
  # exits). A null dereference still stops the run: ASan reports the SEGV
  # with its stack. Misaligned access is harmless on x86-64, and the only
  # pointer arithmetic (a fiber's stack top) aligns explicitly.
  set(impsim_ubsan_skip -fno-sanitize=alignment,null)
  add_compile_options(-fsanitize=address,undefined ${impsim_ubsan_skip} -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined ${impsim_ubsan_skip} -fno-sanitize-recover=undefined)
  # Executables not position-independent: the suite starts the sanitized
  # binaries thousands of times, and relocating a position-independent one
  # at each start touched 5,250 pages (impsim --version: 0.08 s of CPU)
  # against 1,850 (0.03 s). Nothing there depends on where it is loaded.
  add_link_options(-no-pie)
  # Compiled in batches, as every build is (CMakeLists.txt): the engine too,
  # which has no profile here.
endif()
