#include "probes/tcp/host_drops.h"

#include <filesystem>
#include <fstream>

#include "catch2/catch.hpp"
#include "tests/testing/testing.h"

namespace fabricctl::probes {
namespace {

// /proc/net/netstat as Linux 6.1 writes it (two groups; a few of TcpExt's many counters).
std::string Netstat(int backlog, int rcvq) {
  return "TcpExt: SyncookiesSent EmbryonicRsts PruneCalled RcvPruned OfoPruned TCPBacklogDrop "
         "TCPRcvQDrop TCPOFODrop TCPZeroWindowDrop TCPMinTTLDrop\n"
         "TcpExt: 0 0 3 1 0 " +
         std::to_string(backlog) + " " + std::to_string(rcvq) +
         " 0 0 9\n"
         "IpExt: InNoRoutes InTruncatedPkts InNoECTPkts\n"
         "IpExt: 0 0 123456\n";
}

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST_CASE("TcpExt's drop counters by name, and nothing else") {
  auto drops = ParseTcpExtDrops(Netstat(12, 4));
  CHECK(drops.at("TCPBacklogDrop") == 12);
  CHECK(drops.at("TCPRcvQDrop") == 4);
  CHECK(drops.at("RcvPruned") == 1);
  CHECK(drops.count("TCPMinTTLDrop") == 0);  // a filter's drop, not the host's load
  CHECK(drops.count("TCPOFODrop") == 0);     // a lossy link fills the out-of-order queue
  CHECK(drops.count("InNoECTPkts") == 0);
  // A header without its values, or values that do not line up, give nothing.
  CHECK(ParseTcpExtDrops("TcpExt: TCPBacklogDrop TCPRcvQDrop\nTcpExt: 5\n").empty());
  CHECK(ParseTcpExtDrops("TcpExt: TCPBacklogDrop\n").empty());
  CHECK(ParseTcpExtDrops("").empty());
}

TEST_CASE("softnet_stat's dropped column, summed over the CPUs, in hexadecimal") {
  const std::string two_cpus =
      "0000a1b2 00000010 00000003 00000000 00000000 00000000 00000000 00000000 00000000 "
      "00000000 00000000 00000000 00000000\n"
      "00001000 0000000f 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
      "00000000 00000000 00000000 00000001\n";
  CHECK(ParseSoftnetDropped(two_cpus) == 31u);
  CHECK(!ParseSoftnetDropped("").has_value());
  CHECK(!ParseSoftnetDropped("zz\n").has_value());
}

TEST_CASE("the host's drops over a run: what rose, counter by counter") {
  const std::string root = testing::TempDir("host_drops");
  Write(root + "/proc/net/netstat", Netstat(10, 0));
  Write(root + "/proc/net/softnet_stat", "00000001 00000002 00000000\n");
  Write(root + "/sys/class/net/eth0/statistics/rx_missed_errors", "7\n");
  Write(root + "/sys/class/net/eth0/statistics/rx_fifo_errors", "0\n");
  Write(root + "/sys/class/net/eth0/device/vendor", "0x15b3\n");            // a NIC
  Write(root + "/sys/class/net/veth0/statistics/rx_missed_errors", "0\n");  // not one
  const SysfsRoot sysfs(root);
  auto before = ReadHostDrops(sysfs);
  REQUIRE(before.has_value());
  CHECK(before->counters.count("eth0 rx_missed_errors") == 1);
  CHECK(before->counters.count("veth0 rx_missed_errors") == 0);
  Write(root + "/proc/net/netstat", Netstat(25, 2));
  Write(root + "/proc/net/softnet_stat", "00000001 00000005 00000000\n");
  Write(root + "/sys/class/net/eth0/statistics/rx_missed_errors", "9\n");
  auto after = ReadHostDrops(sysfs);
  REQUIRE(after.has_value());
  const HostDrops rose = DropsSince(*before, *after);
  CHECK(rose.Total() == 15 + 2 + 3 + 2);
  CHECK(rose.Describe() ==
        "TCPBacklogDrop +15, TCPRcvQDrop +2, eth0 rx_missed_errors +2, softnet_dropped +3");
  // A counter lower afterwards was reset: no rise, and never a wrap to a huge number.
  Write(root + "/proc/net/netstat", Netstat(1, 0));
  CHECK(DropsSince(*after, *ReadHostDrops(sysfs)).counters.at("TCPBacklogDrop") == 0);
  // Without /proc/net/netstat nothing is known.
  std::filesystem::remove(root + "/proc/net/netstat");
  CHECK(!ReadHostDrops(sysfs).has_value());
}

}  // namespace
}  // namespace fabricctl::probes
