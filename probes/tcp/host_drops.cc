#include "probes/tcp/host_drops.h"

#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fabricctl::probes {
namespace {

const std::set<std::string>& TcpExtDropCounters() {
  static const auto* names = new std::set<std::string>{
      "TCPBacklogDrop", "TCPRcvQDrop", "TCPZeroWindowDrop", "RcvPruned", "PFMemallocDrop"};
  return *names;
}

}  // namespace

uint64_t HostDrops::Total() const {
  uint64_t total = 0;
  for (const auto& [name, value] : counters) total += value;
  return total;
}

std::string HostDrops::Describe() const {
  std::vector<std::string> parts;
  for (const auto& [name, value] : counters) {
    if (value > 0) parts.push_back(absl::StrCat(name, " +", value));
  }
  return absl::StrJoin(parts, ", ");
}

std::map<std::string, uint64_t> ParseTcpExtDrops(const std::string& netstat) {
  std::map<std::string, uint64_t> out;
  const std::vector<absl::string_view> lines = absl::StrSplit(netstat, '\n');
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (!absl::StartsWith(lines[i], "TcpExt:") || !absl::StartsWith(lines[i + 1], "TcpExt:")) {
      continue;
    }
    const std::vector<absl::string_view> names =
        absl::StrSplit(lines[i], ' ', absl::SkipWhitespace());
    const std::vector<absl::string_view> values =
        absl::StrSplit(lines[i + 1], ' ', absl::SkipWhitespace());
    if (names.size() != values.size()) continue;
    for (size_t k = 1; k < names.size(); ++k) {
      uint64_t v = 0;
      const std::string name(names[k]);
      if (TcpExtDropCounters().count(name) && absl::SimpleAtoi(values[k], &v)) out[name] = v;
    }
    ++i;  // the values line is done
  }
  return out;
}

std::optional<uint64_t> ParseSoftnetDropped(const std::string& softnet_stat) {
  uint64_t sum = 0;
  bool any = false;
  for (absl::string_view line : absl::StrSplit(softnet_stat, '\n', absl::SkipEmpty())) {
    const std::vector<absl::string_view> columns =
        absl::StrSplit(line, ' ', absl::SkipWhitespace());
    uint32_t dropped = 0;
    if (columns.size() < 2 || !absl::SimpleHexAtoi(columns[1], &dropped)) continue;
    sum += dropped;
    any = true;
  }
  return any ? std::optional<uint64_t>(sum) : std::nullopt;
}

std::optional<HostDrops> ReadHostDrops(const SysfsRoot& root) {
  auto netstat = root.Read("/proc/net/netstat");
  if (!netstat.ok()) return std::nullopt;
  HostDrops drops;
  drops.counters = ParseTcpExtDrops(*netstat);
  if (auto softnet = root.Read("/proc/net/softnet_stat"); softnet.ok()) {
    if (auto dropped = ParseSoftnetDropped(*softnet)) drops.counters["softnet_dropped"] = *dropped;
  }
  if (auto netdevs = root.List("/sys/class/net"); netdevs.ok()) {
    for (const std::string& dev : *netdevs) {
      // The NICs' rings (a device behind them): a bridge's or a veth's count nothing of the host's.
      if (!root.Exists(absl::StrCat("/sys/class/net/", dev, "/device"))) continue;
      for (const char* counter : {"rx_missed_errors", "rx_fifo_errors"}) {
        auto text = root.ReadTrimmed(absl::StrCat("/sys/class/net/", dev, "/statistics/", counter));
        uint64_t v = 0;
        if (text.ok() && absl::SimpleAtoi(*text, &v))
          drops.counters[absl::StrCat(dev, " ", counter)] = v;
      }
    }
  }
  return drops;
}

HostDrops DropsSince(const HostDrops& before, const HostDrops& after) {
  HostDrops rose;
  for (const auto& [name, value] : after.counters) {
    auto it = before.counters.find(name);
    if (it == before.counters.end()) continue;
    rose.counters[name] = value > it->second ? value - it->second : 0;
  }
  return rose;
}

}  // namespace fabricctl::probes
