// The audits together, and RunAudits: the table, the order and the names.
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

TEST_CASE("The healthy RoCE H100 node has no finding") {
  CHECK(Findings("roce-h100", RoceH100()).empty());
}

TEST_CASE("Named audits run in the order named") {
  SysfsRoot root(Fixtures() + "/infiniband-ndr");
  AuditContext ctx{&root, RoceH100(), {}, "ib1"};
  auto results = RunAudits(ctx, {"rdma_ports", "mtu", "pcie"});
  REQUIRE(results.ok());
  REQUIRE(results->size() == 3);
  CHECK((*results)[0].audit() == "rdma_ports");
  CHECK((*results)[1].audit() == "mtu");
  CHECK((*results)[2].audit() == "pcie");
}

TEST_CASE("Unknown audits are refused by name") {
  SysfsRoot root("/");
  AuditContext ctx{&root, {}, {}, "n"};
  auto results = RunAudits(ctx, {"pfc"});
  REQUIRE_FALSE(results.ok());
  CHECK(
      std::string(results.status().message()).rfind("unknown audit 'pfc' (known: rdma_ports", 0) ==
      0);
}

}  // namespace fabricctl::probes

namespace fabricctl::probes {

TEST_CASE("RDMA is expected where expect.* asks for it or an RDMA device is present") {
  SysfsRoot roce(audit_testing::Fixtures() + "/roce-h100");
  SysfsRoot none(audit_testing::Fixtures() + "/no-rdma");
  CHECK(RdmaExpectedBecause(roce, audit_testing::RoceH100()) == "expect.link_rate_gbps is set");
  CHECK(RdmaExpectedBecause(roce, v1::Expectations()).rfind("RDMA device mlx5_", 0) == 0);
  CHECK(RdmaExpectedBecause(none, v1::Expectations()).empty());
  v1::Expectations gdr;
  gdr.set_gpudirect(true);
  CHECK(RdmaExpectedBecause(none, gdr) == "expect.gpudirect is set");
}

}  // namespace fabricctl::probes
