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

std::optional<PortCounters> ReadPortCounters(const SysfsRoot& sysfs, const std::string& device,
                                             uint32_t port) {
  const std::string dir = absl::StrCat("/sys/class/infiniband/", device, "/ports/", port);
  const auto packets = ReadCount(sysfs, dir + "/counters/port_xmit_packets");
  if (!packets) return std::nullopt;
  PortCounters c;
  c.xmit_packets = *packets;
  // RoCE's adaptive retransmission counts every retransmission where the driver has it; the
  // ACK timeouts count the same events, so they are taken only without it.
  auto count = [&](const char* name) {
    return ReadCount(sysfs, absl::StrCat(dir, "/hw_counters/", name));
  };
  if (const auto adaptive = count("roce_adp_retrans")) {
    c.retransmits = *adaptive;
  } else if (const auto timeouts = count("local_ack_timeout_err")) {
    c.retransmits = *timeouts;
  }
  if (const auto naks = count("packet_seq_err")) c.retransmits = c.retransmits.value_or(0) + *naks;
  return c;
}

std::optional<PortLoss> LossBetween(const std::optional<PortCounters>& before,
                                    const std::optional<PortCounters>& after) {
  if (!before || !after || !before->retransmits || !after->retransmits) return std::nullopt;
  if (after->xmit_packets < before->xmit_packets || *after->retransmits < *before->retransmits)
    return std::nullopt;
  return PortLoss{after->xmit_packets - before->xmit_packets,
                  *after->retransmits - *before->retransmits};
}

}  // namespace fabricctl::probes
