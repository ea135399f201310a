#include "cli/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "absl/strings/str_cat.h"

namespace fabricctl::cli {

absl::Status WriteOutput(const std::string& path, const std::string& contents) {
  if (path.empty() || path == "-") {
    std::cout << contents;
    std::cout.flush();
    return absl::OkStatus();
  }
  const std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--output: cannot write '", path, "': ", std::strerror(errno)));
  }
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int error = errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      return absl::InternalError(absl::StrCat("--output: writing '", path, "': ", std::strerror(error)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temporary.c_str());
    return absl::InternalError(absl::StrCat("--output: writing '", path, "': ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace fabricctl::cli
