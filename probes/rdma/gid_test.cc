#include "probes/rdma/gid.h"

#include <catch2/catch.hpp>

namespace fabricctl::probes {
namespace {

GidEntry Entry(uint32_t index, std::array<uint8_t, 16> gid, GidType type) {
  return GidEntry{index, gid, type};
}

const std::array<uint8_t, 16> kLinkLocal = {0xfe, 0x80, 0,    0,    0,    0,    0,    0,
                                            0xba, 0x59, 0x9f, 0xff, 0xfe, 0x3e, 0x1a, 0x2b};
const std::array<uint8_t, 16> kIpv4 = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 1, 7};
const std::array<uint8_t, 16> kGlobalV6 = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
                                           0,    0,    0,    0,    0, 0, 0, 1};
const std::array<uint8_t, 16> kZero = {};

}  // namespace

TEST_CASE("The mlx5 layout picks index 3: IPv4, RoCE v2 (as perftest does)") {
  std::vector<GidEntry> table = {
      Entry(0, kLinkLocal, GidType::kRoceV1), Entry(1, kLinkLocal, GidType::kRoceV2),
      Entry(2, kIpv4, GidType::kRoceV1), Entry(3, kIpv4, GidType::kRoceV2),
      Entry(4, kZero, GidType::kRoceV2)};
  CHECK(PickGidIndex(table, false) == 3u);
}

TEST_CASE("IPv6 preference, link-local last, empty tables") {
  std::vector<GidEntry> table = {Entry(0, kLinkLocal, GidType::kRoceV2),
                                 Entry(1, kIpv4, GidType::kRoceV2),
                                 Entry(2, kGlobalV6, GidType::kRoceV2)};
  CHECK(PickGidIndex(table, true) == 2u);
  CHECK(PickGidIndex(table, false) == 1u);
  // InfiniBand: only the port GID, link-local, type IB.
  CHECK(PickGidIndex({Entry(0, kLinkLocal, GidType::kIb)}, false) == 0u);
  CHECK_FALSE(PickGidIndex({Entry(0, kZero, GidType::kRoceV2)}, false).has_value());
  CHECK_FALSE(PickGidIndex({}, false).has_value());
}

TEST_CASE("GIDs print as sysfs prints them") {
  CHECK(FormatGid(kLinkLocal) == "fe80:0000:0000:0000:ba59:9fff:fe3e:1a2b");
  CHECK(FormatGid(kIpv4) == "0000:0000:0000:0000:0000:ffff:0a00:0107");
}

}  // namespace fabricctl::probes
