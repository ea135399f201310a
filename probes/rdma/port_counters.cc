#include "probes/rdma/port_counters.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fabricctl::probes {
namespace {

std::optional<uint64_t> ReadCount(const SysfsRoot& sysfs, const std::string& path) {
  auto text = sysfs.ReadTrimmed(path);
  uint64_t value = 0;
  if (!text.ok() || !absl::SimpleAtoi(*text, &value)) return std::nullopt;
  return value;
}

}  // namespace

std::optional<PortCounters> ReadPortCounters(const SysfsRoot& sysfs, const std::string& device, uint32_t port) {
  const std::string dir = absl::StrCat("/sys/class/infiniband/", device, "/ports/", port);
  const auto packets = ReadCount(sysfs, dir + "/counters/port_xmit_packets");
  if (!packets) return std::nullopt;
  PortCounters c;
  c.xmit_packets = *packets;
  for (const char* name : {"roce_adp_retrans", "local_ack_timeout_err", "packet_seq_err"}) {
    if (const auto n = ReadCount(sysfs, absl::StrCat(dir, "/hw_counters/", name))) {
      c.retransmits = c.retransmits.value_or(0) + *n;
    }
  }
  return c;
}

std::optional<PortLoss> LossBetween(const std::optional<PortCounters>& before, const std::optional<PortCounters>& after) {
  if (!before || !after || !before->retransmits || !after->retransmits) return std::nullopt;
  if (after->xmit_packets < before->xmit_packets || *after->retransmits < *before->retransmits) return std::nullopt;
  return PortLoss{after->xmit_packets - before->xmit_packets, *after->retransmits - *before->retransmits};
}

}  // namespace fabricctl::probes
