#ifndef FABRICCTL_BASE_MUTEX_H_
#define FABRICCTL_BASE_MUTEX_H_

#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace fabricctl {

// A std::mutex that clang's thread-safety analysis understands, as LevelDB's port::Mutex: shared
// state is ABSL_GUARDED_BY one of these and scripts/thread_safety.sh checks every use at
// compile time, while ThreadSanitizer follows it at run time (it intercepts pthreads; Debian's
// abseil, whose absl::Mutex would carry the same annotations, is not built for it).
//
// A wait re-checks its condition whenever the mutex is released (as absl::Mutex::Await does),
// so a waiter needs no separate condition variable or notify.
class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    // Before the unlock: once it is released, another thread may destroy the mutex.
    released_.notify_all();
    mu_.unlock();
  }

  // With the lock held: waits (the lock released meanwhile) until `*flag` is true or `timeout`
  // has passed; returns whether it is true.
  bool AwaitWithTimeout(const bool* flag, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) {
    return AwaitWithTimeout(
        +[](const bool* f) { return *f; }, flag, timeout);
  }
  // The same until `holds(arg)`.
  template <typename T>
  bool AwaitWithTimeout(bool (*holds)(T*), T* arg, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) {
    std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
    const bool held = released_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                                         [holds, arg] { return holds(arg); });
    lock.release();  // still held, by the caller
    return held;
  }

 private:
  std::mutex mu_;
  std::condition_variable released_;
};

// Holds a Mutex for its scope.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_MUTEX_H_
