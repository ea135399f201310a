// pcie on the fixture nodes, against the RoCE H100 expectations.
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

TEST_CASE("pcie: the planted fault produces exactly its finding") {
  CHECK(Findings("roce-h100-pcie-x8", RoceH100()) == V{"pcie_degraded:mlx5_1"});
}

TEST_CASE("InfiniBand: every HCA and GPU observed") {
  SysfsRoot root(Fixtures() + "/infiniband-ndr");
  AuditContext ctx{&root, RoceH100(), {}, "ib1"};
  auto results = RunAudits(ctx, {"pcie"});
  REQUIRE(results.ok());
  CHECK((*results)[0].outcome() == v1::AUDIT_RAN);
  CHECK((*results)[0].observed_size() == 16);  // 8 HCAs and 8 GPUs
}

}  // namespace fabricctl::probes
