#include "probes/catalogue.h"

#include "absl/strings/str_join.h"

namespace fabricctl::probes {

const std::vector<ProbeInfo>& ProbeCatalogue() {
  static const std::vector<ProbeInfo>* const catalogue = new std::vector<ProbeInfo>{
      {v1::RDMA_WRITE_BW, "rdma_write_bw", true, true, "RDMA WRITE bandwidth (ib_write_bw)"},
      {v1::RDMA_SEND_BW, "rdma_send_bw", true, true, "RDMA SEND bandwidth (ib_send_bw)"},
      {v1::RDMA_READ_BW, "rdma_read_bw", true, true, "RDMA READ bandwidth (ib_read_bw)"},
      {v1::RDMA_WRITE_LAT, "rdma_write_lat", false, true, "RDMA WRITE latency (ib_write_lat)"},
      {v1::RDMA_SEND_LAT, "rdma_send_lat", false, true, "RDMA SEND latency (ib_send_lat)"},
      {v1::TCP_BW, "tcp_bw", true, false, "TCP bandwidth (iperf3)"},
      {v1::TCP_LAT, "tcp_lat", false, false, "TCP ping-pong latency (sockperf)"},
  };
  return *catalogue;
}

const ProbeInfo* FindProbeInfo(const std::string& name) {
  for (const ProbeInfo& p : ProbeCatalogue()) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

const ProbeInfo* FindProbeInfo(v1::ProbeKind kind) {
  for (const ProbeInfo& p : ProbeCatalogue()) {
    if (p.kind == kind) return &p;
  }
  return nullptr;
}

bool IsRdmaProbe(v1::ProbeKind kind) {
  const ProbeInfo* p = FindProbeInfo(kind);
  return p != nullptr && p->rdma;
}

std::string ProbeNames() {
  std::vector<std::string> names;
  for (const ProbeInfo& p : ProbeCatalogue()) names.push_back(p.name);
  return absl::StrJoin(names, ", ");
}

}  // namespace fabricctl::probes
