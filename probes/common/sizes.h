#ifndef FABRICCTL_PROBES_COMMON_SIZES_H_
#define FABRICCTL_PROBES_COMMON_SIZES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fabricctl::probes {

// Parses one size: "64", "4K", "1M", "2G" (binary units, K = 1024; a trailing "B" or "iB" is
// allowed: "64KiB").
absl::StatusOr<uint64_t> ParseSize(const std::string& text);

// Parses a message-size sweep: "MIN:MAX" doubles from MIN up to MAX inclusive (perftest -a is
// "2:8M"), or a comma-separated list "4K,64K,1M". Sizes come out ascending and unique. Every size
// must be in [1, max_bytes]; errors name the offending size and the cap.
absl::StatusOr<std::vector<uint64_t>> ParseSizeSweep(const std::string& spec, uint64_t max_bytes);

// "64K", "1M", "2", the shortest exact binary-unit spelling.
std::string FormatSize(uint64_t bytes);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COMMON_SIZES_H_
