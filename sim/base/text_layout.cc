#include "impsim/base/text_layout.h"

#include <algorithm>

namespace impsim {

size_t text_width(std::string_view s) {
  // Every byte but UTF-8's continuation bytes starts a code point.
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string wrap_paragraph(std::string_view text, std::string_view first, std::string_view rest, size_t width) {
  std::string out;
  std::string line(first);
  size_t used = text_width(first);
  bool empty = true;  // no word on the line yet
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) {
      if (end == text.size()) break;
      continue;
    }
    const size_t w = text_width(word);
    if (!empty && used + 1 + w > width) {
      out += line + "\n";
      line = rest;
      used = text_width(rest);
      empty = true;
    }
    if (!empty) {
      line += ' ';
      ++used;
    }
    line += word;
    used += w;
    empty = false;
  }
  return out + line + "\n";
}

namespace {

std::string padded(const std::string& cell, size_t width, bool left) {
  const std::string pad(width - std::min(width, text_width(cell)), ' ');
  return left ? cell + pad : pad + cell;
}

}  // namespace

std::string text_table(const std::vector<std::vector<std::string>>& rows, size_t width) {
  std::vector<size_t> widths;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (widths.size() <= i) widths.push_back(0);
      const size_t w = text_width(row[i]);
      if (w <= kLongestAlignedCell) widths[i] = std::max(widths[i], w);
    }
  if (widths.empty()) return "";
  // Blocks of the columns after the first: [begin, end).
  std::vector<std::pair<size_t, size_t>> blocks;
  for (size_t begin = 1; begin < widths.size();) {
    size_t end = begin + 1, used = widths[0] + 2 + widths[begin];
    while (end < widths.size() && used + 2 + widths[end] <= width) used += 2 + widths[end++];
    blocks.emplace_back(begin, end);
    begin = end;
  }
  if (blocks.empty()) blocks.emplace_back(1, 1);
  std::string out;
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (b > 0) out += "\n";
    for (const auto& row : rows) {
      std::string line = padded(row.empty() ? "" : row[0], widths[0], true);
      for (size_t i = blocks[b].first; i < blocks[b].second && i < row.size(); ++i)
        line += "  " + padded(row[i], widths[i], false);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace impsim
