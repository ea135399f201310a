// counters on a fixture node whose counters the test changes during the window.
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

TEST_CASE("Counters: an error counter rising within the window is reported") {
  const std::string node = Fixtures() + "/roce-h100-counters";
  SysfsRoot root(node);
  AuditContext ctx{&root, RoceH100(), {}, "n1"};
  CHECK((*RunAudits(ctx, {"counters"}))[0].outcome() == v1::AUDIT_SKIPPED);  // no window
  ctx.counter_window = absl::Seconds(5);
  int waits = 0;
  ctx.wait = [&](absl::Duration d) {
    ++waits;
    CHECK(d == absl::Seconds(5));
    // The link takes 12 symbol errors while we wait.
    auto dir = root.ReadLink("/sys/class/infiniband/mlx5_4");
    REQUIRE(dir.ok());
    std::ofstream(node + "/sys/class/infiniband/" + *dir + "/ports/1/counters/symbol_error")
        << "12\n";
  };
  auto results = RunAudits(ctx, {"counters"});
  REQUIRE(results.ok());
  CHECK(waits == 1);
  REQUIRE((*results)[0].findings_size() == 1);
  const auto& f = (*results)[0].findings(0);
  CHECK(f.kind() == "counter_errors");
  CHECK(f.device() == "mlx5_4");
  CHECK(f.severity() == v1::SEVERITY_WARNING);
  CHECK(f.detail() == "n1: mlx5_4:1 symbol_error rose by 12 in 5s, expected at most 0");
}

}  // namespace fabricctl::probes
