// rdma_ports on the fixture nodes, against the RoCE H100 expectations.
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

TEST_CASE("rdma_ports: each planted fault produces exactly its finding") {
  CHECK(Findings("roce-h100-port-down", RoceH100()) == V{"link_down:mlx5_3"});
  CHECK(Findings("roce-h100-half-rate", RoceH100()) == V{"link_rate_degraded:mlx5_5"});
}

TEST_CASE("Findings name the measured and the expected value") {
  SysfsRoot root(Fixtures() + "/roce-h100-half-rate");
  AuditContext ctx{&root, RoceH100(), {}, "n1"};
  auto results = RunAudits(ctx, {"rdma_ports"});
  REQUIRE(results.ok());
  REQUIRE(results->size() == 1);
  REQUIRE((*results)[0].findings_size() == 1);
  const auto& f = (*results)[0].findings(0);
  CHECK(f.detail() == "n1: mlx5_5:1 active at 200 Gb/s, expected 400 Gb/s");
  CHECK(f.severity() == v1::SEVERITY_CRITICAL);
  CHECK(f.port() == 1);
  CHECK(f.node() == "n1");
  CHECK((*results)[0].observed().at("mlx5_0:1") == "ACTIVE LinkUp 400 Gb/s RoCE ens0np0");
}

TEST_CASE("InfiniBand: ports checked") {
  SysfsRoot root(Fixtures() + "/infiniband-ndr");
  AuditContext ctx{&root, RoceH100(), {}, "ib1"};
  auto results = RunAudits(ctx, {"rdma_ports"});
  REQUIRE(results.ok());
  CHECK((*results)[0].outcome() == v1::AUDIT_RAN);
  CHECK((*results)[0].findings_size() == 0);
}

TEST_CASE("A node without RDMA: rdma_unavailable, no crash") {
  CHECK(Findings("no-rdma", RoceH100()) == V{"rdma_unavailable:"});
  SysfsRoot root(Fixtures() + "/no-rdma");
  // Without an RDMA expectation the absence is a warning, not a reason to drain.
  AuditContext relaxed{&root, v1::Expectations(), {}, "cpu1"};
  auto ports = RunAudits(relaxed, {"rdma_ports"});
  REQUIRE(ports.ok());
  CHECK((*ports)[0].findings(0).severity() == v1::SEVERITY_WARNING);
}

TEST_CASE("A device behind a symlink loop is named, not dropped") {
  const std::string root_dir = fabricctl::testing::TempDir("loop_sysfs");
  REQUIRE(fabricctl::testing::RunCommand({"/bin/cp", "-r", Fixtures() + "/roce-h100/.", root_dir})
              .exit_code == 0);
  const std::string link = root_dir + "/sys/class/infiniband/mlx5_3";
  REQUIRE(fabricctl::testing::RunCommand({"/bin/rm", link}).exit_code == 0);
  REQUIRE(fabricctl::testing::RunCommand({"/bin/ln", "-s", "mlx5_3", link}).exit_code == 0);
  SysfsRoot root(root_dir);
  AuditContext ctx{&root, RoceH100(), {}, "n"};
  auto results = RunAudits(ctx, {"rdma_ports"});
  REQUIRE(results.ok());
  const v1::AuditResult& r = (*results)[0];
  REQUIRE(r.findings_size() == 1);
  CHECK(r.findings(0).kind() == "rdma_unavailable");
  CHECK(r.findings(0).device() == "mlx5_3");
  CHECK(r.findings(0).detail().find("Too many levels of symbolic links") != std::string::npos);
  CHECK(r.observed().size() == 7);  // the seven other devices' ports are still checked
}

}  // namespace fabricctl::probes
