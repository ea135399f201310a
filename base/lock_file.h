#ifndef FABRICCTL_BASE_LOCK_FILE_H_
#define FABRICCTL_BASE_LOCK_FILE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace fabricctl {

// An exclusive advisory lock (flock) on a file holding the owner's process id, held as long
// as the object lives. The kernel drops it when the process dies, so a crash never leaves a
// stale lock behind.
class LockFile {
 public:
  // Takes the lock on `path` (created 0644 when missing; a symlink or a non-regular file is
  // refused) without waiting. When another process holds it: FailedPrecondition naming `what`,
  // the path and the holder's pid.
  static absl::StatusOr<std::unique_ptr<LockFile>> Acquire(const std::string& path,
                                                           const std::string& what);
  ~LockFile();
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  LockFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
};

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_LOCK_FILE_H_
