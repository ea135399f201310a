#include "probes/gpu/nccl_log.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

namespace fabricctl::probes {
namespace {

NcclLog Load(const std::string& name) {
  std::ifstream in("tests/fixtures/nccl/" + name);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return ParseNcclLog(text.str());
}

std::vector<std::string> Kinds(const NcclLog& log) {
  std::vector<std::string> out;
  for (const auto& f : NcclLogFindings(log, "x.log")) out.push_back(f.kind());
  return out;
}

}  // namespace

TEST_CASE("IB with GPUDirect RDMA (2.30): no finding") {
  NcclLog log = Load("ib-gdr.log");
  CHECK(log.version == "2.30.7+cuda12.4");
  CHECK(log.host == "gpu-r01-n01");
  CHECK(log.network == "IB");
  CHECK(log.ib_devices == std::vector<std::string>{"mlx5_0:1/RoCE", "mlx5_1:1/RoCE",
                                                   "mlx5_2:1/RoCE", "mlx5_3:1/RoCE"});
  CHECK(log.net_channels == 4);
  CHECK(log.gdr_channels == 4);
  CHECK(log.ring_gdr == true);
  CHECK(log.channels.at("0[0] -> 1[1]") == "P2P/CUMEM/read");
  CHECK(Kinds(log).empty());
  v1::NcclTransport t = NcclTransportOf(log);
  CHECK(t.net() == "IB");
  CHECK(t.gpudirect_rdma());
}

TEST_CASE("IB with GPUDirect RDMA (2.18 format)") {
  NcclLog log = Load("ib-gdr-2.18.log");
  CHECK(log.version == "2.18.5+cuda12.2");
  CHECK(log.ib_devices == std::vector<std::string>{"mlx5_0:1/IB", "mlx5_1:1/IB"});
  CHECK(log.gdr_channels == 2);
  CHECK_FALSE(log.ring_gdr.has_value());  // "Connected all rings" without PXN/GDR before 2.25
  CHECK(Kinds(log).empty());
}

TEST_CASE("IB without GPUDirect: staged through host memory") {
  NcclLog log = Load("ib-no-gdr.log");
  REQUIRE(Kinds(log) == std::vector<std::string>{"gpudirect_unavailable"});
  auto f = NcclLogFindings(log, "rank3.log")[0];
  CHECK(f.node() == "gpu-r02-n03");
  CHECK(f.evidence().at("line").find("via NET/IB/0") != std::string::npos);
}

TEST_CASE("Socket fallback: tcp_fallback with the evidence line") {
  NcclLog log = Load("socket-fallback.log");
  CHECK(log.network == "Socket");
  CHECK(log.socket_channels == 2);
  REQUIRE(Kinds(log) == std::vector<std::string>{"tcp_fallback"});
  auto f = NcclLogFindings(log, "rank0.log")[0];
  CHECK(f.severity() == v1::SEVERITY_CRITICAL);
  CHECK(f.evidence().at("line") ==
        "gpu-r03-n02:9001:9042 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0");
  CHECK(f.detail().find("2 of 2 inter-node connections over TCP sockets") != std::string::npos);
}

TEST_CASE("An empty NET/IB device line before a socket fallback is not IB") {
  NcclLog log = Load("empty-ib-then-socket.log");
  CHECK(log.ib_no_device);
  CHECK(log.ib_devices.empty());  // "NET/IB : Using [RO]; OOB ..." names no device
  CHECK(log.network == "Socket");
  REQUIRE(Kinds(log) == std::vector<std::string>{"tcp_fallback"});
  CHECK(NcclLogFindings(log, "x.log")[0].detail().find("after NET/IB found no device") !=
        std::string::npos);
}

TEST_CASE("A single node's choice of sockets is critical only where RDMA is expected") {
  // The log of a one-node run: NCCL picked the Socket network, and no channel went between nodes.
  NcclLog log = Load("empty-ib-then-socket.log");
  REQUIRE(log.net_channels == 0);
  auto plain = NcclLogFindings(log, "x.log");
  REQUIRE(plain.size() == 1);
  CHECK(plain[0].severity() == v1::SEVERITY_WARNING);
  CHECK(plain[0].detail().find("this run sent nothing between nodes") != std::string::npos);
  CHECK(plain[0].detail().find("a warning: no RDMA is expected here") != std::string::npos);
  auto expected = NcclLogFindings(log, "x.log", {"RDMA device mlx5_0 is present"});
  REQUIRE(expected.size() == 1);
  CHECK(expected[0].severity() == v1::SEVERITY_CRITICAL);
  CHECK(expected[0].detail().find(
            "critical: RDMA is expected here (RDMA device mlx5_0 is present)") !=
        std::string::npos);
  // Sockets that carried traffic between nodes are critical whatever was expected.
  CHECK(NcclLogFindings(Load("socket-fallback.log"), "x.log")[0].severity() ==
        v1::SEVERITY_CRITICAL);
}

TEST_CASE("Mixed per-peer transports: the socket peers are the finding") {
  NcclLog log = Load("mixed.log");
  CHECK(log.net_channels == 4);
  CHECK(log.socket_channels == 2);
  CHECK(log.gdr_channels == 2);
  CHECK(Kinds(log) == std::vector<std::string>{"tcp_fallback"});
  CHECK(log.channels.at("2[2] -> 18[2] [send]") == "NET/Socket/1");
}

TEST_CASE("Text that is not an NCCL log yields nothing") {
  NcclLog log = ParseNcclLog("hello\nworld NCCL\n\x01\x02");
  CHECK(log.lines == 0);
  CHECK(Kinds(log).empty());
}

}  // namespace fabricctl::probes
