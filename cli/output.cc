#include "cli/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/exit_code.h"
#include "base/status_macros.h"

namespace fabricctl::cli {
namespace {

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

absl::Status OutputError(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("--output '", path, "': ", what));
}

}  // namespace

absl::Status CheckOutput(const std::string& path) {
  if (path.empty() || path == "-") return absl::OkStatus();
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) return OutputError(path, "is a symbolic link; give the file itself");
    if (!S_ISREG(st.st_mode)) return OutputError(path, "exists and is not a regular file");
  } else if (errno != ENOENT) {
    return OutputError(path, std::strerror(errno));
  }
  const std::string dir = DirectoryOf(path);
  if (::stat(dir.c_str(), &st) != 0)
    return OutputError(path, absl::StrCat(dir, ": ", std::strerror(errno)));
  if (!S_ISDIR(st.st_mode)) return OutputError(path, absl::StrCat(dir, " is not a directory"));
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return OutputError(path, absl::StrCat("cannot write in ", dir, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status WriteOutput(const std::string& path, const std::string& contents) {
  if (path.empty() || path == "-") {
    std::cout << contents;
    std::cout.flush();
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(CheckOutput(path));
  // A temporary file of our own making (O_EXCL, a name no one can plant in advance) in the
  // target's directory, written, synced, then renamed over the target: a reader sees the old
  // report or the new one, and no link planted at a predictable name is followed.
  std::string pattern = DirectoryOf(path) + "/.fabricctl-output-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0)
    return OutputError(path,
                       absl::StrCat("cannot create a file beside it: ", std::strerror(errno)));
  const std::string temporary(name.data());
  auto fail = [&](int error) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return absl::InternalError(
        absl::StrCat("--output: writing '", path, "': ", std::strerror(error)));
  };
  // The mode a new file would have (0666 less the umask), or the one the old report had.
  mode_t mode;
  struct stat old {};
  if (::stat(path.c_str(), &old) == 0) {
    mode = old.st_mode & 0777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd, mode) != 0) return fail(errno);
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(n < 0 ? errno : ENOSPC);
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail(errno);
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return absl::InternalError(
        absl::StrCat("--output: writing '", path, "': ", std::strerror(error)));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return absl::InternalError(
        absl::StrCat("--output: writing '", path, "': ", std::strerror(error)));
  }
  return absl::OkStatus();
}

int Fail(std::ostream& err, const std::string& command, const absl::Status& status) {
  err << "fabricctl " << command << ": " << status.message() << "\n";
  return kExitUnknown;
}

}  // namespace fabricctl::cli
