#include "probes/common/table.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "probes/common/stats.h"

namespace fabricctl::probes {

const char kResultLine[] =
    "---------------------------------------------------------------------------------------\n";

namespace {

std::string Printf(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Printf(const char* format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return std::string(buffer, n < 0 ? 0 : std::min<size_t>(n, sizeof(buffer) - 1));
}

std::string Preamble(const std::string& title, const InfoLines& info) {
  std::string out = kResultLine + std::string(20, ' ') + title + "\n";
  for (const auto& [key, value] : info) out += Printf(" %-16s: %s\n", key.c_str(), value.c_str());
  return out + kResultLine;
}

}  // namespace

std::string FormatBwTable(const std::string& title, const InfoLines& info,
                          const std::vector<BwPoint>& points, BwUnit unit) {
  std::string out = Preamble(title, info);
  out +=
      unit == BwUnit::kGbps
          ? " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
          : " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n";
  for (const BwPoint& p : points) {
    double avg = unit == BwUnit::kGbps ? p.bw_avg_gbps : GbpsToMiBps(p.bw_avg_gbps);
    bool measured_peak = p.bw_peak_gbps.has_value();
    double peak = !measured_peak          ? 0
                  : unit == BwUnit::kGbps ? *p.bw_peak_gbps
                                          : GbpsToMiBps(*p.bw_peak_gbps);
    // perftest switches to six decimals when the average is below 0.1 Gb/s (REPORT_FMT_EXT).
    bool extended = unit == BwUnit::kGbps && avg < 0.1;
    std::string peak_text = !measured_peak ? "-      "
                            : extended     ? Printf("%-7.6lf", peak)
                                           : Printf("%-7.2lf", peak);
    if (extended) {
      out += Printf(" %-7" PRIu64 "    %" PRIu64
                    "           %s            %-7.6lf            %-7.6lf\n",
                    p.size_bytes, p.iterations, peak_text.c_str(), avg, p.msg_rate_mpps);
    } else {
      out +=
          Printf(" %-7" PRIu64 "    %-10" PRIu64 "       %s            %-7.2lf\t\t     %-7.6lf\n",
                 p.size_bytes, p.iterations, peak_text.c_str(), avg, p.msg_rate_mpps);
    }
  }
  return out + kResultLine;
}

std::string FormatLatTable(const std::string& title, const InfoLines& info,
                           const std::vector<LatPoint>& points) {
  std::string out = Preamble(title, info);
  out +=
      " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
      "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";
  for (const LatPoint& p : points) {
    out +=
        Printf(" %-7" PRIu64 " %" PRIu64
               "          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f "
               "\t\t%-7.2f\n",
               p.size_bytes, p.iterations, p.t_min_us, p.t_max_us, p.t_typical_us, p.t_avg_us,
               p.t_stdev_us, p.t_p99_us, p.t_p999_us);
  }
  return out + kResultLine;
}

std::string FormatFlows(const std::vector<Flow>& flows) {
  std::string out;
  for (size_t i = 0; i < flows.size(); ++i) {
    const Flow& f = flows[i];
    absl::StrAppend(&out, absl::StrFormat(" flow %-3zu %s %s > %s  %.3f Gb/s", i, f.protocol,
                                          f.source, f.destination, f.bw_gbps));
    if (!f.queue_pair.empty() && f.source.find(" qp ") == std::string::npos)
      absl::StrAppend(&out, "  [", f.queue_pair, "]");
    if (!f.hops.empty() || f.traced) {
      out += "  path:";
      for (const Hop& h : f.hops) {
        absl::StrAppend(&out, " ", h.address.empty() ? "*" : (h.name.empty() ? h.address : h.name));
      }
      if (f.traced) out += " >";
    }
    if (!f.trace_note.empty()) absl::StrAppend(&out, "  (", f.trace_note, ")");
    out += "\n";
  }
  if (!flows.empty()) absl::StrAppend(&out, kResultLine, "\n");
  return out;
}

}  // namespace fabricctl::probes
