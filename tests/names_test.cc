#include <doctest/doctest.h>

#include "impsim/scenario/names.h"

using namespace impsim;

TEST_CASE("interning gives every ancestor an id and a parent") {
  NameTable t;
  NameId c = t.intern("a.b.c");
  NameId b = t.find("a.b");
  NameId a = t.find("a");
  REQUIRE(b != kNoName);
  REQUIRE(a != kNoName);
  CHECK(t.parent(c) == b);
  CHECK(t.parent(b) == a);
  CHECK(t.parent(a) == kNoName);
  CHECK(t.top(c) == a);
  CHECK(t.intern("a.b.c") == c);
  CHECK(t.text(c) == "a.b.c");
}

TEST_CASE("torch names are torch and torch.*, nothing else") {
  NameTable t;
  CHECK(t.is_torch(t.intern("torch")));
  CHECK(t.is_torch(t.intern("torch.nn.functional")));
  CHECK_FALSE(t.is_torch(t.intern("torchvision")));
  CHECK_FALSE(t.is_torch(t.intern("pkg.torch")));
}

TEST_CASE("is, or is inside: name == m or name.startswith(m + '.')") {
  NameTable t;
  NameId pkg = t.intern("pkg");
  CHECK(is_or_inside(t, t.intern("pkg.sub.x"), pkg));
  CHECK(is_or_inside(t, pkg, pkg));
  CHECK_FALSE(is_or_inside(t, t.intern("pkg2"), pkg));
  CHECK_FALSE(is_or_inside(t, t.intern("other.pkg"), pkg));
}

TEST_CASE("dotted names: identifiers joined by dots, no keywords") {
  CHECK(is_dotted_name("pkg"));
  CHECK(is_dotted_name("_a.b2.C"));
  CHECK_FALSE(is_dotted_name(""));
  CHECK_FALSE(is_dotted_name("a..b"));
  CHECK_FALSE(is_dotted_name(".a"));
  CHECK_FALSE(is_dotted_name("a."));
  CHECK_FALSE(is_dotted_name("2a"));
  CHECK_FALSE(is_dotted_name("a-b"));
  CHECK_FALSE(is_dotted_name("pkg.class"));
}
