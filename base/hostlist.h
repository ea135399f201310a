#ifndef FABRICCTL_BASE_HOSTLIST_H_
#define FABRICCTL_BASE_HOSTLIST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fabricctl {

// Expands a Slurm hostlist expression into host names, in order, duplicates removed:
// "node-[1-4,7]" -> node-1 node-2 node-3 node-4 node-7; "gpu[01-03]" keeps the zero padding
// (gpu01 gpu02 gpu03); "rack[1-2]-n[1-2]" expands every bracket (rack1-n1 rack1-n2 rack2-n1
// rack2-n2); "a,b[1-2],c" is a comma-separated list of such terms. Whitespace around terms is
// ignored. An empty expression, an empty term, an unbalanced bracket, a bad range or more than
// `max_hosts` names is an error naming what and where (`what` is the flag or variable).
absl::StatusOr<std::vector<std::string>> ExpandHostlist(const std::string& expression,
                                                        const std::string& what,
                                                        size_t max_hosts = 100000);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_HOSTLIST_H_
