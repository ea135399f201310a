#include "probes/audit/fec_stats.h"

#include <linux/ethtool_netlink.h>
#include <linux/netlink.h>
#include <net/if.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "probes/audit/ethtool_netlink.h"

namespace fabricctl::probes {
namespace {

// One attribute of the reply: its type without the NLA_F_* flags, where its payload lies.
struct Attribute {
  uint16_t type;
  size_t at;
  size_t length;
};

// The attributes in bytes [begin, end) of `b`, or InvalidArgument naming the first malformed
// one by its byte in `b`; `where` names the nest, empty at the top.
absl::StatusOr<std::vector<Attribute>> Split(const std::string& b, size_t begin, size_t end,
                                             const std::string& where) {
  const std::string reply = where.empty() ? "FEC reply" : "FEC reply (in " + where + ")";
  std::vector<Attribute> out;
  size_t at = begin;
  while (at < end) {
    if (end - at < NLA_HDRLEN) {
      return absl::InvalidArgumentError(absl::StrCat(reply, ": ", end - at, " bytes at byte ", at,
                                                     ", shorter than an attribute header"));
    }
    nlattr attr;
    std::memcpy(&attr, b.data() + at, sizeof(attr));
    if (attr.nla_len < NLA_HDRLEN) {
      return absl::InvalidArgumentError(absl::StrCat(reply, ": the attribute at byte ", at,
                                                     " claims ", attr.nla_len,
                                                     " bytes, less than its header"));
    }
    if (attr.nla_len > end - at) {
      return absl::InvalidArgumentError(absl::StrCat(reply, ": the attribute at byte ", at,
                                                     " claims ", attr.nla_len, " bytes where ",
                                                     end - at, " are left"));
    }
    out.push_back({static_cast<uint16_t>(attr.nla_type & NLA_TYPE_MASK), at + NLA_HDRLEN,
                   static_cast<size_t>(attr.nla_len - NLA_HDRLEN)});
    // An unpadded last attribute takes `at` past `end`, which ends the walk.
    at += NLA_ALIGN(attr.nla_len);
  }
  return out;
}

// The three counts of the ETHTOOL_A_FEC_STATS nest and where each goes.
struct Stat {
  uint16_t type;
  const char* name;
  std::optional<uint64_t> FecCounts::*count;
};
constexpr Stat kStats[] = {
    {ETHTOOL_A_FEC_STAT_CORRECTED, "ETHTOOL_A_FEC_STAT_CORRECTED", &FecCounts::corrected},
    {ETHTOOL_A_FEC_STAT_UNCORR, "ETHTOOL_A_FEC_STAT_UNCORR", &FecCounts::uncorrected},
    {ETHTOOL_A_FEC_STAT_CORR_BITS, "ETHTOOL_A_FEC_STAT_CORR_BITS", &FecCounts::corrected_bits},
};

// The total of an array of u64 (its first value; the lanes follow), none for an empty one.
absl::StatusOr<std::optional<uint64_t>> Total(const std::string& b, const Attribute& a,
                                              const char* name) {
  if (a.length % sizeof(uint64_t) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("FEC reply: ", name, " holds ", a.length, " bytes, not whole u64 values"));
  }
  if (a.length == 0) return std::optional<uint64_t>();
  uint64_t total;
  std::memcpy(&total, b.data() + a.at, sizeof(total));  // netlink is host-endian
  return std::optional<uint64_t>(total);
}

// `status` with the netdev and what was asked in front of its message, its code kept.
absl::Status Named(const std::string& ifname, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(ifname, ": FEC statistics: ", status.message()));
}

}  // namespace

absl::StatusOr<FecCounts> ParseFecReply(const std::string& attributes) {
  auto top = Split(attributes, 0, attributes.size(), "");
  if (!top.ok()) return top.status();
  FecCounts counts;
  for (const Attribute& a : *top) {
    if (a.type != ETHTOOL_A_FEC_STATS) continue;
    auto stats = Split(attributes, a.at, a.at + a.length, "ETHTOOL_A_FEC_STATS");
    if (!stats.ok()) return stats.status();
    for (const Attribute& s : *stats) {
      // Others are skipped: ETHTOOL_A_FEC_STAT_PAD, which aligns the arrays on some
      // architectures, and what newer kernels add (a histogram of corrected bits).
      for (const Stat& stat : kStats) {
        if (s.type != stat.type) continue;
        auto total = Total(attributes, s, stat.name);
        if (!total.ok()) return total.status();
        counts.*stat.count = *total;
      }
    }
  }
  return counts;
}

absl::StatusOr<FecCounts> ReadFecCounts(const std::string& ifname) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ) {
    return absl::InvalidArgumentError("FEC statistics: not a netdev name: '" + ifname + "'");
  }
  const GenlSocket netlink;
  const absl::StatusOr<uint16_t> family = netlink.EthtoolFamily();
  if (!family.ok()) return Named(ifname, family.status());
  std::string header;
  PutAttribute(&header, ETHTOOL_A_HEADER_DEV_NAME, ifname.c_str(), ifname.size() + 1);
  const uint32_t flags = ETHTOOL_FLAG_STATS;
  PutAttribute(&header, ETHTOOL_A_HEADER_FLAGS, &flags, sizeof(flags));
  std::string attributes;
  PutAttribute(&attributes, ETHTOOL_A_FEC_HEADER | NLA_F_NESTED, header.data(), header.size());
  auto reply = netlink.Ask(
      GenlRequest(*family, ETHTOOL_MSG_FEC_GET, ETHTOOL_GENL_VERSION, attributes), *family);
  if (!reply.ok()) return Named(ifname, reply.status());
  absl::StatusOr<FecCounts> counts = ParseFecReply(*reply);
  if (!counts.ok()) return Named(ifname, counts.status());
  // A driver with FEC but without get_fec_stats: the kernel sends the nest, every array empty.
  if (counts->empty()) {
    return absl::UnimplementedError(ifname + ": the driver counts no FEC blocks");
  }
  return counts;
}

}  // namespace fabricctl::probes
