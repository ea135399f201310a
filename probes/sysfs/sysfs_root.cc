#include "probes/sysfs/sysfs_root.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace fabricctl::probes {
namespace {

absl::Status PosixError(const std::string& path, int error) {
  std::string message = absl::StrCat(path, ": ", std::strerror(error));
  if (error == ENOENT || error == ENOTDIR) return absl::NotFoundError(message);
  return absl::UnavailableError(message);
}

}  // namespace

SysfsRoot::SysfsRoot(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

std::string SysfsRoot::Resolve(const std::string& path) const { return root_ + path; }

absl::StatusOr<std::string> SysfsRoot::Read(const std::string& path) const {
  const std::string full = Resolve(path);
  // O_NONBLOCK: a FIFO planted under the root must not hang an audit; only regular files
  // (every sysfs attribute and procfs file is one) are read.
  int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return PosixError(full, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat(full, ": not a regular file"));
  }
  std::string out;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      ::close(fd);
      return PosixError(full, error);
    }
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
    if (out.size() > (1u << 20)) break;  // no sysfs attribute is this large
  }
  ::close(fd);
  return out;
}

absl::StatusOr<std::string> SysfsRoot::ReadTrimmed(const std::string& path) const {
  auto text = Read(path);
  if (!text.ok()) return text.status();
  return std::string(absl::StripAsciiWhitespace(*text));
}

absl::StatusOr<std::vector<std::string>> SysfsRoot::List(const std::string& path) const {
  const std::string full = Resolve(path);
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(full.c_str()), &::closedir);
  if (!dir) return PosixError(full, errno);
  std::vector<std::string> names;
  while (dirent* entry = ::readdir(dir.get())) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<std::string> SysfsRoot::ReadLink(const std::string& path) const {
  const std::string full = Resolve(path);
  char buffer[4096];
  ssize_t n = ::readlink(full.c_str(), buffer, sizeof(buffer) - 1);
  if (n < 0) return PosixError(full, errno);
  return std::string(buffer, static_cast<size_t>(n));
}

bool SysfsRoot::Exists(const std::string& path) const {
  struct stat st;
  return ::stat(Resolve(path).c_str(), &st) == 0;
}

}  // namespace fabricctl::probes
