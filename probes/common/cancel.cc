#include "probes/common/cancel.h"

#include <sys/socket.h>

namespace fabricctl::probes {

void Cancellation::Cancel() {
  MutexLock lock(&mu_);
  cancelled_ = true;
  for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
}

void Cancellation::Watch(int fd) {
  MutexLock lock(&mu_);
  fds_.insert(fd);
  if (cancelled_) ::shutdown(fd, SHUT_RDWR);
}

void Cancellation::Unwatch(int fd) {
  MutexLock lock(&mu_);
  fds_.erase(fd);
}

}  // namespace fabricctl::probes
