#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "probes/trace/names.h"
#include "probes/trace/path.h"
#include "probes/trace/roce.h"
#include "probes/trace/tcp.h"

namespace fabricctl::probes {

void TraceFlows(std::vector<Flow>& flows, const Cancellation* cancel,
                const std::string& interface) {
  constexpr absl::Duration kAllFlows = absl::Seconds(10);
  const absl::Time deadline = absl::Now() + kAllFlows;
  for (Flow& f : flows) {
    if (!f.trace_note.empty()) continue;
    TraceLimits limits;
    limits.total = std::min(limits.total, deadline - absl::Now());
    if (limits.total <= absl::ZeroDuration()) {
      f.trace_note = absl::StrCat("not traced: the flows' ", absl::FormatDuration(kAllFlows),
                                  " for tracing ran out");
      continue;
    }
    if (f.protocol == "roce") {
      TraceRoceFlow(f, limits, cancel, interface);
    } else {
      TraceTcpFlow(f, limits, cancel, interface);
    }
  }
  RouterNames().Name(flows);
}

}  // namespace fabricctl::probes
