#include "probes/common/sizes.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"

namespace fabricctl::probes {

absl::StatusOr<uint64_t> ParseSize(const std::string& text) {
  const std::string upper = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(text));
  absl::string_view s = upper;
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("size '", text, "' is not a number with an optional K, M or G"));
  };
  if (!absl::ConsumeSuffix(&s, "IB")) absl::ConsumeSuffix(&s, "B");
  uint64_t multiplier = 1;
  if (!s.empty()) {
    switch (s.back()) {
      case 'K':
        multiplier = 1ull << 10;
        break;
      case 'M':
        multiplier = 1ull << 20;
        break;
      case 'G':
        multiplier = 1ull << 30;
        break;
      default:
        break;
    }
    if (multiplier != 1) s.remove_suffix(1);
  }
  uint64_t value = 0;
  if (s.empty() || !absl::SimpleAtoi(s, &value) || s[0] == '-' || s[0] == '+') return bad();
  if (value > UINT64_MAX / multiplier) return bad();
  return value * multiplier;
}

absl::StatusOr<std::vector<uint64_t>> ParseSizeSweep(const std::string& spec, uint64_t max_bytes) {
  std::vector<uint64_t> sizes;
  auto check = [&](uint64_t size, const std::string& text) -> absl::Status {
    if (size == 0) {
      return absl::InvalidArgumentError(absl::StrCat("--sizes: size '", text, "' is zero"));
    }
    if (size > max_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--sizes: size '", text, "' is above the cap of ", FormatSize(max_bytes), " bytes"));
    }
    return absl::OkStatus();
  };
  if (absl::StripAsciiWhitespace(spec).empty()) {
    return absl::InvalidArgumentError("--sizes: empty");
  }
  if (spec.find(':') != std::string::npos) {
    std::vector<std::string> ends = absl::StrSplit(spec, ':');
    if (ends.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("--sizes: '", spec, "' is not MIN:MAX"));
    }
    uint64_t bounds[2];
    for (int i = 0; i < 2; ++i) {
      auto size = ParseSize(ends[i]);
      if (!size.ok())
        return absl::InvalidArgumentError(absl::StrCat("--sizes: ", size.status().message()));
      RETURN_IF_ERROR(check(*size, ends[i]));
      bounds[i] = *size;
    }
    if (bounds[0] > bounds[1]) {
      return absl::InvalidArgumentError(absl::StrCat("--sizes: '", spec, "' has MIN above MAX"));
    }
    for (uint64_t size = bounds[0]; size <= bounds[1]; size *= 2) {
      sizes.push_back(size);
      if (size > bounds[1] / 2) break;
    }
    return sizes;
  }
  for (absl::string_view part : absl::StrSplit(spec, ',')) {
    std::string text(part);
    auto size = ParseSize(text);
    if (!size.ok())
      return absl::InvalidArgumentError(absl::StrCat("--sizes: ", size.status().message()));
    RETURN_IF_ERROR(check(*size, text));
    sizes.push_back(*size);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::string FormatSize(uint64_t bytes) {
  if (bytes != 0 && bytes % (1ull << 30) == 0) return absl::StrCat(bytes >> 30, "G");
  if (bytes != 0 && bytes % (1ull << 20) == 0) return absl::StrCat(bytes >> 20, "M");
  if (bytes != 0 && bytes % (1ull << 10) == 0) return absl::StrCat(bytes >> 10, "K");
  return absl::StrCat(bytes);
}

}  // namespace fabricctl::probes
