// The scenario reader's fast path: reads a file's text once, from left to
// right, straight into the Scenario, without building nlohmann's DOM of it.
//
// Why it exists. A large scenario is a large package tree: tens of
// thousands of entries, most with a one-step body. Reading it through a
// DOM cost about 4,900 instructions per entry (building the DOM, walking it
// by key, freeing it), and the position pre-scan walked the text once more
// before that. The wait a user saw on a big file was almost all of that.
//
// Why it is allowed to give up. Every message of the reader names
// file:line:column, a JSON pointer, what was expected and, often, a
// suggestion, and the order in which problems are found decides which one
// a file with two problems gets. Computing all of that again in a second
// reader would be a second place for every rule of the format to live and
// drift. So this reader takes on only what is common and cheap to get
// exactly right, and on anything else (a problem of any kind, a string with
// an escape, a key it does not know, a step that is not a plain import or
// find_spec) it gives up: parse_scenario then reads the file again with the
// DOM reader (read_scenario.cc), which makes today's exact message or
// reads the file it does not take on. A slow path for rare files, never a
// second set of rules.
//
// What it takes on, and how it stays equal to the DOM reader:
//   - The package tree ("tree") and the top-level steps ("program") are
//     read here: entries, "package", and "body"/"program" steps of the form
//     {"import"|"find_spec": NAME, "optional": BOOL}. Any other step is cut
//     out of the text as it stands, parsed by nlohmann alone, and handed to
//     Reader::step, the DOM reader's own code, later (see the order below).
//   - Every other top-level key is cut out of the text and parsed by
//     nlohmann into a small DOM of its own; read_top_keys then reads those
//     with the same functions the DOM reader uses.
//   - The checks the DOM reader makes before reading are made here as the
//     text goes by, each by giving up: the size limit, UTF-8 in every
//     string (the same first_invalid_utf8), nesting deeper than
//     --max-json-depth (counted the same way: a container opened inside
//     max_json_depth others), duplicate keys at any depth, and strict JSON
//     syntax (no trailing comma, no comment, a control byte in no string,
//     nothing after the top-level object). Numbers are never read here;
//     they are all inside the parts nlohmann parses, so ints, floats and
//     overflow are nlohmann's as before.
//   - Order. nlohmann's object keeps its keys sorted, so the DOM reader
//     reads tree entries in the byte order of their keys, and the top-level
//     keys in kTopKeys's order (tree before program) whatever the file's.
//     Labels are numbered in reading order. Steps with a label always go to
//     Reader::step, and those calls are made in the DOM reader's order once
//     the whole text is read: tree entries sorted by key, then the
//     program. The entries themselves are sorted the same way.
// tests/read_events_test.cc reads every file the tests hold both ways and
// checks that they agree: the same Scenario, or this reader gives up.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "impsim/base/escape.h"
#include "impsim/base/flat_map.h"
#include "impsim/base/json_scan.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/scenario/names.h"
#include "reader.h"

namespace impsim {

namespace {

using nlohmann::json;
using reading::Reader;

// Thrown to give the file up to the DOM reader; caught below, never seen
// outside this file.
struct GiveUp {};

[[noreturn]] void give_up() { throw GiveUp{}; }

// A step left to Reader::step: its value, and its index in the body.
struct Deferred {
  size_t index;
  json value;
};

struct Entry {
  std::string_view key;  // as written: it has no escape, so it is the key nlohmann sorts by
  TreeEntry tree;
  std::vector<Deferred> deferred;
};

class EventReader final : public reading::TopKeySource {
 public:
  EventReader(std::string_view text, const InputLimits& limits) : s_(text), limits_(limits) {}

  // The whole text; gives up on anything it does not take on.
  void read_document() {
    i_ = bom_length(s_);
    ws();
    open('{');
    ws();
    std::vector<std::string_view> seen;
    if (!close('}')) {
      while (true) {
        std::string_view key = plain_string();
        // A scenario has a few dozen keys; past that the DOM reader refuses
        // one as unknown, and a linear look-up must not turn quadratic.
        if (std::find(seen.begin(), seen.end(), key) != seen.end() || seen.size() > 64) give_up();
        seen.push_back(key);
        ws();
        expect(':');
        ws();
        if (key == "tree") {
          has_tree_ = true;
          read_tree();
        } else if (key == "program") {
          has_program_ = true;
          read_steps(program_, program_deferred_, "/program");
        } else {
          rest_[std::string(key)] = dom_of_value();
        }
        if (!next_member('}')) break;
      }
    }
    ws();
    if (i_ != s_.size()) give_up();
  }

  const json& rest() const { return rest_; }

  bool has(std::string_view key) const override {
    return (key == "tree" && has_tree_) || (key == "program" && has_program_);
  }

  void read(std::string_view key, Reader& r, Scenario& sc) override {
    if (key == "tree") {
      finish_tree(r, sc);
    } else {
      finish_steps(r, program_, program_deferred_);
      sc.program = std::move(program_);
    }
  }

 private:
  // ---- the text

  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool at(char c) const { return i_ < s_.size() && s_[i_] == c; }
  void expect(char c) {
    if (!at(c)) give_up();
    ++i_;
  }
  void open(char c) {
    if (depth_ >= limits_.max_json_depth) give_up();
    expect(c);
    ++depth_;
  }
  // Right after an opening bracket: the closing one, if the container is empty.
  bool close(char c) {
    if (!at(c)) return false;
    ++i_;
    --depth_;
    return true;
  }
  // After a member or element: true at a comma (and past it and the space
  // after it), false at the closing bracket (and past it); gives up on
  // anything else.
  bool next_member(char closing) {
    ws();
    if (at(',')) {
      ++i_;
      ws();
      return true;
    }
    expect(closing);
    --depth_;
    return false;
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }

  // A string with no escape, as its bytes; gives up on an escape (the text
  // then differs from the value) and on what nlohmann or the UTF-8 check
  // refuses.
  std::string_view plain_string() {
    std::string_view out;
    if (any_string(&out)) give_up();
    return out;
  }

  // Any string, escapes checked for their form (nlohmann checks the
  // surrogates when it parses the value); true when it has one.
  bool any_string(std::string_view* text) {
    expect('"');
    const size_t start = i_;
    bool ascii = true, escaped = false;
    while (true) {
      if (i_ >= s_.size()) give_up();
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') break;
      if (c < 0x20) give_up();
      if (c == '\\') {
        escaped = true;
        if (++i_ >= s_.size()) give_up();
        const char e = s_[i_];
        if (e == 'u') {
          for (int k = 1; k <= 4; ++k)
            if (i_ + k >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_ + k]))) give_up();
          i_ += 4;
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          give_up();
        }
      }
      ascii = ascii && c < 0x80;
      ++i_;
    }
    std::string_view out = s_.substr(start, i_ - start);
    ++i_;
    if (!ascii && first_invalid_utf8(out) != std::string_view::npos) give_up();
    if (text) *text = out;
    return escaped;
  }

  void number() {
    auto digits = [&] {
      const size_t from = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      if (i_ == from) give_up();
    };
    if (at('-')) ++i_;
    if (at('0'))
      ++i_;
    else
      digits();
    if (at('.')) {
      ++i_;
      digits();
    }
    if (at('e') || at('E')) {
      ++i_;
      if (at('+') || at('-')) ++i_;
      digits();
    }
  }

  // Past one value of any kind, checking it as the DOM reader's pre-scan
  // and nlohmann would: syntax, depth, duplicate keys. Without recursion,
  // as --max-json-depth may be large.
  void skip_value() {
    struct Open {
      bool object;
      std::vector<std::string_view> keys;
    };
    std::vector<Open> stack;
    auto member_key = [&] {
      std::string_view key;
      if (any_string(&key)) give_up();  // an escaped key: its duplicates are the DOM reader's to find
      stack.back().keys.push_back(key);
      ws();
      expect(':');
      ws();
    };
    while (true) {
      ws();
      if (i_ >= s_.size()) give_up();
      const char c = s_[i_];
      if (c == '{' || c == '[') {
        open(c);
        stack.push_back({c == '{', {}});
        ws();
        if (!close(c == '{' ? '}' : ']')) {
          if (stack.back().object) member_key();
          continue;
        }
        stack.pop_back();
      } else if (c == '"') {
        any_string(nullptr);
      } else if (!(word("true") || word("false") || word("null"))) {
        number();
      }
      while (true) {
        if (stack.empty()) return;
        Open& top = stack.back();
        if (next_member(top.object ? '}' : ']')) {
          if (top.object) member_key();
          break;
        }
        if (top.object) {
          std::sort(top.keys.begin(), top.keys.end());
          if (std::adjacent_find(top.keys.begin(), top.keys.end()) != top.keys.end()) give_up();
        }
        stack.pop_back();
      }
    }
  }

  // The next value, parsed by nlohmann on its own.
  json dom_of_value() {
    const size_t start = i_;
    skip_value();
    try {
      return json::parse(s_.data() + start, s_.data() + i_);
    } catch (const json::exception&) {
      give_up();
    }
  }

  // ---- the scenario

  void read_tree() {
    open('{');
    ws();
    if (close('}')) return;
    do {
      std::string_view key = plain_string();
      ws();
      expect(':');
      ws();
      read_entry(key);
    } while (next_member('}'));
  }

  void read_entry(std::string_view key) {
    if (tree_.size() >= limits_.max_tree_entries) give_up();
    if (reading::characters(key) > limits_.max_name_length) give_up();
    std::optional<std::string> name = python_module_name(key);
    if (!name || name->starts_with("_impsim_filler_")) give_up();
    keys_are_names_ = keys_are_names_ && *name == key;
    Entry& e = tree_.emplace_back();
    e.key = key;
    e.tree.name = std::move(*name);
    open('{');
    ws();
    if (close('}')) return;
    bool package = false, body = false;
    do {
      std::string_view k = plain_string();
      ws();
      expect(':');
      ws();
      if (k == "package" && !package) {
        package = true;
        if (word("true"))
          e.tree.package = true;
        else if (!word("false"))
          give_up();
      } else if (k == "body" && !body) {
        body = true;
        ptr_.assign("/tree/");
        // A module name holds no '~' or '/': the key is its own pointer token.
        if (key.find_first_of("~/") == std::string_view::npos)
          ptr_.append(key);
        else
          ptr_.append(pointer_token(key));
        ptr_.append("/body");
        read_steps(e.tree.body, e.deferred, ptr_);
      } else {
        give_up();
      }
    } while (next_member('}'));
  }

  void read_steps(std::vector<Step>& out, std::vector<Deferred>& deferred, const std::string& ptr) {
    open('[');
    ws();
    if (close(']')) return;
    do {
      const size_t start = i_;
      const int depth = depth_;
      Step st;
      if (!plain_step(st)) {
        i_ = start;
        depth_ = depth;
        st = Step{};
        deferred.push_back({out.size(), dom_of_value()});
      }
      // One allocation for the pointer: it is built once per step of the file.
      char digits[24];
      const auto [end, _] = std::to_chars(digits, digits + sizeof digits, out.size());
      st.pointer.reserve(ptr.size() + 1 + static_cast<size_t>(end - digits));
      st.pointer.append(ptr).append(1, '/').append(digits, end);
      out.push_back(std::move(st));
    } while (next_member(']'));
  }

  // {"import"|"find_spec": NAME} with "optional" or not: Reader::step's
  // result for it. False for anything else (the step is then Reader::step's).
  bool plain_step(Step& st) {
    if (!at('{') || depth_ >= limits_.max_json_depth) return false;
    ++i_;
    ++depth_;
    ws();
    bool kind = false, optional = false;
    if (at('}')) return false;
    while (true) {
      if (!at('"')) return false;
      std::string_view k = plain_string();
      ws();
      if (!at(':')) return false;
      ++i_;
      ws();
      if ((k == "import" || k == "find_spec") && !kind) {
        kind = true;
        st.kind = k == "import" ? StepKind::Import : StepKind::FindSpec;
        if (!at('"')) return false;
        std::string_view target = plain_string();
        // Bodies name the same module again and again (the modules of a
        // package import the package): the last name's checks are kept.
        if (target != last_target_ || last_target_.empty()) {
          if (reading::characters(target) > limits_.max_name_length) return false;
          std::optional<std::string> name = python_module_name(target);
          if (!name) return false;
          last_target_ = target;
          last_target_name_ = std::move(*name);
        }
        st.target = last_target_name_;
      } else if (k == "optional" && !optional) {
        optional = true;
        if (word("true"))
          st.optional = true;
        else if (!word("false"))
          return false;
      } else {
        return false;
      }
      ws();
      if (at(',')) {
        ++i_;
        ws();
        continue;
      }
      if (!at('}')) return false;
      ++i_;
      --depth_;
      return kind;
    }
  }

  // The deferred steps, by Reader::step, in the order the DOM reader reads them.
  static void finish_steps(Reader& r, std::vector<Step>& steps, std::vector<Deferred>& deferred) {
    for (Deferred& d : deferred) {
      const std::string ptr = steps[d.index].pointer;
      steps[d.index] = r.step(d.value, ptr);
    }
  }

  // Each module once, once normalised, and inside a package of the tree,
  // checked on `tree`, the entries in key order. When every key is its own
  // normalised name (an ASCII key always is), in byte order a module's
  // submodules follow it before anything else does ('.' sorts below every
  // byte an identifier may hold): the order is a walk of the tree, a
  // duplicate is next to its twin and a module's parent is the innermost
  // package still open. No index is built then; a table of 50,000 names
  // was a cache miss per name.
  void check_tree_names(const std::vector<TreeEntry>& tree) const {
    if (!keys_are_names_) return check_tree_names_by_index(tree);
    std::vector<std::string_view> open;  // the packages enclosing the walk's position, outermost first
    std::string_view last;
    for (const TreeEntry& e : tree) {
      const std::string_view name = e.name;
      if (name == last) give_up();
      last = name;
      while (!open.empty() &&
             !(name.size() > open.back().size() && name.starts_with(open.back()) && name[open.back().size()] == '.'))
        open.pop_back();
      const size_t dot = name.rfind('.');
      if (dot != std::string_view::npos && (open.empty() || open.back().size() != dot)) give_up();
      if (e.package) open.push_back(name);
    }
  }

  // The same checks for names that NFKC may have made equal: by a look-up.
  static void check_tree_names_by_index(const std::vector<TreeEntry>& tree) {
    FlatMap<std::string_view, size_t> index;
    index.reserve(tree.size());
    for (size_t i = 0; i < tree.size(); ++i)
      if (!index.try_emplace(tree[i].name, i).second) give_up();
    std::string_view last_parent;  // siblings come together: their parent is looked up once
    for (const TreeEntry& e : tree) {
      const std::string_view name = e.name;
      const size_t dot = name.rfind('.');
      if (dot == std::string_view::npos || name.substr(0, dot) == last_parent) continue;
      const size_t* parent = index.find(name.substr(0, dot));
      if (!parent || !tree[*parent].package) give_up();
      last_parent = name.substr(0, dot);
    }
  }

  // The order of tree_ that nlohmann's object has: keys sorted by their
  // bytes. A radix sort (least significant byte first, so stable) on each
  // key's first 16 bytes, zeros past its end (a key holds no NUL byte, so
  // a key sorts before its extensions); positions where every key has the
  // same byte (a shared "pkg." prefix, the padding) are skipped. Keys still
  // equal after 16 bytes are then sorted by the whole key. Sorting 50,000
  // keys by comparing strings cost more than all the rest of the reading.
  std::vector<uint32_t> key_order() const {
    constexpr size_t kBytes = 16;
    const size_t n = tree_.size();
    std::vector<std::array<unsigned char, kBytes>> prefix(n);
    std::vector<std::array<uint32_t, 256>> counts(kBytes);
    for (size_t i = 0; i < n; ++i) {
      const std::string_view k = tree_[i].key;
      std::memcpy(prefix[i].data(), k.data(), std::min(k.size(), kBytes));
      for (size_t b = 0; b < kBytes; ++b) ++counts[b][prefix[i][b]];
    }
    std::vector<uint32_t> order(n), next(n);
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
    for (size_t b = kBytes; n > 0 && b-- > 0;) {
      std::array<uint32_t, 256>& at = counts[b];
      if (at[prefix[0][b]] == n) continue;
      uint32_t sum = 0;
      for (uint32_t& c : at) sum += std::exchange(c, sum);
      for (uint32_t i : order) next[at[prefix[i][b]]++] = i;
      order.swap(next);
    }
    for (size_t from = 0; from < n;) {
      size_t to = from + 1;
      while (to < n && prefix[order[to]] == prefix[order[from]]) ++to;
      if (to - from > 1)
        std::sort(order.begin() + static_cast<ptrdiff_t>(from), order.begin() + static_cast<ptrdiff_t>(to),
                  [&](uint32_t x, uint32_t y) { return tree_[x].key < tree_[y].key; });
      from = to;
    }
    return order;
  }

  void finish_tree(Reader& r, Scenario& sc) {
    sc.tree.reserve(tree_.size());
    for (uint32_t k : key_order()) {
      Entry& e = tree_[k];
      finish_steps(r, e.tree.body, e.deferred);
      sc.tree.push_back(std::move(e.tree));
    }
    // Once in order and side by side in memory: read in key order where
    // they were, the entries were a cache miss each.
    check_tree_names(sc.tree);
  }

  std::string_view s_;
  const InputLimits& limits_;
  size_t i_ = 0;
  int depth_ = 0;  // containers open around i_
  json rest_ = json::object();
  bool has_tree_ = false, has_program_ = false;
  std::string ptr_;               // the pointer of the body being read, reused from entry to entry
  std::string_view last_target_;  // the last step target read, as written
  std::string last_target_name_;  // and as python_module_name gave it
  std::vector<Entry> tree_;
  bool keys_are_names_ = true;  // every tree key its own normalised name (as ASCII keys are)
  std::vector<Step> program_;
  std::vector<Deferred> program_deferred_;
};

}  // namespace

std::optional<Scenario> parse_scenario_events(const std::string& text, const std::string& file,
                                              const InputLimits& limits) {
  if (text.size() > limits.max_file_bytes) return std::nullopt;
  try {
    EventReader events(text, limits);
    events.read_document();
    JsonSource src(text);
    Reader r(src, file, limits);
    return reading::read_top_keys(r, events.rest(), &events);
  } catch (const GiveUp&) {
  } catch (const std::exception&) {
    // A refusal by the DOM reader's own code, on a part handed to it: the
    // DOM reader makes it again, in its order, with its message.
  }
  return std::nullopt;
}

}  // namespace impsim
