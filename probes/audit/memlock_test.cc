// memlock on the fixture nodes, against the RoCE H100 expectations.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

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

}  // namespace fabricctl::probes
