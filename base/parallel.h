#ifndef FABRICCTL_BASE_PARALLEL_H_
#define FABRICCTL_BASE_PARALLEL_H_

#include <cstddef>
#include <functional>

namespace fabricctl {

// Runs fn(i) for every i in [0, n) on at most `max_threads` threads (at least one), each
// taking the next index as soon as it has finished one: no batches, so a slow call holds up
// only its own thread, and n calls of which at most max_threads are slow take about as long
// as the slowest. Returns once every call has returned. Calls run in no fixed order; fn must
// be safe to call from several threads at once. With n <= max_threads, one thread per call.
void ParallelFor(size_t n, size_t max_threads, const std::function<void(size_t)>& fn);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_PARALLEL_H_
