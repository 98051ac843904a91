// The CPython release lines: which release names which line, and what each
// line's importlib does (the fixes' first releases are CPython's NEWS).
#include <doctest/doctest.h>

#include "impsim/scenario/axes.h"

using namespace impsim;

TEST_CASE("axes: a release X.Y.P names the line holding it") {
  CHECK(parse_cpython("3.9.18") == CPython::V3_9);
  CHECK(parse_cpython("3.13") == CPython::V3_13);
  CHECK(parse_cpython("3.13.0") == CPython::V3_13);
  CHECK(parse_cpython("3.13.2") == CPython::V3_13);
  CHECK(parse_cpython("3.13.12") == CPython::V3_13);
  CHECK(parse_cpython("3.13.13") == CPython::V3_13_13);
  CHECK(parse_cpython("3.13.15") == CPython::V3_13_13);
  CHECK(parse_cpython("3.13.16") == CPython::V3_13_16);
  CHECK(parse_cpython("3.13.40") == CPython::V3_13_16);
  CHECK(parse_cpython("3.14.2") == CPython::V3_14);
  CHECK(parse_cpython("3.14.3") == CPython::V3_14);
  CHECK(parse_cpython("3.14.4") == CPython::V3_14_4);
  CHECK(parse_cpython("3.15.0rc1") == CPython::V3_15);
  CHECK(parse_cpython("3.15.0a6") == CPython::V3_15);
  CHECK(parse_cpython("3.15.1") == CPython::V3_15);
  CHECK(std::string(cpython_name(*parse_cpython("3.13.2"))) == "3.13");
  CHECK(std::string(cpython_minor(CPython::V3_13_16)) == "3.13");
}

TEST_CASE("axes: what is not a release of a modelled line is refused") {
  for (const char* bad : {"3.16", "3.16.0", "3.8.10", "3.13.01", "3.15.0rc", "3.15.0rc123", "3.15.0x1", "3.13.",
                          "3", "", "3.13.1.2", "3.13.1000", "03.13.1", " 3.13.1"})
    CHECK_MESSAGE(!parse_cpython(bad).has_value(), bad);
}

TEST_CASE("axes: each fix from its first release on") {
  CHECK_FALSE(find_spec_iterates_snapshot(CPython::V3_13));
  CHECK_FALSE(find_spec_iterates_snapshot(CPython::V3_13_13));
  CHECK(find_spec_iterates_snapshot(CPython::V3_13_16));
  CHECK(find_spec_iterates_snapshot(CPython::V3_14));
  CHECK(find_spec_iterates_snapshot(CPython::V3_15));
  CHECK_FALSE(rechecks_module_after_wait(CPython::V3_14));
  CHECK(rechecks_module_after_wait(CPython::V3_14_4));
  CHECK(threads_modelled(CPython::V3_14_4));
  CHECK_FALSE(threads_modelled(CPython::V3_15));
}
