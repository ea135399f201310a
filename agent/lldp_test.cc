// lldpd itself is exercised by the fault matrix's LLDP lab (tests/fault_matrix_test.sh), where
// an lldpd per lab switch announces it and the agents learn their leaf; here, what an agent
// says where there is no lldpd to ask.
#include "agent/lldp.h"

#include <catch2/catch.hpp>

namespace fabricctl::agent {

TEST_CASE("No lldpd at the socket: unavailable, saying where it asked") {
  auto neighbors = ReadLldpNeighbors("/nonexistent/lldpd.socket");
  REQUIRE_FALSE(neighbors.ok());
  CHECK(neighbors.status().code() == absl::StatusCode::kFailedPrecondition);
  const std::string message(neighbors.status().message());
  // Without the library: it says lldpd is not installed; with it: the socket it could not reach.
  CHECK((message.find("/nonexistent/lldpd.socket") != std::string::npos ||
         message.find("lldpd is not installed") != std::string::npos));
}

}  // namespace fabricctl::agent
