#include "probes/audit/parsers.h"

#include <catch2/catch.hpp>
#include <limits>

namespace fabricctl::probes {

TEST_CASE("Port states and rates as sysfs writes them") {
  auto active = ParseNumberedState("4: ACTIVE\n");
  REQUIRE(active);
  CHECK(active->number == 4);
  CHECK(active->name == "ACTIVE");
  CHECK(ParseNumberedState("5: LinkUp")->name == "LinkUp");
  CHECK(ParseNumberedState("4: PortConfigurationTraining")->number == 4);
  CHECK_FALSE(ParseNumberedState("ACTIVE"));
  CHECK_FALSE(ParseNumberedState("x: ACTIVE"));
  CHECK_FALSE(ParseNumberedState("4:"));
  CHECK(*ParseRateGbps("400 Gb/sec (4X NDR)\n") == 400);
  CHECK(*ParseRateGbps("2.5 Gb/sec (1X SDR)") == 2.5);
  CHECK(*ParseRateGbps("40 Gb/sec (4X QDR)") == 40);
  CHECK_FALSE(ParseRateGbps("400 Mb/sec"));
  CHECK_FALSE(ParseRateGbps(""));
}

TEST_CASE("PCIe link speeds, old and new spellings") {
  CHECK(*ParsePcieSpeedGts("32.0 GT/s PCIe\n") == 32.0);
  CHECK(*ParsePcieSpeedGts("8 GT/s") == 8.0);
  CHECK(*ParsePcieSpeedGts("2.5 GT/s PCIe") == 2.5);
  CHECK_FALSE(ParsePcieSpeedGts("Unknown"));
  CHECK_FALSE(ParsePcieSpeedGts("32.0 Gb/s"));
}

TEST_CASE("ACS control from a config space's extended capabilities") {
  std::string config(4096, '\0');
  auto put32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) config[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  };
  // 0x100: AER (ID 0x0001), next at 0x148; 0x148: ACS (ID 0x000D), last.
  put32(0x100, 0x0001 | (1u << 16) | (0x148u << 20));
  put32(0x148, 0x000D | (1u << 16));
  config[0x148 + 6] = static_cast<char>(kAcsRequestRedirect | kAcsCompletionRedirect | 1);
  auto acs = ParseAcsControl(config);
  REQUIRE(acs);
  CHECK((*acs & kAcsRequestRedirect) != 0);
  CHECK((*acs & kAcsCompletionRedirect) != 0);
  CHECK_FALSE(ParseAcsControl(config.substr(0, 256)));  // what an unprivileged read returns
  put32(0x148, 0x0002);                                 // no ACS in the list
  CHECK_FALSE(ParseAcsControl(config));
  put32(0x100, 0x0001 | (0x100u << 20));  // a capability pointing at itself
  CHECK_FALSE(ParseAcsControl(config));
}

TEST_CASE("GIDs: 8 groups of 4 hex digits") {
  auto gid = ParseGid("0000:0000:0000:0000:0000:ffff:0a00:0107\n");
  REQUIRE(gid);
  CHECK(gid->size() == 16);
  CHECK((*gid)[10] == 0xff);
  CHECK((*gid)[12] == 10);
  CHECK((*gid)[15] == 7);
  CHECK_FALSE(ParseGid("fe80::1"));
  CHECK_FALSE(ParseGid("fe80:0000:0000:0000:ba59:9fff:fe3e:1a2g"));
}

TEST_CASE("memlock from /proc/self/limits") {
  const char* limits =
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max locked memory         8388608              8388608              bytes     \n";
  CHECK(*ParseMemlockLimit(limits) == 8388608);
  CHECK(*ParseMemlockLimit(
            "Max locked memory         unlimited            unlimited            bytes\n") ==
        std::numeric_limits<uint64_t>::max());
  CHECK_FALSE(ParseMemlockLimit("Max open files 1024 1024 files\n"));
}

TEST_CASE("The RoCE MTU the kernel derives from a netdev MTU") {
  CHECK(RoceMtuForNetdevMtu(9000) == 4096);
  CHECK(RoceMtuForNetdevMtu(4192) == 4096);
  CHECK(RoceMtuForNetdevMtu(4191) == 2048);
  CHECK(RoceMtuForNetdevMtu(1500) == 1024);
  CHECK(RoceMtuForNetdevMtu(300) == 0);
}

TEST_CASE("NCCL_IB_HCA and NCCL_SOCKET_IFNAME lists") {
  auto plain = ParseHcaList("mlx5_0:1,mlx5_1");
  CHECK(plain.devices == std::vector<std::string>{"mlx5_0", "mlx5_1"});
  CHECK_FALSE(plain.exclude);
  auto excluded = ParseHcaList("^mlx5_2");
  CHECK(excluded.exclude);
  CHECK(excluded.devices == std::vector<std::string>{"mlx5_2"});
  CHECK(ParseHcaList("=mlx5_0").exact);
}

}  // namespace fabricctl::probes
