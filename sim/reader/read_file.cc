// Reading a scenario file's bytes: a size limit before anything is read,
// standard input and pipes as streams.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "impsim/reader/read_scenario.h"

namespace impsim {

namespace {

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

[[noreturn]] void too_large(const std::string& path, const std::string& size, size_t limit) {
  throw InputLimitError("max-file-bytes", display_name(path), {}, "",
                        fmt::format("the file is {} bytes; the limit is {} bytes (--max-file-bytes)", size, limit));
}

}  // namespace

std::string read_scenario_file(const std::string& path, const InputLimits& limits) {
  const std::string name = display_name(path);
  // No line or column: nothing of the file was read.
  auto system_error = [&](const char* what) {
    return InputError(name, kNoPosition, "", fmt::format("{}: {}", what, std::strerror(errno)));
  };
  int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) throw InputError(name, kNoPosition, "", "no such file");
  if (fd < 0) throw system_error("cannot open the file");
  struct Closer {
    int fd;
    ~Closer() {
      if (fd != STDIN_FILENO) ::close(fd);
    }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw system_error("cannot read the file");
  if (S_ISDIR(st.st_mode)) {
    // The commands that take several files never get here with one: a
    // folder stands for the files under it (sim/cli/scenario_files.h).
    throw InputError(name, kNoPosition, "", "is a directory, not a scenario file");
  }
  std::string text;
  if (S_ISREG(st.st_mode)) {
    // A regular file is refused on its size, before a byte is read.
    if (static_cast<uint64_t>(st.st_size) > limits.max_file_bytes)
      too_large(path, std::to_string(st.st_size), limits.max_file_bytes);
    text.reserve(static_cast<size_t>(st.st_size));
  }
  // Pipes, standard input and devices have no size: read them as streams,
  // never holding more than the limit plus one chunk.
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw system_error("cannot read the file");
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > limits.max_file_bytes)
      too_large(path, fmt::format("more than {}", limits.max_file_bytes), limits.max_file_bytes);
  }
  return text;
}

Scenario parse_scenario_file(const std::string& path, const InputLimits& limits) {
  auto text = std::make_shared<const std::string>(read_scenario_file(path, limits));
  Scenario sc = parse_scenario(*text, display_name(path), limits);
  sc.source = std::move(text);
  return sc;
}

}  // namespace impsim
