// The heap's large pages (base/heap.h): where the kernel offers them, the
// reservation is marked for them and a big array is carved out of it.
#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <cctype>
#include <string>
#include <vector>

#include "impsim/base/heap.h"
#include "impsim/base/under_valgrind.h"

using namespace impsim;

namespace {

struct Range {
  uintptr_t from = 0, to = 0;
};

// The mappings of this process that carry the "hg" flag (MADV_HUGEPAGE).
std::vector<Range> large_page_ranges() {
  std::ifstream smaps("/proc/self/smaps");
  std::vector<Range> out;
  Range current;
  std::string line;
  while (std::getline(smaps, line)) {
    if (line.empty()) continue;
    if (std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') != std::string::npos &&
        line.find(':') > line.find(' ')) {
      current.from = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
      current.to = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    } else if (line.starts_with("VmFlags:") && (line + " ").find(" hg ") != std::string::npos) {
      out.push_back(current);
    }
  }
  return out;
}

bool kernel_offers_large_pages() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(f, modes);
  return modes.find("[always]") != std::string::npos || modes.find("[madvise]") != std::string::npos;
}

}  // namespace

TEST_CASE("the heap's first 64 MiB are marked for large pages, and big arrays come from them") {
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
  return;  // the sanitizer's allocator, or not glibc's: nothing is asked
#endif
  if (under_valgrind() || !kernel_offers_large_pages()) return;
  prefer_large_pages();
  const std::vector<Range> ranges = large_page_ranges();
  uintptr_t marked = 0;
  for (const Range& r : ranges) marked += r.to - r.from;
  CHECK(marked >= (uintptr_t{60} << 20));
  // 4 MiB: past glibc's own threshold (128 KiB) for a mapping of its own.
  // Its end, at least, lies in the marked range (the range starts at the
  // first 2 MiB boundary of the reservation, and the array may start below).
  auto array = std::make_unique<char[]>(size_t{4} << 20);
  const auto end = reinterpret_cast<uintptr_t>(array.get()) + (size_t{4} << 20);
  bool inside = false;
  for (const Range& r : ranges) inside |= end > r.from && end <= r.to;
  CHECK(inside);
}
