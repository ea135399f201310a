#include "probes/rdma/port_counters.h"

#include <filesystem>
#include <fstream>

#include "catch2/catch.hpp"
#include "tests/testing/testing.h"

namespace fabricctl::probes {
namespace {

// A fixture tree with one port's counters.
struct Port {
  std::string root;
  explicit Port(const std::string& name) {
    root = testing::TestPath(name);
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root + "/sys/class/infiniband/mlx5_0/ports/1/counters");
    std::filesystem::create_directories(root + "/sys/class/infiniband/mlx5_0/ports/1/hw_counters");
  }
  void Set(const std::string& file, uint64_t value) const {
    std::ofstream(root + "/sys/class/infiniband/mlx5_0/ports/1/" + file) << value << "\n";
  }
};

}  // namespace

TEST_CASE("a port's packets and retransmission events, as deltas around a probe") {
  Port port("counters");
  const SysfsRoot sysfs(port.root);
  port.Set("counters/port_xmit_packets", 1000);
  port.Set("hw_counters/roce_adp_retrans", 5);
  port.Set("hw_counters/local_ack_timeout_err", 1);
  port.Set("hw_counters/packet_seq_err", 2);
  port.Set("hw_counters/out_of_sequence",
           99);  // what this side received out of order: not its sends
  const auto before = ReadPortCounters(sysfs, "mlx5_0", 1);
  REQUIRE(before);
  CHECK(before->retransmits ==
        7u);  // the adaptive retransmissions and the NAKs; the timeouts are among the former
  port.Set("counters/port_xmit_packets", 201000);
  port.Set("hw_counters/roce_adp_retrans", 205);
  port.Set("hw_counters/local_ack_timeout_err", 9);
  port.Set("hw_counters/packet_seq_err", 12);
  const auto loss = LossBetween(before, ReadPortCounters(sysfs, "mlx5_0", 1));
  REQUIRE(loss);
  CHECK(loss->packets == 200000u);
  CHECK(loss->retransmits == 210u);
  // A driver without the adaptive counter: its ACK timeouts stand in.
  std::filesystem::remove(port.root +
                          "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/roce_adp_retrans");
  CHECK(ReadPortCounters(sysfs, "mlx5_0", 1)->retransmits == 21u);
}

TEST_CASE("no figure where the driver counts no retransmissions or a counter was reset") {
  Port port("no_counters");
  const SysfsRoot sysfs(port.root);
  CHECK_FALSE(ReadPortCounters(sysfs, "mlx5_0", 1));  // no port_xmit_packets
  port.Set("counters/port_xmit_packets", 1000);
  const auto bare = ReadPortCounters(sysfs, "mlx5_0", 1);
  REQUIRE(bare);
  CHECK_FALSE(bare->retransmits);
  CHECK_FALSE(LossBetween(bare, bare));  // soft-RoCE-like: nothing to compare
  port.Set("hw_counters/packet_seq_err", 10);
  const auto before = ReadPortCounters(sysfs, "mlx5_0", 1);
  port.Set("hw_counters/packet_seq_err", 3);  // reset meanwhile
  CHECK_FALSE(LossBetween(before, ReadPortCounters(sysfs, "mlx5_0", 1)));
  CHECK_FALSE(LossBetween(std::nullopt, before));
}

}  // namespace fabricctl::probes
