#include "probes/table.h"

#include "probes/rdma/rdma_probes.h"
#include "probes/tcp/tcp_probes.h"

namespace fabricctl::probes {

const std::vector<const Probe*>& AllProbes() {
  static const RdmaBwProbe rdma_write_bw(RdmaVerb::kWrite);
  static const RdmaBwProbe rdma_send_bw(RdmaVerb::kSend);
  static const RdmaBwProbe rdma_read_bw(RdmaVerb::kRead);
  static const RdmaLatProbe rdma_write_lat(RdmaVerb::kWrite);
  static const RdmaLatProbe rdma_send_lat(RdmaVerb::kSend);
  static const TcpBwProbe tcp_bw;
  static const TcpLatProbe tcp_lat;
  static const std::vector<const Probe*> table = {&rdma_write_bw,  &rdma_send_bw,  &rdma_read_bw,
                                                  &rdma_write_lat, &rdma_send_lat, &tcp_bw,
                                                  &tcp_lat};
  return table;
}

const Probe* FindProbe(const std::string& name) {
  for (const Probe* probe : AllProbes()) {
    if (name == probe->name()) return probe;
  }
  return nullptr;
}

const Probe* FindProbe(v1::ProbeKind kind) {
  for (const Probe* probe : AllProbes()) {
    if (probe->kind() == kind) return probe;
  }
  return nullptr;
}

}  // namespace fabricctl::probes
