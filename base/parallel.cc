#include "base/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace fabricctl {

void ParallelFor(size_t n, size_t max_threads, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  const size_t threads = std::min(n, std::max<size_t>(1, max_threads));
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();  // the caller's thread is one of them
  for (auto& t : pool) t.join();
}

}  // namespace fabricctl
