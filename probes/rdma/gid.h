#ifndef FABRICCTL_PROBES_RDMA_GID_H_
#define FABRICCTL_PROBES_RDMA_GID_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabricctl::probes {

enum class GidType { kIb, kRoceV1, kRoceV2 };

struct GidEntry {
  uint32_t index = 0;
  std::array<uint8_t, 16> gid{};
  GidType type = GidType::kIb;
};

// perftest's automatic choice (get_best_gid_index, src/perftest_communication.c): each
// non-zero GID scores +100 when it is IPv4-mapped (::ffff:a.b.c.d; IPv6 when `prefer_ipv6`),
// +10 when not link-local (fe80::/10, 169.254/16), +2 for RoCE v2 and +1 for RoCE v1; the
// highest score wins, the lowest index on a tie. nullopt when every entry is zero.
std::optional<uint32_t> PickGidIndex(const std::vector<GidEntry>& entries, bool prefer_ipv6);

// "fe80:0000:0000:0000:ba59:9fff:fe3e:1a2b", as sysfs prints a GID.
std::string FormatGid(const std::array<uint8_t, 16>& gid);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_RDMA_GID_H_
