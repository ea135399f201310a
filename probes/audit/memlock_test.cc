// memlock on the fixture nodes, against the RoCE H100 expectations.
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

TEST_CASE("memlock: the planted fault produces exactly its finding") {
  CHECK(Findings("roce-h100-memlock", RoceH100()) == V{"memlock_too_low:"});
}

TEST_CASE("memlock: a node without RDMA, asked for none, is not judged on pinned memory") {
  SysfsRoot root(Fixtures() + "/no-rdma");
  AuditContext ctx{&root, v1::Expectations(), {}, "cpu1"};
  auto results = RunAudits(ctx, {"memlock"});
  REQUIRE(results.ok());
  CHECK((*results)[0].outcome() == v1::AUDIT_SKIPPED);
  CHECK((*results)[0].reason().find("nothing to pin") != std::string::npos);
  // A floor in the configuration is checked wherever it is set.
  v1::Expectations floor;
  floor.set_min_memlock_bytes(1ull << 40);
  AuditContext strict{&root, floor, {}, "cpu1"};
  auto checked = RunAudits(strict, {"memlock"});
  REQUIRE(checked.ok());
  CHECK((*checked)[0].outcome() == v1::AUDIT_RAN);
}

}  // namespace fabricctl::probes
