// Every file impsim writes (--bless, trace and explore -o, sweep --svg, the
// GitHub step summary) is written here, the way careful tools write files:
// a scenario's folder may come from a stranger's pull request, so neither a
// planted link nor a fixed temporary name may choose the file written, and
// a failed write must leave the old file as it was.
//
// A regular file is replaced whole: a fresh temporary beside it (a random
// name, created with O_EXCL, so never through a link), written, fsync'd,
// given the old file's mode (and owner, where the system lets it), renamed
// over the old name, the folder fsync'd. A device or a pipe (/dev/null,
// /dev/stdout, a FIFO a process reads) is written as it is. Anything else
// is refused, before anything runs. docs/limits.md, "Files: each input read once, each output replaced whole".
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace impsim {

// Where a file will be written, decided and checked before anything runs.
struct WriteTarget {
  std::string flag;           // "-o", "--svg", "--bless": names the file in messages
  std::string path;           // as given
  std::string write_at;       // the name replaced (--bless: a link's target), or the device opened
  bool in_place = false;      // a device or a pipe: written as it is, not replaced
  int fd = -1;                // in place: 1 or 2 when the path is this process's standard output or error
  bool existed = false;       // replaced: a file was there, and must still be the same file when replaced
  bool through_link = false;  // --bless: `path` is a symbolic link to `write_at`
  dev_t dev = 0;
  ino_t ino = 0;
  mode_t mode = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// An output flag's file (-o, --svg). A new file, or a regular file with
// one link, is replaced; a character device or a pipe is written as it is.
// Refused with UsageError (exit 2): an empty path, a directory, a block
// device or a socket, a regular file with several hard links (replacing it
// would split them), and a symbolic link unless it leads to a device or a
// pipe (/dev/stdout): a planted link must not choose which file is written.
WriteTarget output_target(const std::string& flag, const std::string& path);

// The scenario file --bless rewrites: the regular file `path` names,
// through any symbolic links (the link is kept, its target rewritten).
// Refused with UsageError (exit 2): anything but a regular file (a FIFO,
// /dev/stdin on a pipe, a device, a directory), and a file with several
// hard links. nullopt when `path` cannot be read at all: the reader says why.
std::optional<WriteTarget> bless_target(const std::string& path);

// Refuses with UsageError (exit 2) an output `path` (of `flag`) that is one
// of the `inputs` ("-": standard input): the same regular file (links and
// hard links followed), or the same path when the input does not exist.
void refuse_output_over_inputs(const std::string& flag, const std::string& path,
                               const std::vector<std::string>& inputs);

// A file being written. Nothing is opened before the first byte (or the
// commit of an empty file); until commit() the old file is untouched, and
// a writer destroyed before commit() removes its temporary.
class FileWriter {
 public:
  explicit FileWriter(WriteTarget target);
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  std::ostream& stream();
  // Puts the file in place. Throws OutputError (exit 4) saying what failed
  // (a write, ENOSPC, the fsync, the rename, the file changed meanwhile);
  // the old file is then as it was and the temporary removed.
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `text` written to `target` by a FileWriter.
void write_file(const WriteTarget& target, std::string_view text);

// Appends `text` to `path` (O_APPEND, created when missing): the one file
// impsim adds to rather than replaces, $GITHUB_STEP_SUMMARY, which the CI
// runner owns. Throws OutputError.
void append_file(const std::string& path, std::string_view text);

}  // namespace impsim
