#include "base/parallel.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "catch2/catch.hpp"

namespace fabricctl {
namespace {

TEST_CASE("every index runs once") {
  for (size_t n : {0, 1, 7, 1000}) {
    std::vector<std::atomic<int>> runs(n);
    ParallelFor(n, 8, [&](size_t i) { ++runs[i]; });
    for (auto& r : runs) CHECK(r.load() == 1);
  }
}

TEST_CASE("no more than max_threads calls run at once, and that many do") {
  std::atomic<int> running{0}, peak{0};
  std::atomic<int> arrived{0};
  ParallelFor(64, 4, [&](size_t) {
    const int now = ++running;
    int seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
    // The first four wait for each other: four threads exist, whatever the scheduler does.
    if (arrived.fetch_add(1) < 4) {
      while (arrived.load() < 4) std::this_thread::yield();
    }
    --running;
  });
  CHECK(peak.load() == 4);
}

TEST_CASE("zero threads asked is one thread, the caller's") {
  std::set<std::thread::id> ids;
  std::mutex mu;
  ParallelFor(5, 0, [&](size_t) {
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  CHECK(ids == std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST_CASE("a slow call holds up only its own thread: the others finish the rest") {
  // Call 0 blocks until every other call has run; with batches of two it would never return.
  std::atomic<int> others{0};
  ParallelFor(50, 2, [&](size_t i) {
    if (i == 0) {
      while (others.load() < 49) std::this_thread::yield();
    } else {
      ++others;
    }
  });
  CHECK(others.load() == 49);
}

}  // namespace
}  // namespace fabricctl
