// The fast engine's memory (Memo) and the record version its keys hold
// (Records): every write is a new version, reads are not, and the memo keeps
// one epoch's asks only.
#include <doctest/doctest.h>

#include "impsim/engine/memo.h"
#include "impsim/engine/records.h"

using namespace impsim;

TEST_CASE("records: every write and every new record is a new version - reads are not") {
  Records r;
  uint64_t v = r.version();
  LoaderId l = r.new_loader(Loader{LoaderKind::Empty, false, 0, -1});
  CHECK(r.version() > v);
  v = r.version();
  SpecId s = r.new_spec(Spec{0, l, kNoPath});
  CHECK(r.version() > v);
  v = r.version();
  ModuleId m = r.new_module(Module{0, false, kNoPath, 0, s});
  CHECK(r.version() > v);
  v = r.version();
  CHECK(r.module(m).spec == s);
  CHECK(r.spec(s).loader == l);
  CHECK(r.loader(l).kind == LoaderKind::Empty);
  CHECK(r.version() == v);
  r.write_module(m).marks |= kMarkEnabled;
  CHECK(r.version() > v);
  v = r.version();
  r.write_spec(s).search = kEmptyPath;
  CHECK(r.version() > v);
  CHECK(r.module(m).marks == kMarkEnabled);
  CHECK(r.spec(s).search == kEmptyPath);
}

TEST_CASE("records: collection frees what the roots do not reach - and is no version") {
  Records r;
  LoaderId inner = r.new_loader(Loader{LoaderKind::Empty, false, 0, -1});
  LoaderId wrapper = r.new_loader(Loader{LoaderKind::Specific, true, kMarkEnabled, inner});
  SpecId kept = r.new_spec(Spec{0, wrapper, kNoPath});
  ModuleId m = r.new_module(Module{0, false, kNoPath, 0, kept});
  r.new_spec(Spec{1, r.new_loader(Loader{LoaderKind::Empty, false, 0, -1}), kNoPath});  // garbage
  CHECK(r.live() == 6);
  const uint64_t v = r.version();
  r.mark_module(m);
  r.sweep();
  CHECK(r.version() == v);
  CHECK(r.live() == 4);  // the module, its spec, the wrapper and what it wraps
  CHECK(r.made() == 6);
  // A freed slot is reused by the next record, and that is a new version.
  r.new_loader(Loader{LoaderKind::Empty, false, 0, -1});
  CHECK(r.version() > v);
  CHECK(r.slots() == 6);
}

namespace {
MemoKey key(NameId name, uint64_t epoch) { return MemoKey{name, 1, 0, -1, true, 0, epoch, 0, {}}; }
}  // namespace

TEST_CASE("memo: a key finds only its own value - every field counts") {
  Memo memo;
  MemoValue v{};
  v.result = 7;
  memo.remember(key(3, 1), v);
  REQUIRE(memo.find(key(3, 1)) != nullptr);
  CHECK(memo.find(key(3, 1))->result == 7);
  CHECK(memo.find(key(4, 1)) == nullptr);
  MemoKey other = key(3, 1);
  other.frames = 1;
  CHECK(memo.find(other) == nullptr);
  other = key(3, 1);
  other.resolving = {3};
  CHECK(memo.find(other) == nullptr);
  other = key(3, 1);
  other.copies = 2;
  CHECK(memo.find(other) == nullptr);
}

TEST_CASE("memo: a newer epoch drops every older entry") {
  Memo memo;
  memo.forget_older_than(1);
  memo.remember(key(3, 1), MemoValue{});
  memo.remember(key(4, 1), MemoValue{});
  memo.forget_older_than(1);
  CHECK(memo.size() == 2);
  memo.forget_older_than(2);
  CHECK(memo.size() == 0);
  CHECK(memo.find(key(3, 1)) == nullptr);
}

TEST_CASE("memo: frames entered get identities of their own - leaving restores the outer one") {
  Memo memo;
  const uint64_t top = memo.frames();
  const uint64_t outer = memo.enter_frame();
  CHECK(outer == top);
  const uint64_t first = memo.frames();
  CHECK(first != top);
  memo.leave_frame(outer);
  CHECK(memo.frames() == top);
  memo.enter_frame();
  CHECK(memo.frames() != first);  // a later frame never reuses an identity
}
