#include "base/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fabricctl {

std::string FileKind(unsigned mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, const std::string& what,
                                            size_t max_bytes) {
  auto fail = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": cannot read '", path, "': ", why));
  };
  if (path.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": no file named"));
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return fail(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return fail(std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(absl::StrCat("is ", FileKind(st.st_mode), ", not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return fail(absl::StrCat("is ", st.st_size, " bytes; at most ", max_bytes, " are read"));
  }
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return fail(std::strerror(error));
    }
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
    if (out.size() > max_bytes) {  // it grew while being read
      ::close(fd);
      return fail(absl::StrCat("is larger than ", max_bytes, " bytes"));
    }
  }
  ::close(fd);
  return out;
}

}  // namespace fabricctl
