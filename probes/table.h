#ifndef FABRICCTL_PROBES_TABLE_H_
#define FABRICCTL_PROBES_TABLE_H_

#include <string>
#include <vector>

#include "probes/probe.h"

namespace fabricctl::probes {

// Every pair probe, in one explicit table (no static registration). Adding a probe touches
// this table, its own folder and the proto's ProbeKind.
const std::vector<const Probe*>& AllProbes();

// nullptr when unknown.
const Probe* FindProbe(const std::string& name);
const Probe* FindProbe(v1::ProbeKind kind);

// "tcp_bw, tcp_lat, ..." for help texts and errors.
std::string ProbeNames();

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_TABLE_H_
