// Where things are in a JSON text, and the checks nlohmann's parser does not
// make (duplicate keys, nesting depth). The reader uses it so that every
// error names file:line:column.
//
// Nothing here keeps a record per value: positions are found by walking the
// text again when an error needs one, so the memory a scan takes is bounded
// by the keys of the objects open at once (at most the text's size), not by
// depth x values.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace impsim {

struct SourcePos {
  int line = 1;
  int column = 1;
};

struct JsonScanProblem {
  std::string pointer;
  size_t offset = 0;
  std::string message;
  bool too_deep = false;  // true: nesting past max_depth (a limit, exit 3)
  bool not_utf8 = false;  // true: a byte that is not UTF-8 at `offset` (reported before parsing)
};

// Bytes a UTF-8 byte-order mark takes at the start of `text` (3 or 0).
// nlohmann's parser skips one, so the scan and positions must too.
size_t bom_length(std::string_view text);

class JsonSource {
 public:
  explicit JsonSource(std::string text) : text_(std::move(text)) {}

  // Checks that the text is UTF-8 (JSON text is: RFC 8259), then walks it
  // once without recursion. Reports the first byte that is not UTF-8,
  // duplicate keys and nesting deeper than `max_depth`. Stops quietly at a
  // syntax error: nlohmann's parser reports those.
  std::optional<JsonScanProblem> scan(int max_depth) const;

  const std::string& text() const { return text_; }
  // Line and column (in characters, a byte-order mark not counted).
  SourcePos position_at(size_t offset) const;
  // The position of the value at `pointer`, or of its nearest ancestor
  // that exists (a missing key is reported at its object). Walks the text.
  SourcePos position_of(const std::string& pointer) const;
  // The same place as a byte offset into text().
  size_t offset_of(const std::string& pointer) const;
  // Where the key of the object member at `pointer` starts (its opening
  // quote): an unknown key's error points at the key, not at its value.
  // position_of(pointer) when `pointer` names no object member.
  SourcePos key_position_of(const std::string& pointer) const;

 private:
  std::string text_;
};

// RFC 6901 escaping of one reference token.
std::string pointer_token(std::string_view key);

}  // namespace impsim
