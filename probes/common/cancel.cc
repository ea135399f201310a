#include "probes/common/cancel.h"

#include <sys/socket.h>

namespace fabricctl::probes {

void Cancellation::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
}

void Cancellation::Watch(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  fds_.insert(fd);
  if (cancelled_) ::shutdown(fd, SHUT_RDWR);
}

void Cancellation::Unwatch(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  fds_.erase(fd);
}

}  // namespace fabricctl::probes
