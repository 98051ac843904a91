// Python identifiers beyond ASCII (PEP 3131), exactly as CPython 3.11 reads
// them: a first character in XID_Start (or "_"), then XID_Continue, and the
// name the parser keeps is the NFKC normal form. The data is Unicode 14.0,
// generated from CPython 3.11's own unicodedata (tools/gen/gen_unicode_tables).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace impsim {

// True when the UTF-8 text `s` is an identifier by str.isidentifier()
// (keywords included: that check is the caller's). False for invalid UTF-8.
bool is_unicode_identifier(std::string_view s);

// unicodedata.normalize("NFKC", s) for an identifier, or a dotted name of
// identifiers: the tables hold the decompositions of identifier characters
// only, so other text is not normalised fully.
std::string nfkc_identifier(std::string_view s);

// Appends the code points of strict UTF-8 text to `out`; false where it is
// not UTF-8 (no overlongs, surrogates or values past U+10FFFF).
bool decode_utf8(std::string_view s, std::vector<char32_t>& out);

// Reads the code point of strict UTF-8 text `s` at byte `i` (< s.size())
// into `cp` and moves `i` past it; false, `i` and `cp` unchanged, where it
// is not UTF-8.
bool next_utf8(std::string_view s, size_t& i, char32_t& cp);

// Appends the UTF-8 encoding of the code point `cp`.
void append_utf8(std::string& out, char32_t cp);

}  // namespace impsim
