#include "impsim/scenario/names.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "impsim/base/unicode_names.h"
#include "impsim/scenario/counters.h"

namespace impsim {

int32_t NameTable::atom_of(std::string_view part) { return atom_of(part, atoms_.hash(part)); }

int32_t NameTable::atom_of(std::string_view part, uint64_t hash) {
  auto [atom, fresh] = atoms_.try_emplace(part, static_cast<int32_t>(atom_text_.size()), hash);
  if (fresh) atom_text_.push_back(part);
  return *atom;
}

NameId NameTable::add(NameId parent, int32_t atom, std::string_view text) {
  NameId id = static_cast<NameId>(view_.size());
  view_.push_back(text);
  parent_.push_back(parent);
  last_atom_.push_back(atom);
  is_torch_.push_back(parent == kNoName ? atom == torch_atom_ : is_torch_[parent]);
  child_.try_emplace(child_key(parent, atom), id);
  return id;
}

std::string_view NameTable::store(std::string_view text) {
  // Names are many and short: they share blocks, where a table of 50,000
  // names allocated (and freed) 50,000 buffers.
  constexpr size_t kBlock = size_t{64} << 10;
  if (text.size() > kBlock / 8) {
    storage_.push_back(std::make_unique_for_overwrite<char[]>(text.size()));
    std::copy(text.begin(), text.end(), storage_.back().get());
    return {storage_.back().get(), text.size()};
  }
  if (text.size() > block_left_) {
    storage_.push_back(std::make_unique_for_overwrite<char[]>(kBlock));
    block_at_ = storage_.back().get();
    block_left_ = kBlock;
  }
  std::string_view out(block_at_, text.size());
  std::copy(text.begin(), text.end(), block_at_);
  block_at_ += text.size();
  block_left_ -= text.size();
  return out;
}

NameId NameTable::intern(std::string_view name) {
  // One walk: down the ancestors that exist by look-ups alone, and from the
  // first part that is new, adding. The text is kept once something is
  // new; every part and ancestor from then on is a view into that copy.
  // Ancestors are created before their children.
  std::string_view full = name;
  bool kept = false;
  NameId node = kNoName;
  size_t start = 0;
  while (true) {
    const size_t dot = full.find('.', start);
    const size_t end = dot == std::string_view::npos ? full.size() : dot;
    int32_t atom = -1;
    NameId next = kNoName;
    const uint64_t hash = atoms_.hash(full.substr(start, end - start));
    if (!kept) {
      if (const int32_t* a = atoms_.find(full.substr(start, end - start), hash)) {
        atom = *a;
        if (const NameId* child = child_.find(child_key(node, atom))) next = *child;
      }
      if (next == kNoName) {
        full = store(name);
        kept = true;
        // Every part from here on is a new name: room for them at once. A
        // name of millions of parts (--max-name-length raised) grew each
        // table by doubling, the old and the new copy alive together.
        const size_t more =
            static_cast<size_t>(std::count(full.begin() + static_cast<ptrdiff_t>(start), full.end(), '.')) + 1;
        if (view_.size() + more > view_.capacity()) {
          const size_t n = std::max(view_.size() + more, 2 * view_.capacity());
          view_.reserve(n);
          parent_.reserve(n);
          last_atom_.reserve(n);
          is_torch_.reserve(n);
          child_.reserve(n);
        }
        if (torch_atom_ < 0) torch_atom_ = atom_of("torch");
      }
    }
    if (next == kNoName) {
      if (atom < 0) atom = atom_of(full.substr(start, end - start), hash);
      const NameId* child = child_.find(child_key(node, atom));
      next = child ? *child : add(node, atom, full.substr(0, end));
    }
    node = next;
    if (dot == std::string_view::npos) return node;
    start = dot + 1;
  }
}

void NameTable::reserve(size_t n) {
  view_.reserve(n);
  parent_.reserve(n);
  last_atom_.reserve(n);
  is_torch_.reserve(n);
  child_.reserve(n);
  atoms_.reserve(n);
  atom_text_.reserve(n);
}

NameId NameTable::intern_child(NameId parent, int32_t atom) {
  if (const NameId* child = child_.find(child_key(parent, atom))) return *child;
  return intern(std::string(view_[parent]) + "." + std::string(atom_text_[atom]));
}

NameId NameTable::find(std::string_view name) const {
  NameId node = kNoName;
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    size_t end = dot == std::string_view::npos ? name.size() : dot;
    const int32_t* atom = atoms_.find(name.substr(start, end - start));
    if (!atom) return kNoName;
    const NameId* child = child_.find(child_key(node, *atom));
    if (!child) return kNoName;
    node = *child;
    if (dot == std::string_view::npos) return node;
    start = dot + 1;
  }
}

const std::string& NameTable::text(NameId id) const {
  auto [it, fresh] = text_.try_emplace(id);
  if (fresh) it->second = view_[id];
  return it->second;
}

NameId NameTable::top(NameId id) const {
  while (parent_[id] != kNoName) id = parent_[id];
  return id;
}

bool is_or_inside(const NameTable& names, NameId name, NameId module) {
  for (NameId n = name; n != kNoName; n = names.parent(n))
    if (n == module) return true;
  return false;
}

static bool is_keyword(std::string_view s) {
  // By first letter: the reader asks for every part of every name of a
  // scenario, and a search of the whole list per part was a visible part of
  // reading a large tree. The 35 keywords of Python 3.
  if (s.size() < 2 || s.size() > 8) return false;
  switch (s[0]) {
    case 'F':
      return s == "False";
    case 'N':
      return s == "None";
    case 'T':
      return s == "True";
    case 'a':
      return s == "and" || s == "as" || s == "assert" || s == "async" || s == "await";
    case 'b':
      return s == "break";
    case 'c':
      return s == "class" || s == "continue";
    case 'd':
      return s == "def" || s == "del";
    case 'e':
      return s == "elif" || s == "else" || s == "except";
    case 'f':
      return s == "finally" || s == "for" || s == "from";
    case 'g':
      return s == "global";
    case 'i':
      return s == "if" || s == "import" || s == "in" || s == "is";
    case 'l':
      return s == "lambda";
    case 'n':
      return s == "nonlocal" || s == "not";
    case 'o':
      return s == "or";
    case 'p':
      return s == "pass";
    case 'r':
      return s == "raise" || s == "return";
    case 't':
      return s == "try";
    case 'w':
      return s == "while" || s == "with";
    case 'y':
      return s == "yield";
    default:
      return false;
  }
}

bool is_dotted_name(std::string_view s) { return python_module_name(s).has_value(); }

namespace {

// Each byte's class, for reading names a byte at a time with one load: the
// reader asks python_module_name of every key of a tree, 50,000 on a large
// one, and three range tests per byte were most of its time.
enum : uint8_t { kIdStart = 1, kIdContinue = 2, kNonAscii = 4, kDot = 8 };

constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> c{};
  for (int b = 0; b < 256; ++b) {
    const bool letter = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '_';
    if (letter) c[b] = kIdStart | kIdContinue;
    if (b >= '0' && b <= '9') c[b] = kIdContinue;
    if (b >= 0x80) c[b] = kNonAscii;
    if (b == '.') c[b] = kDot;
  }
  return c;
}();

}  // namespace

std::optional<std::string> python_module_name(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool ascii = true;
  size_t start = 0;
  while (true) {
    // Each part read once: whether it is ASCII, and if so whether it is an
    // identifier (a letter or '_', then letters, digits and '_').
    size_t end = start;
    uint8_t any = 0, all = kIdContinue;
    for (; end < s.size(); ++end) {
      const uint8_t c = kByteClass[static_cast<unsigned char>(s[end])];
      if (c & kDot) break;
      any |= c;
      all &= c;
    }
    std::string_view part = s.substr(start, end - start);
    if (part.empty() || is_keyword(part)) return std::nullopt;
    // ASCII, the common case, needs no tables; and keywords are matched
    // before normalisation, as CPython's parser does ("ｉｆ" imports "if").
    if (!(any & kNonAscii)) {
      if (!(all & kIdContinue) || !(kByteClass[static_cast<unsigned char>(part[0])] & kIdStart)) return std::nullopt;
    } else {
      ascii = false;
      if (!is_unicode_identifier(part)) return std::nullopt;
    }
    if (end == s.size()) break;
    start = end + 1;
  }
  return ascii ? std::string(s) : nfkc_identifier(s);
}

}  // namespace impsim
