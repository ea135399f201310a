#include "base/ibnetdiscover.h"

#include <catch2/catch.hpp>

namespace fabricctl {

// The example topology file of rdma-core's ibnetdiscover manual
// (infiniband-diags/man/common/sec_topology-file.rst, linux-rdma/rdma-core), verbatim.
constexpr char kRdmaCoreManualExample[] = R"(#
# Topology file: generated on Tue Jun  5 14:15:10 2007
#
# Max of 3 hops discovered
# Initiated from node 0008f10403960558 port 0008f10403960559

Non-Chassis Nodes

vendid=0x8f1
devid=0x5a06
sysimgguid=0x5442ba00003000
switchguid=0x5442ba00003080(5442ba00003080)
Switch  24 "S-005442ba00003080"         # "ISR9024 Voltaire" base port 0 lid 6 lmc 0
[22]    "H-0008f10403961354"[1](8f10403961355)         # "MT23108 InfiniHost Mellanox Technologies" lid 4 4xSDR
[10]    "S-0008f10400410015"[1]         # "SW-6IB4 Voltaire" lid 3 4xSDR
[8]     "H-0008f10403960558"[2](8f1040396055a)         # "MT23108 InfiniHost Mellanox Technologies" lid 14 4xSDR
[6]     "S-0008f10400410015"[3]         # "SW-6IB4 Voltaire" lid 3 4xSDR
[12]    "H-0008f10403960558"[1](8f10403960559)         # "MT23108 InfiniHost Mellanox Technologies" lid 10 4xSDR

vendid=0x8f1
devid=0x5a05
switchguid=0x8f10400410015(8f10400410015)
Switch  8 "S-0008f10400410015"          # "SW-6IB4 Voltaire" base port 0 lid 3 lmc 0
[6]     "H-0008f10403960984"[1](8f10403960985)         # "MT23108 InfiniHost Mellanox Technologies" lid 16 4xSDR
[4]     "H-005442b100004900"[1](5442b100004901)        # "MT23108 InfiniHost Mellanox Technologies" lid 12 4xSDR
[1]     "S-005442ba00003080"[10]                # "ISR9024 Voltaire" lid 6 1xSDR
[3]     "S-005442ba00003080"[6]         # "ISR9024 Voltaire" lid 6 4xSDR

vendid=0x2c9
devid=0x5a44
caguid=0x8f10403960984
Ca      2 "H-0008f10403960984"          # "MT23108 InfiniHost Mellanox Technologies"
[1](8f10403960985)     "S-0008f10400410015"[6]         # lid 16 lmc 1 "SW-6IB4 Voltaire" lid 3 4xSDR

vendid=0x2c9
devid=0x5a44
caguid=0x5442b100004900
Ca      2 "H-005442b100004900"          # "MT23108 InfiniHost Mellanox Technologies"
[1](5442b100004901)     "S-0008f10400410015"[4]         # lid 12 lmc 1 "SW-6IB4 Voltaire" lid 3 4xSDR

vendid=0x2c9
devid=0x5a44
caguid=0x8f10403961354
Ca      2 "H-0008f10403961354"          # "MT23108 InfiniHost Mellanox Technologies"
[1](8f10403961355)     "S-005442ba00003080"[22]                # lid 4 lmc 1 "ISR9024 Voltaire" lid 6 4xSDR

vendid=0x2c9
devid=0x5a44
caguid=0x8f10403960558
Ca      2 "H-0008f10403960558"          # "MT23108 InfiniHost Mellanox Technologies"
[2](8f1040396055a)     "S-005442ba00003080"[8]         # lid 14 lmc 1 "ISR9024 Voltaire" lid 6 4xSDR
[1](8f10403960559)     "S-005442ba00003080"[12]                # lid 10 lmc 1 "ISR9024 Voltaire" lid 6 1xSDR
)";

TEST_CASE("ibnetdiscover: every CA port with the switch and switch port it is cabled to") {
  auto ports = ParseIbnetdiscover(kRdmaCoreManualExample, "fabric.topo");
  REQUIRE(ports.ok());
  REQUIRE(ports->size() == 5);
  const IbHostPort& first = (*ports)[0];
  CHECK(first.ca_guid == "0x0008f10403960984");
  CHECK(first.port == 1);
  CHECK(first.switch_guid == "0x0008f10400410015");
  CHECK(first.switch_name == "SW-6IB4 Voltaire");
  CHECK(first.switch_port == 6);
  CHECK(first.host == "MT23108");  // the first word of the NodeDescription
  const IbHostPort& last = (*ports)[4];
  CHECK(last.ca_guid == "0x0008f10403960558");
  CHECK(last.port == 1);
  CHECK(last.switch_name == "ISR9024 Voltaire");
  CHECK(last.switch_port == 12);
}

TEST_CASE("ibnetdiscover: hosts by their NodeDescription; repeated switch names get their GUID") {
  auto ports = ParseIbnetdiscover(R"(Switch 36 "S-0000000000000a01" # "leaf" base port 0 lid 1 lmc 0
Switch 36 "S-0000000000000a02" # "leaf" base port 0 lid 2 lmc 0
Ca	1 "H-00000000000000b1"		# "gpu001 mlx5_0"
[1](b2) 	"S-0000000000000a01"[7]		# lid 3 lmc 0 "leaf" lid 1 4xNDR
Ca	1 "H-00000000000000c1"		# "gpu002 mlx5_0"
[1](c2) 	"S-0000000000000a02"[9]		# lid 4 lmc 0 "leaf" lid 2 4xNDR
)",
                                  "t");
  REQUIRE(ports.ok());
  REQUIRE(ports->size() == 2);
  CHECK((*ports)[0].host == "gpu001");
  CHECK((*ports)[0].switch_name == "leaf (S-0000000000000a01)");
  CHECK((*ports)[1].switch_name == "leaf (S-0000000000000a02)");
}

TEST_CASE("ibnetdiscover: a line that does not parse names the file and line") {
  auto bad = ParseIbnetdiscover("\nCa 2 garbage\n", "fabric.topo");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "fabric.topo:2: a Ca line without a \"H-<guid>\"");
  auto link = ParseIbnetdiscover("Ca 1 \"H-01\" # \"h\"\n[1] nothing\n", "f");
  REQUIRE_FALSE(link.ok());
  CHECK(link.status().message() == "f:2: a CA port line without its peer");
}

}  // namespace fabricctl
