#include "impsim/base/file_write.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <streambuf>

#include "impsim/base/errors.h"

namespace impsim {

namespace {

std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a pipe or FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// 1 or 2 when `st` is this process's standard output or error (-o
// /dev/stdout): written through that descriptor, at its offset, as a shell
// redirection (`>` or `>>`) left it.
int standard_stream_of(const struct stat& st) {
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat s {};
    if (::fstat(fd, &s) == 0 && same_file(s, st)) return fd;
  }
  return -1;
}

[[noreturn]] void refuse(const std::string& flag, const std::string& path, const std::string& why) {
  throw UsageError("<command line>", fmt::format("{} {}: {}", flag, path, why));
}

// The folder a name is in, and the name.
std::pair<std::string, std::string> split(const std::string& path) {
  std::filesystem::path p(path);
  std::string dir = p.parent_path().string();
  return {dir.empty() ? "." : dir, p.filename().string()};
}

// ".impsim-" and 12 random letters and digits: never a name a pull request
// can plant ahead of time (and O_EXCL refuses whatever is there anyway).
std::string temporary_name() {
  static constexpr std::string_view kChars = "abcdefghijklmnopqrstuvwxyz0123456789";
  static uint64_t calls = 0;
  uint64_t seed = 0;
  if (::getrandom(&seed, sizeof seed, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof seed))
    seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
           (static_cast<uint64_t>(::getpid()) << 32);
  std::mt19937_64 random(seed + ++calls);
  std::string name = ".impsim-";
  for (int i = 0; i < 12; ++i) name += kChars[random() % kChars.size()];
  return name + ".tmp";
}

mode_t new_file_mode() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

// The file to be replaced, as it is now: it must still be this file when
// the new one is renamed over it, and the new one gets its mode and owner.
void remember_file(WriteTarget& t, const struct stat& st) {
  t.existed = true;
  t.dev = st.st_dev;
  t.ino = st.st_ino;
  t.mode = st.st_mode & 0777;
  t.uid = st.st_uid;
  t.gid = st.st_gid;
}

}  // namespace

WriteTarget output_target(const std::string& flag, const std::string& path) {
  WriteTarget t;
  t.flag = flag;
  t.path = path;
  t.write_at = path;
  if (path.empty()) refuse(flag, "\"\"", "an empty path; expected a file name");
  struct stat ls {};
  if (::lstat(path.c_str(), &ls) != 0) {
    if (errno != ENOENT)
      throw OutputError(fmt::format("{} {}: cannot write it: {}", flag, path, std::strerror(errno)));
    if (path.back() == '/') refuse(flag, path, "names a folder; expected a file name");
    return t;  // a new file
  }
  struct stat st = ls;
  if (S_ISLNK(ls.st_mode)) {
    if (::stat(path.c_str(), &st) != 0)
      refuse(flag, path,
             "is a symbolic link to nothing that exists; impsim does not write through a link (one planted in a "
             "folder would choose the file written): remove the link or name the file itself");
    if (S_ISREG(st.st_mode) && (t.fd = standard_stream_of(st)) < 0) {
      std::error_code ec;
      std::string target = std::filesystem::canonical(path, ec).string();
      refuse(flag, path,
             fmt::format("is a symbolic link to {}; impsim does not write through a link (one planted in a folder "
                         "would choose the file written): name the file itself",
                         ec ? "a regular file" : "the file " + target));
    }
  }
  if (S_ISDIR(st.st_mode)) refuse(flag, path, "is a directory; expected a file name");
  if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))
    refuse(flag, path, fmt::format("is {}; impsim writes a regular file, a character device or a pipe", kind_of(st.st_mode)));
  if (!S_ISREG(st.st_mode) || t.fd >= 0) {
    t.in_place = true;
    if (t.fd < 0) t.fd = standard_stream_of(st);
    return t;
  }
  if (st.st_nlink > 1)
    refuse(flag, path,
           fmt::format("has {} hard links; a new file in its place would split them (the other names would keep "
                       "the old bytes): write another file, or remove the other links",
                       st.st_nlink));
  remember_file(t, st);
  return t;
}

std::optional<WriteTarget> bless_target(const std::string& path) {
  struct stat st {}, ls {};
  if (::stat(path.c_str(), &st) != 0 || ::lstat(path.c_str(), &ls) != 0) return std::nullopt;
  auto no = [&](const std::string& why) { throw UsageError(path, "--bless: " + why + "; nothing was run"); };
  if (!S_ISREG(st.st_mode))
    no(fmt::format("{} is {}, not a regular file: --bless replaces a regular file with the blessed text", path,
                   kind_of(st.st_mode)));
  if (st.st_nlink > 1)
    no(fmt::format("{} has {} hard links; a new file in its place would split them (the other names would keep the "
                   "old counts): bless a copy, or remove the other links",
                   path, st.st_nlink));
  std::array<char, PATH_MAX> resolved{};
  struct stat rs {};
  // The file read is the one replaced: a link is followed to its target
  // (which is rewritten, the link kept), and a name that no longer leads to
  // the same file (a deleted file behind /proc/self/fd) is refused.
  if (!::realpath(path.c_str(), resolved.data()) || ::lstat(resolved.data(), &rs) != 0 || !S_ISREG(rs.st_mode) ||
      !same_file(rs, st))
    no(fmt::format("cannot find the file {} names, to replace it", path));
  WriteTarget t;
  t.flag = "--bless";
  t.path = path;
  t.write_at = resolved.data();
  t.through_link = S_ISLNK(ls.st_mode);
  remember_file(t, st);
  return t;
}

void refuse_output_over_inputs(const std::string& flag, const std::string& path,
                               const std::vector<std::string>& inputs) {
  struct stat os {};
  bool exists = ::stat(path.c_str(), &os) == 0;
  for (const std::string& in : inputs) {
    struct stat is {};
    bool same = false;
    if (in == "-") {
      same = exists && S_ISREG(os.st_mode) && ::fstat(STDIN_FILENO, &is) == 0 && same_file(is, os);
    } else if (::stat(in.c_str(), &is) == 0) {
      same = exists && S_ISREG(os.st_mode) && same_file(is, os);
    } else {
      std::error_code e1, e2;
      auto a = std::filesystem::weakly_canonical(std::filesystem::absolute(in, e1), e1);
      auto b = std::filesystem::weakly_canonical(std::filesystem::absolute(path, e2), e2);
      same = !e1 && !e2 && a == b;
    }
    if (same)
      refuse(flag, path,
             fmt::format("is the scenario {} (the same file): writing it would destroy the input; name another file",
                         in == "-" ? "read from standard input" : in));
  }
}

// The stream's buffer: bytes go to the temporary (or the device) as the
// buffer fills; the first failure is kept for commit() and every later
// byte dropped.
struct FileWriter::Impl : std::streambuf {
  WriteTarget t;
  std::ostream os{this};
  std::array<char, 1 << 16> buf{};
  int dir = -1;  // the folder of a replaced file
  int fd = -1;
  std::string tmp;  // the temporary's name in `dir`
  bool opened = false, committed = false;
  std::string error;  // the first failure, as a message

  explicit Impl(WriteTarget target) : t(std::move(target)) { setp(buf.data(), buf.data() + buf.size()); }

  ~Impl() override {
    if (fd >= 0 && fd != t.fd) ::close(fd);
    if (!tmp.empty() && !committed) ::unlinkat(dir, tmp.c_str(), 0);
    if (dir >= 0) ::close(dir);
  }

  void fail(const std::string& step, int err) {
    if (error.empty()) error = fmt::format("{}: {}", step, std::strerror(err));
  }

  void open() {
    opened = true;
    if (t.in_place) {
      if (t.fd >= 0) {
        fd = t.fd;
        return;
      }
      // Non-blocking, so that a FIFO nobody reads is an error rather than a hang.
      fd = ::open(t.write_at.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
      if (fd < 0) {
        if (errno == ENXIO) error = "cannot open it: no process is reading it (a FIFO without a reader)";
        else fail("cannot open it", errno);
        return;
      }
      struct stat st {};
      if (::fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
        error = "it changed while impsim ran (it was a device or a pipe); not written";
        return;
      }
      int flags = ::fcntl(fd, F_GETFL);
      if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
      return;
    }
    auto [folder, name] = split(t.write_at);
    dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return fail(fmt::format("cannot open its folder {}", folder), errno);
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
      std::string n = temporary_name();
      fd = ::openat(dir, n.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd >= 0) tmp = n;
      else if (errno != EEXIST) break;
    }
    if (fd < 0) fail(fmt::format("cannot create a temporary file in {}", folder), errno);
  }

  bool write_out(const char* p, size_t n) {
    if (!opened) open();
    if (!error.empty()) return false;
    while (n > 0) {
      ssize_t w = ::write(fd, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        fail("write failed", errno);
        return false;
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }

  bool drain() {
    bool ok = write_out(pbase(), static_cast<size_t>(pptr() - pbase()));
    setp(buf.data(), buf.data() + buf.size());
    return ok;
  }

  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

  [[noreturn]] void throw_error() {
    std::string kept = t.existed ? fmt::format("; {} is as it was", t.path) : "";
    throw OutputError(fmt::format("{} {}: {}{}", t.flag, t.path, error, kept));
  }

  void commit() {
    os.flush();
    if (!opened || pptr() != pbase()) drain();
    if (!error.empty()) throw_error();
    if (t.in_place) {
      if (fd != t.fd && ::close(fd) != 0) fail("write failed", errno);
      fd = -1;
      committed = true;
      if (!error.empty()) throw_error();
      return;
    }
    if (::fsync(fd) != 0) fail("cannot flush it to disk (fsync)", errno);
    if (t.existed && ::fchown(fd, t.uid, t.gid) != 0) (void)::fchown(fd, static_cast<uid_t>(-1), t.gid);
    // The permission bits (not set-user-ID: the text is new), after fchown,
    // which may reset them.
    if (error.empty() && ::fchmod(fd, t.existed ? t.mode : new_file_mode()) != 0) fail("cannot set its mode", errno);
    if (error.empty() && ::close(fd) != 0) fail("write failed", errno);
    fd = -1;
    if (!error.empty()) throw_error();
    auto [folder, name] = split(t.write_at);
    struct stat now {};
    bool there = ::fstatat(dir, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0;
    if (t.existed && (!there || !S_ISREG(now.st_mode) || now.st_dev != t.dev || now.st_ino != t.ino ||
                      now.st_nlink > 1))
      error = "it changed while impsim ran (it is not the file that was checked); not replaced";
    else if (!t.existed && there)
      error = "it appeared while impsim ran; not replaced";
    if (!error.empty()) throw_error();
    if (::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) {
      fail("cannot put the new file in its place (rename)", errno);
      throw_error();
    }
    committed = true;
    // The rename is durable once the folder is: some filesystems cannot
    // fsync a folder (EINVAL), and there is nothing more to do then.
    if (::fsync(dir) != 0 && errno != EINVAL && errno != EROFS) {
      fail("the file is in place but its folder could not be flushed to disk (fsync)", errno);
      throw OutputError(fmt::format("{} {}: {}", t.flag, t.path, error));
    }
  }
};

FileWriter::FileWriter(WriteTarget target) : impl_(std::make_unique<Impl>(std::move(target))) {}
FileWriter::~FileWriter() = default;
std::ostream& FileWriter::stream() { return impl_->os; }
void FileWriter::commit() { impl_->commit(); }

void write_file(const WriteTarget& target, std::string_view text) {
  FileWriter w(target);
  w.stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  w.commit();
}

// Without blocking, ever: the path is named by the environment (the CI
// runner's $GITHUB_STEP_SUMMARY), and a FIFO nobody reads used to hold the
// command in open() for good. A FIFO without a reader fails to open
// (ENXIO); one whose reader does not read fails to take the text (EAGAIN).
void append_file(const std::string& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_CLOEXEC | O_NONBLOCK, 0666);
  if (fd < 0)
    throw OutputError(fmt::format("cannot append to {}: {}", path,
                                  errno == ENXIO ? "a FIFO that no process is reading" : std::strerror(errno)));
  const char* p = text.data();
  size_t n = text.size();
  int err = 0;
  while (n > 0 && err == 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) err = errno;
    else {
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err)
    throw OutputError(fmt::format("cannot append to {}: {}", path,
                                  err == EAGAIN ? "its reader is not taking what is written" : std::strerror(err)));
}

}  // namespace impsim
