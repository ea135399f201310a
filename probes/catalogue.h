#ifndef FABRICCTL_PROBES_CATALOGUE_H_
#define FABRICCTL_PROBES_CATALOGUE_H_

#include <string>
#include <vector>

#include "proto/probe.pb.h"

namespace fabricctl::probes {

// What a pair probe is, apart from how it is done: the controller and the CLI plan and judge
// with this and never link the transports (libibverbs) to read a name. The implementations are
// in probes/table.h; table_test checks the two agree.
struct ProbeInfo {
  v1::ProbeKind kind;
  const char* name;         // on the command line and in reports: "tcp_bw"
  bool measures_bandwidth;  // bandwidth rows (else latency rows)
  bool rdma;                // over RDMA queue pairs (else TCP)
  const char* measures;     // one line for help texts and docs
};

// Every pair probe, in one table.
const std::vector<ProbeInfo>& ProbeCatalogue();

// nullptr when unknown.
const ProbeInfo* FindProbeInfo(const std::string& name);
const ProbeInfo* FindProbeInfo(v1::ProbeKind kind);

// True for the RDMA probes.
bool IsRdmaProbe(v1::ProbeKind kind);

// "rdma_write_bw, ..., tcp_lat" for help texts and errors.
std::string ProbeNames();

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_CATALOGUE_H_
