#ifndef FABRICCTL_BASE_PROCESS_METRICS_H_
#define FABRICCTL_BASE_PROCESS_METRICS_H_

#include <string>

namespace fabricctl {

// This process's standard Prometheus process metrics, as the official clients name them:
// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds, process_max_fds. Read from /proc/self (Linux);
// a figure that cannot be read is left out, never written as 0.
std::string RenderProcessMetrics();

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_PROCESS_METRICS_H_
