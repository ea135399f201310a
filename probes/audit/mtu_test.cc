// mtu on the fixture nodes, against the RoCE H100 expectations.
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

TEST_CASE("mtu: the planted fault produces exactly its finding") {
  CHECK(Findings("roce-h100-mtu-1500", RoceH100()) == V{"mtu_mismatch:mlx5_2"});
}

TEST_CASE("InfiniBand: MTU audit skipped (no netdev on the data path)") {
  SysfsRoot root(Fixtures() + "/infiniband-ndr");
  AuditContext ctx{&root, RoceH100(), {}, "ib1"};
  auto results = RunAudits(ctx, {"mtu"});
  REQUIRE(results.ok());
  CHECK((*results)[0].outcome() == v1::AUDIT_SKIPPED);
}

TEST_CASE("A node without RDMA: MTU audit skipped") {
  SysfsRoot root(Fixtures() + "/no-rdma");
  AuditContext ctx{&root, RoceH100(), {}, "cpu1"};
  auto results = RunAudits(ctx, {"mtu"});
  REQUIRE(results.ok());
  CHECK((*results)[0].outcome() == v1::AUDIT_SKIPPED);
  CHECK((*results)[0].reason().find("no RDMA device") != std::string::npos);
}

TEST_CASE("A garbage MTU fails the audit naming the port, and the other ports are still judged") {
  const std::string root_dir = fabricctl::testing::TempDir("garbage_mtu");
  REQUIRE(fabricctl::testing::RunCommand({"/bin/cp", "-r", Fixtures() + "/roce-h100/.", root_dir})
              .exit_code == 0);
  REQUIRE(fabricctl::testing::RunCommand({"/bin/sh", "-c",
                                          "printf 'abc\\n' > " + root_dir +
                                              "/sys/class/net/ens0np0/mtu && "
                                              "printf '1500\\n' > " +
                                              root_dir + "/sys/class/net/ens1np0/mtu"})
              .exit_code == 0);
  SysfsRoot root(root_dir);
  AuditContext ctx{&root, RoceH100(), {}, "n"};
  auto results = RunAudits(ctx, {"mtu"});
  REQUIRE(results.ok());
  const v1::AuditResult& r = (*results)[0];
  CHECK(r.outcome() == v1::AUDIT_FAILED);
  CHECK(r.reason().find("(ens0np0): 'abc' is not an MTU") != std::string::npos);
  REQUIRE(r.findings_size() == 1);
  CHECK(r.findings(0).kind() == "mtu_mismatch");
}

}  // namespace fabricctl::probes
