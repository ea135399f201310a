// qos on the fixture nodes: PFC from DCB netlink fixtures, ECN and trust from sysfs.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "probes/audit/audit.h"
#include "probes/audit/testing.h"

namespace fabricctl::probes {
using audit_testing::Findings;
using audit_testing::Fixtures;
using audit_testing::RoceH100;
using V = std::vector<std::string>;

TEST_CASE("qos: the planted fault produces exactly its finding") {
  CHECK(Findings("roce-h100-pfc-off", RoceH100()) == V{"pfc_misconfigured:mlx5_6"});
}

TEST_CASE("QoS: ECN and DSCP trust read from the driver's sysfs, PFC from DCB netlink") {
  const std::string node = Fixtures() + "/roce-h100-counters";  // a healthy copy to edit
  SysfsRoot root(node);
  AuditContext ctx{&root, RoceH100(), {}, "n1"};
  auto healthy = RunAudits(ctx, {"qos"});
  REQUIRE(healthy.ok());
  CHECK((*healthy)[0].findings_size() == 0);
  CHECK((*healthy)[0].observed().at("mlx5_0:1") == "PFC 3; ECN on; trust dscp");
  auto dir = root.ReadLink("/sys/class/net/ens1np0");
  REQUIRE(dir.ok());
  std::ofstream(node + "/sys/class/net/" + *dir + "/ecn/roce_np/enable/3") << "0\n";
  std::ofstream(node + "/sys/class/net/" + *dir + "/qos/trust") << "pcp\n";
  std::vector<std::string> kinds;
  auto broken = RunAudits(ctx, {"qos"});
  REQUIRE(broken.ok());
  for (const auto& f : (*broken)[0].findings()) kinds.push_back(f.kind() + ":" + f.device());
  CHECK(kinds == std::vector<std::string>{"ecn_disabled:mlx5_1", "dscp_trust_missing:mlx5_1"});
  // A driver without the ECN knobs: ECN is not judged (stock kernels), the rest still is.
  std::remove((node + "/sys/class/net/" + *dir + "/ecn/roce_np/enable/3").c_str());
  std::remove((node + "/sys/class/net/" + *dir + "/ecn/roce_rp/enable/3").c_str());
  auto partial = RunAudits(ctx, {"qos"});
  CHECK((*partial)[0].observed().at("mlx5_1:1") ==
        "PFC 3; ECN not exposed by this driver; trust pcp");
}

}  // namespace fabricctl::probes
