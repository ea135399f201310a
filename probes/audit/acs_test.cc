// acs on the fixture nodes, against the RoCE H100 expectations.
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

TEST_CASE("acs: the planted fault produces exactly its finding") {
  CHECK(Findings("roce-h100-acs", RoceH100()) == V{"acs_enabled:0000:17:00.0"});
}

}  // namespace fabricctl::probes
