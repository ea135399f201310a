#include "probes/audit/dcb.h"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>

namespace fabricctl::probes {
namespace {

// Byte fixtures assembled as the kernel lays them out (host-endian netlink).
std::string Attribute(uint16_t type, const std::string& payload) {
  uint16_t length = static_cast<uint16_t>(4 + payload.size());
  std::string out(reinterpret_cast<const char*>(&length), 2);
  out.append(reinterpret_cast<const char*>(&type), 2);
  out += payload;
  out.resize((out.size() + 3) & ~size_t{3}, '\0');
  return out;
}

std::string Message(uint16_t type, const std::string& body) {
  uint32_t length = static_cast<uint32_t>(NLMSG_HDRLEN + body.size());
  uint16_t flags = 0;
  uint32_t seq = 1, pid = 0;
  std::string out(reinterpret_cast<const char*>(&length), 4);
  out.append(reinterpret_cast<const char*>(&type), 2);
  out.append(reinterpret_cast<const char*>(&flags), 2);
  out.append(reinterpret_cast<const char*>(&seq), 4);
  out.append(reinterpret_cast<const char*>(&pid), 4);
  return out + body;
}

std::string Reply(uint8_t pfc_en, bool with_apps) {
  std::string pfc(136, '\0');  // struct ieee_pfc
  pfc[0] = 8;
  pfc[1] = static_cast<char>(pfc_en);
  std::string ieee = Attribute(DCB_ATTR_IEEE_PFC, pfc);
  if (with_apps) {
    std::string app("\x05\x03\x1a\x00", 4);  // DSCP 26 -> priority 3
    ieee += Attribute(DCB_ATTR_IEEE_APP_TABLE | NLA_F_NESTED, Attribute(DCB_ATTR_IEEE_APP, app));
  }
  std::string dcbmsg("\0\x15\0\0", 4);  // AF_UNSPEC, DCB_CMD_IEEE_GET
  return Message(RTM_GETDCB, dcbmsg + Attribute(DCB_ATTR_IFNAME, std::string("ens0np0\0", 8)) +
                                 Attribute(DCB_ATTR_IEEE | NLA_F_NESTED, ieee));
}

}  // namespace

TEST_CASE("The request is one RTM_GETDCB message naming the netdev") {
  std::string request = BuildDcbIeeeGetRequest("ens0np0", 7);
  REQUIRE(request.size() == NLMSG_HDRLEN + 4 + 12);
  nlmsghdr header;
  std::memcpy(&header, request.data(), sizeof(header));
  CHECK(header.nlmsg_len == request.size());
  CHECK(header.nlmsg_type == RTM_GETDCB);
  CHECK(header.nlmsg_seq == 7);
  CHECK(request[NLMSG_HDRLEN + 1] == DCB_CMD_IEEE_GET);
  CHECK(request.substr(NLMSG_HDRLEN + 8, 8) == std::string("ens0np0\0", 8));
}

TEST_CASE("PFC bitmask and APP table from a reply") {
  auto dcb = ParseDcbIeeeReply(Reply(1 << 3, true));
  REQUIRE(dcb.ok());
  CHECK(dcb->has_pfc);
  CHECK(dcb->pfc_enabled == 0x08);
  REQUIRE(dcb->apps.size() == 1);
  CHECK(dcb->apps[0].selector == 5);
  CHECK(dcb->apps[0].priority == 3);
  CHECK(dcb->apps[0].protocol == 26);
  auto off = ParseDcbIeeeReply(Reply(0, false));
  REQUIRE(off.ok());
  CHECK(off->pfc_enabled == 0);
  CHECK(off->apps.empty());
}

TEST_CASE("Netlink errors and broken replies are errors, never reads past the end") {
  int32_t error = -EOPNOTSUPP;
  std::string body(reinterpret_cast<const char*>(&error), 4);
  body += std::string(16, '\0');  // the offending request's header
  auto unsupported = ParseDcbIeeeReply(Message(NLMSG_ERROR, body));
  CHECK(absl::IsUnimplemented(unsupported.status()));
  std::string good = Reply(8, true);
  for (size_t cut = 0; cut < good.size(); ++cut) {
    auto truncated = ParseDcbIeeeReply(good.substr(0, cut));
    if (truncated.ok()) CHECK(truncated->pfc_enabled <= 8);  // whatever survives is consistent
  }
  CHECK_FALSE(ParseDcbIeeeReply("").ok());
  std::string lying = good;
  uint32_t huge = 1 << 20;
  std::memcpy(lying.data(), &huge, 4);
  CHECK_FALSE(ParseDcbIeeeReply(lying).ok());
}

}  // namespace fabricctl::probes
