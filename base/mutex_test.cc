#include "base/mutex.h"

#include <catch2/catch.hpp>
#include <thread>

#include "absl/time/clock.h"

namespace fabricctl {
namespace {

TEST_CASE("a wait ends when another thread sets the flag under the lock, or at its timeout") {
  Mutex mu;
  bool flag = false;
  {
    MutexLock lock(&mu);
    CHECK_FALSE(mu.AwaitWithTimeout(&flag, absl::Milliseconds(20)));  // nobody sets it
  }
  std::thread setter([&] {
    absl::SleepFor(absl::Milliseconds(20));
    MutexLock lock(&mu);
    flag = true;
  });
  {
    MutexLock lock(&mu);
    // Generous: the wait ends when the flag is set, long before this.
    CHECK(mu.AwaitWithTimeout(&flag, absl::Seconds(30)));
    CHECK(flag);
  }
  setter.join();
  int count = 0;
  std::thread counter([&] {
    for (int i = 0; i < 3; ++i) {
      MutexLock lock(&mu);
      ++count;
    }
  });
  {
    MutexLock lock(&mu);
    CHECK(mu.AwaitWithTimeout(
        +[](int* c) { return *c == 3; }, &count, absl::Seconds(30)));
  }
  counter.join();
}

}  // namespace
}  // namespace fabricctl
