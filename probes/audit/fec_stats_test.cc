// The FEC reply parser over replies laid out as the kernel's net/ethtool/fec.c writes them, and
// the live read of a device without FEC.
#include "probes/audit/fec_stats.h"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/netlink.h>

#include <catch2/catch.hpp>
#include <initializer_list>
#include <string>

#include "probes/audit/ethtool_netlink.h"
#include "tests/skip.h"

namespace fabricctl::probes {
namespace {

std::string U32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), sizeof(v)); }

std::string U64s(std::initializer_list<uint64_t> values) {
  std::string out;
  for (uint64_t v : values) out.append(reinterpret_cast<const char*>(&v), sizeof(v));
  return out;
}

std::string Attr(uint16_t type, const std::string& payload) {
  std::string out;
  PutAttribute(&out, type, payload.data(), payload.size());
  return out;
}

// The attributes of an ETHTOOL_MSG_FEC_GET_REPLY for eth0 (RS-FEC active), with `stats` as the
// ETHTOOL_A_FEC_STATS nest's payload, or no nest when it is empty.
std::string Reply(const std::string& stats) {
  std::string reply = Attr(ETHTOOL_A_FEC_HEADER | NLA_F_NESTED,
                           Attr(ETHTOOL_A_HEADER_DEV_INDEX, U32(2)) +
                               Attr(ETHTOOL_A_HEADER_DEV_NAME, std::string("eth0\0", 5))) +
                      Attr(ETHTOOL_A_FEC_AUTO, std::string(1, '\0')) +
                      Attr(ETHTOOL_A_FEC_ACTIVE, U32(ETHTOOL_LINK_MODE_FEC_RS_BIT));
  if (!stats.empty()) reply += Attr(ETHTOOL_A_FEC_STATS | NLA_F_NESTED, stats);
  return reply;
}

// The three arrays of a driver that counts blocks per lane on a 2-lane link, bits not at all.
std::string TwoLanes() {
  return Attr(ETHTOOL_A_FEC_STAT_PAD, "") +
         Attr(ETHTOOL_A_FEC_STAT_CORRECTED, U64s({1500, 1000, 500})) +
         Attr(ETHTOOL_A_FEC_STAT_UNCORR, U64s({7, 3, 4})) + Attr(ETHTOOL_A_FEC_STAT_CORR_BITS, "");
}

bool Mentions(const absl::Status& status, const std::string& text) {
  return status.message().find(text) != absl::string_view::npos;
}

}  // namespace

TEST_CASE("FEC counts: the total of each array, the lanes after it read past") {
  auto counts = ParseFecReply(Reply(TwoLanes()));
  INFO(counts.status());
  REQUIRE(counts.ok());
  REQUIRE(counts->corrected.has_value());
  CHECK(*counts->corrected == uint64_t{1500});
  REQUIRE(counts->uncorrected.has_value());
  CHECK(*counts->uncorrected == uint64_t{7});
  CHECK_FALSE(counts->corrected_bits.has_value());  // an empty array: not counted, not 0
  CHECK_FALSE(counts->empty());
}

TEST_CASE("a reply without statistics, or with empty arrays, gives no counts") {
  auto none = ParseFecReply(Reply(""));
  REQUIRE(none.ok());
  CHECK(none->empty());
  // A driver with FEC but without get_fec_stats: the nest is there, every array empty.
  auto empty = ParseFecReply(Reply(Attr(ETHTOOL_A_FEC_STAT_CORRECTED, "") +
                                   Attr(ETHTOOL_A_FEC_STAT_UNCORR, "") +
                                   Attr(ETHTOOL_A_FEC_STAT_CORR_BITS, "")));
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  auto nothing = ParseFecReply("");
  REQUIRE(nothing.ok());
  CHECK(nothing->empty());
}

TEST_CASE("a malformed FEC reply is an error naming what is wrong, never a read past its end") {
  const std::string whole = Reply(TwoLanes());
  // Cut anywhere: counts (cut between attributes) or InvalidArgument, nothing else.
  for (size_t n = 0; n < whole.size(); ++n) {
    auto cut = ParseFecReply(whole.substr(0, n));
    INFO(n << " of " << whole.size() << " bytes: " << cut.status());
    CHECK((cut.ok() || absl::IsInvalidArgument(cut.status())));
  }
  // The nest, last in the reply, cut by one lane's value.
  auto truncated = ParseFecReply(whole.substr(0, whole.size() - 8));
  REQUIRE(absl::IsInvalidArgument(truncated.status()));
  CHECK(std::string(truncated.status().message()) ==
        "FEC reply: the attribute at byte 40 claims 68 bytes where 60 are left");

  auto ragged = ParseFecReply(Reply(Attr(ETHTOOL_A_FEC_STAT_UNCORR, std::string(12, '\1'))));
  REQUIRE(absl::IsInvalidArgument(ragged.status()));
  CHECK(Mentions(ragged.status(), "ETHTOOL_A_FEC_STAT_UNCORR holds 12 bytes"));

  // An attribute in the nest that claims less than its own header.
  auto short_header = ParseFecReply(Reply(std::string("\x02\x00\x03\x00", 4)));
  REQUIRE(absl::IsInvalidArgument(short_header.status()));
  CHECK(std::string(short_header.status().message()) ==
        "FEC reply (in ETHTOOL_A_FEC_STATS): the attribute at byte 44 claims 2 bytes, less than "
        "its header");

  auto trailing = ParseFecReply(whole + std::string(2, '\0'));
  REQUIRE(absl::IsInvalidArgument(trailing.status()));
  CHECK(Mentions(trailing.status(), "shorter than an attribute header"));
}

TEST_CASE("the loopback device has no FEC: Unimplemented, asked of this machine's kernel") {
  CHECK(absl::IsInvalidArgument(ReadFecCounts("").status()));
  auto lo = ReadFecCounts("lo");
  if (absl::IsUnavailable(lo.status()) || absl::IsDeadlineExceeded(lo.status())) {
    FABRIC_SKIP("no ethtool netlink here: " << lo.status().message());
  }
  INFO(lo.status());
  CHECK(absl::IsUnimplemented(lo.status()));
  CHECK(Mentions(lo.status(), "lo: FEC statistics"));
  // A netdev that does not exist: NotFound (ENODEV), or Unimplemented on a kernel without FEC_GET.
  auto none = ReadFecCounts("fabricnone0");
  INFO(none.status());
  CHECK((absl::IsNotFound(none.status()) || absl::IsUnimplemented(none.status())));
}

}  // namespace fabricctl::probes
