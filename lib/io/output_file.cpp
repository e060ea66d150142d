#include "maskgat/io/output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <system_error>

#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

namespace fs = std::filesystem;

// Closes a file descriptor when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

// `<dir>/.<name>.maskgat-tmp-`: the prefix of this path's temporary files, followed by the pid of
// the process that wrote them.
std::string temporary_prefix(const fs::path& path) {
  return "." + path.filename().string() + ".maskgat-tmp-";
}

fs::path directory_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

// Removes temporary files of `path` left by a writer that no longer runs (killed between naming
// its temporary file and renaming it over `path`, the one moment a temporary file has a name).
void remove_stale_temporaries(const fs::path& path) {
  const std::string prefix = temporary_prefix(path);
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory_of(path), error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (end == name.c_str() + prefix.size() || *end != '\0' || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      fs::remove(entry.path(), error);
    }
  }
}

void write_all(int fd, std::string_view content, const fs::path& path) {
  while (!content.empty()) {
    const ssize_t written = ::write(fd, content.data(), content.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw IoError(path.string() + ": write failed: " + detail::errno_text());
    }
    content.remove_prefix(static_cast<std::size_t>(written));
  }
  if (::fsync(fd) != 0) throw IoError(path.string() + ": write failed: " + detail::errno_text());
}

// Makes the directory entries of `path` durable; best effort (some file systems refuse).
void sync_directory(const fs::path& path) {
  const FileDescriptor dir(::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() >= 0) ::fsync(dir.get());
}

IoError exists_error(const fs::path& path) {
  return IoError(path.string() + ": the file exists; pass --force to replace it");
}

// Gives the written anonymous file `fd` (O_TMPFILE) the name `target`; false when the system
// cannot name it (no /proc), so the caller falls back to a named temporary file.
bool link_anonymous(int fd, const fs::path& target, const fs::path& path) {
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, target.c_str(), AT_SYMLINK_FOLLOW) == 0) {
    return true;
  }
  if (errno == EEXIST) {
    if (target == path) throw exists_error(path);
    throw IoError(target.string() + ": a temporary file of this name exists; remove it");
  }
  if (errno == ENOENT || errno == EPERM || errno == EACCES) return false;
  throw IoError(path.string() + ": cannot create the file: " + detail::errno_text());
}

// Moves the complete temporary file `temporary` to `path`: a rename (replacing `path`) when
// `overwrite`, else a hard link that fails if `path` exists, so a file created meanwhile is not
// replaced either. Removes `temporary` on failure.
void publish(const fs::path& temporary, const fs::path& path, bool overwrite) {
  const bool moved = (overwrite ? ::rename(temporary.c_str(), path.c_str())
                                : ::link(temporary.c_str(), path.c_str())) == 0;
  const bool exists = !moved && errno == EEXIST;
  const std::string why = moved ? std::string() : detail::errno_text();
  if (!overwrite || !moved) ::unlink(temporary.c_str());
  if (moved) return;
  if (exists) throw exists_error(path);
  throw IoError(path.string() + ": cannot replace the file: " + why);
}

// The fallback for file systems without O_TMPFILE: a named temporary file, removed on failure.
void write_through_named_temporary(const fs::path& path, std::string_view content, bool overwrite) {
  const fs::path temporary =
      directory_of(path) / (temporary_prefix(path) + std::to_string(::getpid()));
  const FileDescriptor fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (fd.get() < 0) {
    throw IoError(temporary.string() + ": cannot create the file: " + detail::errno_text());
  }
  try {
    write_all(fd.get(), content, temporary);
  } catch (const IoError&) {
    ::unlink(temporary.c_str());
    throw;
  }
  publish(temporary, path, overwrite);
}

}  // namespace

void write_file_atomically(const fs::path& path, std::string_view content, bool overwrite) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) == 0) {
    // A device, FIFO, directory or symbolic link is never replaced by a regular file.
    if (!S_ISREG(status.st_mode)) {
      throw IoError(path.string() +
                    ": exists and is not a regular file; only a regular file is "
                    "ever replaced");
    }
    if (!overwrite) throw exists_error(path);
  }
  remove_stale_temporaries(path);
  // The content goes to an anonymous file in the destination directory, which a kill at any
  // moment before it is named leaves nowhere: the kernel frees it.
  const FileDescriptor fd(
      ::open(directory_of(path).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666));
  if (fd.get() < 0) {
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
      throw IoError(path.string() + ": cannot create the file: " + detail::errno_text());
    }
    write_through_named_temporary(path, content, overwrite);
    sync_directory(path);
    return;
  }
  write_all(fd.get(), content, path);
  // Without `overwrite` the file is linked to `path` directly (failing if it exists). Replacing
  // needs a name to rename from: `.<name>.maskgat-tmp-<pid>`, which exists only between these two
  // calls; if the process is killed there, the next write to `path` removes it.
  const fs::path target =
      overwrite ? directory_of(path) / (temporary_prefix(path) + std::to_string(::getpid())) : path;
  if (!link_anonymous(fd.get(), target, path)) {
    write_through_named_temporary(path, content, overwrite);
  } else if (overwrite) {
    publish(target, path, true);
  }
  sync_directory(path);
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace maskgat
