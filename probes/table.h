#ifndef FABRICCTL_PROBES_TABLE_H_
#define FABRICCTL_PROBES_TABLE_H_

#include <string>
#include <vector>

#include "probes/catalogue.h"  // ProbeNames, what each probe is
#include "probes/probe.h"

namespace fabricctl::probes {

// Every pair probe's implementation, in one explicit table (no static registration). Adding a
// probe touches this table, its own folder, the catalogue (probes/catalogue.cc) and the proto's
// ProbeKind.
const std::vector<const Probe*>& AllProbes();

// nullptr when unknown.
const Probe* FindProbe(const std::string& name);
const Probe* FindProbe(v1::ProbeKind kind);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_TABLE_H_
