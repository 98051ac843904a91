// Where things are in a JSON text: the line and column of any JSON pointer,
// and the checks nlohmann's parser does not make (duplicate keys, nesting
// depth). The loader uses it so that every error names file:line:column.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>

namespace impsim {

struct SourcePos {
  int line = 1;
  int column = 1;
};

struct JsonScanProblem {
  std::string pointer;
  size_t offset = 0;
  std::string message;
};

class JsonSource {
 public:
  explicit JsonSource(std::string text) : text_(std::move(text)) {}

  // Walks the text once without recursion, recording where each value
  // starts. Reports duplicate keys and nesting deeper than `max_depth`.
  // Stops quietly at a syntax error: nlohmann's parser reports those.
  std::optional<JsonScanProblem> scan(int max_depth);

  const std::string& text() const { return text_; }
  SourcePos position_at(size_t offset) const;
  // The position of the value at `pointer`, or of its nearest ancestor
  // that exists (a missing key is reported at its object).
  SourcePos position_of(std::string pointer) const;

 private:
  std::string text_;
  std::unordered_map<std::string, size_t> starts_;
};

// RFC 6901 escaping of one reference token.
std::string pointer_token(const std::string& key);

}  // namespace impsim
