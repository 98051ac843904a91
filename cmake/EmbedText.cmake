# Writes OUTPUT, a header defining `inline constexpr std::string_view NAME`
# with the bytes of INPUT (a text asset such as the explorer's HTML page),
# so the asset stays a file of its own in the source tree. Run at build
# time: cmake -DINPUT=... -DOUTPUT=... -DNAME=... -P EmbedText.cmake
file(READ "${INPUT}" content)
# Raw string pieces of at most 8,000 bytes each (compilers cap a literal's length).
string(LENGTH "${content}" size)
set(out "// Generated from ${INPUT} by cmake/EmbedText.cmake: do not edit.\n#pragma once\n#include <string_view>\n")
string(APPEND out "inline constexpr char ${NAME}_bytes[] =\n")
set(pos 0)
while(pos LESS size)
  string(SUBSTRING "${content}" ${pos} 8000 piece)
  string(APPEND out "R\"IMPSIM_EMBED(${piece})IMPSIM_EMBED\"\n")
  math(EXPR pos "${pos} + 8000")
endwhile()
string(APPEND out ";\ninline constexpr std::string_view ${NAME}{${NAME}_bytes, sizeof(${NAME}_bytes) - 1};\n")
file(WRITE "${OUTPUT}" "${out}")
