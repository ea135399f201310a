#include "base/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fabricctl {
namespace {

void Gauge(std::string* out, const char* name, const char* type, const char* help, double value) {
  absl::StrAppendFormat(out, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name,
                        value);
}

// The fields of /proc/self/stat after the command name (which may hold spaces): field 3 (state)
// is [0].
std::vector<std::string> StatFields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  const auto close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

// The system's boot time (Unix seconds), from /proc/stat's btime; 0 when not found.
double BootTime() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double t = 0;
      in >> t;
      return t;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

}  // namespace

std::string RenderProcessMetrics() {
  std::string out;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const std::vector<std::string> f = StatFields();
  // utime (14), stime (15), starttime (22), vsize (23), rss (24) in proc(5)'s numbering.
  if (f.size() > 21 && ticks > 0) {
    const double cpu = (std::stod(f[11]) + std::stod(f[12])) / ticks;
    Gauge(&out, "process_cpu_seconds_total", "counter",
          "Total user and system CPU time spent in seconds.", cpu);
    Gauge(&out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
          std::stod(f[20]));
    Gauge(&out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
          std::stod(f[21]) * static_cast<double>(::sysconf(_SC_PAGESIZE)));
    if (const double boot = BootTime(); boot > 0) {
      Gauge(&out, "process_start_time_seconds", "gauge",
            "Start time of the process since unix epoch in seconds.",
            boot + std::stod(f[19]) / ticks);
    }
  }
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  if (!ec) Gauge(&out, "process_open_fds", "gauge", "Number of open file descriptors.", fds);
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    Gauge(&out, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
          static_cast<double>(limit.rlim_cur));
  }
  return out;
}

}  // namespace fabricctl
