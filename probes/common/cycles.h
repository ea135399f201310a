#ifndef FABRICCTL_PROBES_COMMON_CYCLES_H_
#define FABRICCTL_PROBES_COMMON_CYCLES_H_

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace fabricctl::probes {

// A cheap timestamp for tight measurement loops, as perftest's get_cycles(): the TSC on x86
// (invariant on every CPU this runs on), the monotonic clock in nanoseconds elsewhere. A
// clock_gettime per sample is cheap natively but not under emulation, where it can cost as
// much as the event measured.
inline uint64_t ReadCycles() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
#endif
}

// Converts cycle counts to nanoseconds with a rate measured over the span of the measurement
// itself (perftest reads the rate from /proc/cpuinfo instead, and warns when it disagrees).
class CycleClock {
 public:
  CycleClock() : start_cycles_(ReadCycles()), start_(std::chrono::steady_clock::now()) {}

  // Fixes the rate from the span since construction; call once the samples are taken.
  void Stop() {
    const uint64_t cycles = ReadCycles() - start_cycles_;
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start_).count();
    ns_per_cycle_ = cycles > 0 ? ns / static_cast<double>(cycles) : 1.0;
  }

  int64_t ToNanoseconds(uint64_t cycles) const {
    return static_cast<int64_t>(static_cast<double>(cycles) * ns_per_cycle_);
  }

 private:
  uint64_t start_cycles_;
  std::chrono::steady_clock::time_point start_;
  double ns_per_cycle_ = 1.0;
};

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COMMON_CYCLES_H_
