#include "probes/rdma/gid.h"

#include <algorithm>
#include <cstdio>

namespace fabricctl::probes {
namespace {

bool IsZero(const std::array<uint8_t, 16>& gid) {
  return std::all_of(gid.begin(), gid.end(), [](uint8_t b) { return b == 0; });
}

bool IsIpv4Mapped(const std::array<uint8_t, 16>& gid) {
  return std::all_of(gid.begin(), gid.begin() + 10, [](uint8_t b) { return b == 0; }) &&
         gid[10] == 0xff && gid[11] == 0xff;
}

bool IsLinkLocal(const std::array<uint8_t, 16>& gid) {
  if (IsIpv4Mapped(gid)) return gid[12] == 169 && gid[13] == 254;
  return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80;
}

}  // namespace

std::optional<uint32_t> PickGidIndex(const std::vector<GidEntry>& entries, bool prefer_ipv6) {
  std::optional<uint32_t> best;
  int best_score = -1;
  for (const GidEntry& e : entries) {
    if (IsZero(e.gid)) continue;
    int score = 0;
    if (IsIpv4Mapped(e.gid) != prefer_ipv6) score += 100;
    if (!IsLinkLocal(e.gid)) score += 10;
    if (e.type == GidType::kRoceV2) score += 2;
    if (e.type == GidType::kRoceV1) score += 1;
    if (score > best_score || (score == best_score && best && e.index < *best)) {
      best_score = score;
      best = e.index;
    }
  }
  return best;
}

std::string FormatGid(const std::array<uint8_t, 16>& gid) {
  char text[40];
  std::snprintf(text, sizeof(text),
                "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", gid[0],
                gid[1], gid[2], gid[3], gid[4], gid[5], gid[6], gid[7], gid[8], gid[9], gid[10],
                gid[11], gid[12], gid[13], gid[14], gid[15]);
  return text;
}

}  // namespace fabricctl::probes
