#ifndef FABRICCTL_PROBES_COMMON_CANCEL_H_
#define FABRICCTL_PROBES_COMMON_CANCEL_H_

#include <atomic>
#include <set>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"

namespace fabricctl::probes {

// Stops a running probe from another thread: Cancel() shuts down every socket the probe has
// registered (its blocking send and recv calls return at once) and sets a flag its spinning
// loops (RDMA completion polls) check. Used when the probe's requester goes away: the agent's
// RPC was cancelled or its deadline passed, or the server half is stopped.
//
// Thread-safe. A socket must be unregistered before it is closed (WatchedFd does both in order).
class Cancellation {
 public:
  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  // Idempotent.
  void Cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
  const std::atomic<bool>& flag() const { return cancelled_; }

  // Registers `fd` (shut down at once when already cancelled).
  void Watch(int fd);
  void Unwatch(int fd);

 private:
  std::atomic<bool> cancelled_{false};
  Mutex mu_;
  std::set<int> fds_ ABSL_GUARDED_BY(mu_);
};

// Registers a socket with a cancellation (nullptr: none) for its own lifetime. Declare it after
// the socket's owner, so that it unregisters before the socket is closed.
class WatchedFd {
 public:
  WatchedFd(Cancellation* cancel, int fd) : cancel_(cancel), fd_(fd) {
    if (cancel_ != nullptr && fd_ >= 0) cancel_->Watch(fd_);
  }
  ~WatchedFd() {
    if (cancel_ != nullptr && fd_ >= 0) cancel_->Unwatch(fd_);
  }
  WatchedFd(WatchedFd&& other) noexcept : cancel_(other.cancel_), fd_(other.fd_) { other.fd_ = -1; }
  WatchedFd(const WatchedFd&) = delete;
  WatchedFd& operator=(const WatchedFd&) = delete;

 private:
  Cancellation* cancel_;
  int fd_;
};

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COMMON_CANCEL_H_
