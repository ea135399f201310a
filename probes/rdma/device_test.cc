#include "probes/rdma/device.h"

#include <catch2/catch.hpp>

#include "tests/skip.h"

namespace fabricctl::probes {

TEST_CASE("Port rates follow the IBTA width and speed encodings") {
  CHECK(LaneSpeedGbps(128) * WidthLanes(2) == 400.0);   // 4X NDR
  CHECK(LaneSpeedGbps(64) * WidthLanes(2) == 200.0);    // 4X HDR
  CHECK(LaneSpeedGbps(32) * WidthLanes(1) == 25.0);     // 1X EDR (25GbE RoCE)
  CHECK(LaneSpeedGbps(128) * WidthLanes(16) == 200.0);  // 2X NDR
  CHECK(LaneSpeedGbps(4) * WidthLanes(2) == 40.0);      // 4X QDR
  CHECK(LaneSpeedGbps(3) == 0.0);                       // not an encoding
  CHECK(WidthLanes(3) == 0);
  CHECK(PortStateName(IBV_PORT_ACTIVE) == "ACTIVE");
  CHECK(PortStateName(IBV_PORT_DOWN) == "DOWN");
}

// Needs an RDMA device; this machine may have none, and then the listing must say why
// rather than return an empty success.
TEST_CASE("Listing devices either finds devices with ports or says why there are none") {
  auto devices = ListRdmaDevices(SysfsRoot("/"));
  if (!devices.ok()) {
    CHECK(absl::IsNotFound(devices.status()));
    CHECK_FALSE(devices.status().message().empty());
    FABRIC_SKIP("no RDMA device on this machine: " << devices.status().message());
  }
  REQUIRE_FALSE(devices->empty());
  for (const auto& device : *devices) {
    CHECK_FALSE(device.name.empty());
    CHECK(device.node_guid.size() == 16);
  }
}

}  // namespace fabricctl::probes
