// affinity on the fixture nodes, against the RoCE H100 expectations.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "probes/audit/audit.h"
#include "probes/audit/testing.h"

namespace fabricctl::probes {
using audit_testing::Findings;
using audit_testing::Fixtures;
using audit_testing::RoceH100;
using V = std::vector<std::string>;

TEST_CASE("affinity: the planted fault produces exactly its finding") {
  CHECK(Findings("roce-h100-numa", RoceH100()) == V{"numa_misaffinity:mlx5_2"});
}

TEST_CASE("GPU-NIC affinity: each GPU with the NIC on its own PCIe switch") {
  SysfsRoot root(Fixtures() + "/roce-h100");
  AuditContext ctx{&root, RoceH100(), {}, "n1"};
  auto results = RunAudits(ctx, {"affinity"});
  REQUIRE(results.ok());
  const auto& observed = (*results)[0].observed();
  REQUIRE(observed.size() == 8);
  CHECK(observed.at("GPU 0000:19:00.0") == "mlx5_0 PIX (NUMA 0/0)");
  CHECK(observed.at("GPU 0000:de:00.0") == "mlx5_7 PIX (NUMA 1/1)");

  SysfsRoot moved(Fixtures() + "/roce-h100-numa");
  AuditContext moved_ctx{&moved, RoceH100(), {}, "n2"};
  auto misaffine = RunAudits(moved_ctx, {"affinity"});
  REQUIRE(misaffine.ok());
  REQUIRE((*misaffine)[0].findings_size() == 1);
  CHECK((*misaffine)[0].findings(0).detail().find(
            "GPU 0000:4c:00.0 (NUMA node 0) is left with mlx5_2 (NUMA node 1), path SYS") !=
        std::string::npos);
}

}  // namespace fabricctl::probes
