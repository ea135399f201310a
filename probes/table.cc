#include "probes/table.h"

#include "absl/strings/str_join.h"
#include "probes/tcp/tcp_probes.h"

namespace fabricctl::probes {

const std::vector<const Probe*>& AllProbes() {
  static const TcpBwProbe tcp_bw;
  static const TcpLatProbe tcp_lat;
  static const std::vector<const Probe*> table = {&tcp_bw, &tcp_lat};
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

std::string ProbeNames() {
  std::vector<std::string> names;
  for (const Probe* probe : AllProbes()) names.push_back(probe->name());
  return absl::StrJoin(names, ", ");
}

}  // namespace fabricctl::probes
